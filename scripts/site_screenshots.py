"""`site_screenshots.py`: open the built docs site over `file://` in a browser and photograph it.

What a reader does after `make docs`: open `site/index.html`, follow a navigation link, search.
Runs Debian's chromium (`apt-get install chromium`) with Playwright from `.venv-screenshots`,
fails when a link shows a directory listing or the search finds nothing, and writes the pictures
to a folder (by default a temporary one) for a person to look at. Not part of CI.

Usage: python scripts/site_screenshots.py [--site site] [--out DIR]
"""

import argparse
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
QUERY = "quarantine"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "site")
    parser.add_argument("--out", type=Path, default=None)
    arguments = parser.parse_args()
    index = (arguments.site / "index.html").resolve()
    if not index.is_file():
        sys.exit(f"site-screenshots: {index} is missing; run `make docs` first")
    out = arguments.out or Path(tempfile.mkdtemp(prefix="docs-site-"))
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(index.as_uri())
        page.screenshot(path=out / "home.png")

        page.get_by_role("link", name="Launching runs").first.click()
        page.wait_for_load_state()
        if not page.url.endswith("launching.html") or "Index of" in page.title():
            sys.exit(f"site-screenshots: the navigation opened {page.url} ({page.title()!r})")
        page.screenshot(path=out / "navigation.png")

        page.locator(".md-search__input").first.click()
        page.keyboard.type(QUERY)
        summary = page.locator(".md-search-result__meta", has_text="matching")
        summary.wait_for(timeout=60_000)
        page.screenshot(path=out / "search.png")
        found = summary.inner_text()
        browser.close()
    print(f"site-screenshots: {index.as_uri()}: navigation opened {page.url}")
    print(f"site-screenshots: searching {QUERY!r}: {found}")
    print(f"site-screenshots: pictures in {out}: home.png, navigation.png, search.png")


if __name__ == "__main__":
    main()
