"""The documentation site as the README promises it: opened from `site/index.html` over `file://`.

Builds the site once (`mkdocs build --strict`, as `make docs` does, into a temporary folder) and
reads the HTML: over `file://` a link to a folder shows a directory listing, so every link must
name a file that exists; search must not need a server or the network; and the API reference
must show only the package's own names, with no path of the machine that built it.
"""

import html.parser
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import mkdocs  # noqa: F401  (the site's builder: without it this module is not collected)
import pytest

REPOSITORY = Path(__file__).resolve().parents[1]


class _Links(html.parser.HTMLParser):
    """Every `href` and `src` of a page, and the `id` of every heading."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.heading_ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.links += [value for name, value in attrs if name in ("href", "src") and value]
        if re.fullmatch(r"h[1-6]", tag) and values.get("id"):
            self.heading_ids.append(str(values["id"]))


def parsed(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text())
    return parser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(built)],
        cwd=REPOSITORY,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent)},
        check=True,
        capture_output=True,
        timeout=600,
    )
    return built


def pages(site: Path) -> list[Path]:
    """Every page a reader opens; `404.html` is a web server's page, with absolute links."""
    return sorted(page for page in site.rglob("*.html") if page.name != "404.html")


def test_every_link_opens_a_file_over_file_urls(site: Path) -> None:
    broken = []
    for page in pages(site):
        for link in parsed(page).links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith(("#", "//")) or not parts.path:
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            if not target.is_file():
                broken.append(f"{page.relative_to(site)} -> {link}")
    assert not broken, "links that open no file over file:// (a folder shows a listing):\n" + (
        "\n".join(broken[:20])
    )


def test_search_works_without_a_server_or_the_network(site: Path) -> None:
    index = site / "search" / "search_index.js"
    assert index.read_text().startswith("var __index = {")  # inlined: no fetch of the JSON
    for page in pages(site):
        external = [link for link in parsed(page).links if link.startswith(("http://", "https://"))]
        scripts = re.findall(r'<script[^>]+src="([^"]+)"', page.read_text())
        assert not [s for s in scripts if urlsplit(s).scheme], f"{page}: a script from the web"
        assert all(not link.endswith(".js") for link in external), page
    worker_shim = site / "assets" / "javascripts" / "iframe-worker" / "shim.js"
    assert worker_shim.is_file()  # the search worker's file:// shim, from this checkout
    assert 'src="assets/javascripts/iframe-worker/shim.js"' in (site / "index.html").read_text()


def test_the_api_reference_lists_only_the_package_names_and_no_build_path(site: Path) -> None:
    reference = sorted((site / "reference").glob("*.html"))
    assert {page.stem for page in reference} >= {"dagster_dataframely", "errors", "testing"}
    for page in reference:
        text = page.read_text()
        private = [i for i in parsed(page).heading_ids if i.rsplit(".", 1)[-1].startswith("_")]
        assert not private, f"{page.name} documents {private}"
        for leak in ("__file__", "__cached__", "__weakref__", "__module__", str(REPOSITORY)):
            assert leak not in text, f"{page.name} shows {leak!r}"
        assert "site-packages" not in text, page.name
    components = (site / "reference" / "dagster_dataframely.html").read_text()
    assert 'id="dagster_dataframely.TableChecksComponent"' in components
