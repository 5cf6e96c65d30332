"""The pictures of the docs: each one a page shows, and each readable at the page's width.

A screenshot of the Dagster UI scaled down to the content column loses its text, so every
picture is at most `MAX_WIDTH` pixels wide: the site's widened page (`extra.css`, 90rem) shows
it at nearly its own size on a desktop screen. `make screenshots` takes them at such widths.
"""

import re
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
MAX_WIDTH = 1600


def _width(png: Path) -> int:
    """A PNG's width in pixels, from its IHDR chunk."""
    header = png.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", png
    width: int = struct.unpack(">I", header[16:20])[0]
    return width


def test_every_picture_is_narrow_enough_to_read_on_the_page() -> None:
    wide = {png.name: _width(png) for png in IMAGES.glob("*.png") if _width(png) > MAX_WIDTH}
    assert not wide, f"wider than {MAX_WIDTH} px, unreadable at the page's width: {wide}"
    css = (ROOT / "docs" / "assets" / "stylesheets" / "extra.css").read_text()
    assert re.search(r"\.md-grid\s*\{\s*max-width:\s*90rem", css)


def test_every_picture_is_shown_on_a_page() -> None:
    pages = "\n".join(page.read_text() for page in (ROOT / "docs").rglob("*.md"))
    unused = sorted(png.name for png in IMAGES.glob("*.png") if f"images/{png.name}" not in pages)
    assert not unused, f"pictures no page shows: {unused}"
