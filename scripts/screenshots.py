"""`make screenshots`: photograph the demo in the Dagster UI into `docs/images/` (not part of CI).

Materializes the demo into a throwaway Dagster instance (telemetry off), starts `dagster dev` on
127.0.0.1 over it, and photographs the pages the docs show with a real headless browser: Debian's
chromium (`apt-get install chromium`) driven by Playwright, which `make screenshots` installs
into `.venv-screenshots` (`playwright install` is never needed). The server is stopped at the
end, whatever happened. Look at every image before committing it.

Usage: make screenshots            (or: python scripts/screenshots.py [--only NAME ...])
"""

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import FloatRect, Locator, Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
SERVER_START_TIMEOUT = 600.0
"""Seconds `dagster dev` may take to answer; a busy two-core machine needs minutes."""
SERVER_STOP_TIMEOUT = 30.0
"""Seconds the server gets to stop on SIGTERM before its whole process group is killed."""
PAD = 12


@dataclass(frozen=True)
class Shot:
    """One image: which page, how wide a window, and which part of it to keep."""

    name: str
    shows: str
    path: str
    ready: str
    """Text that is on the page only once its data has loaded."""
    crop: Callable[[Page], FloatRect]
    width: int = 1500
    height: int = 1000
    click: str | None = None
    """A button to press once the page has loaded (a view the URL cannot choose)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="image names to retake")
    wanted = parser.parse_args().only
    if not CHROMIUM.exists():
        sys.exit(f"screenshots: {CHROMIUM} is missing; install it with `apt-get install chromium`")
    shots = [shot for shot in SHOTS if wanted is None or shot.name in wanted]
    scratch = Path(tempfile.mkdtemp(prefix="dagster-dataframely-demo-"))
    try:
        environment = _demo_environment(scratch)
        _materialize_the_demo(environment)
        with _dagster_dev(environment, scratch / "dagster-dev.log") as url:
            _photograph(url, shots)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for shot in shots:
        size = (IMAGES / shot.name).stat().st_size
        print(f"screenshots: docs/images/{shot.name} ({size // 1024} KB): {shot.shows}")


def _demo_environment(scratch: Path) -> dict[str, str]:
    """The demo's directory and a Dagster home of its own, telemetry off, the welcome read."""
    home = scratch / "dagster_home"
    (home / ".nux").mkdir(parents=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    # Dagster's first-start "join the community" dialog would cover the first page.
    (home / ".nux" / "nux.yaml").write_text("seen: 1\n")
    return {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "DAGSTER_DATAFRAMELY_DEMO_DIR": str(scratch / "demo"),
        "PYTHONPATH": str(ROOT / "examples"),
    }


def _materialize_the_demo(environment: dict[str, str]) -> None:
    print("screenshots: materializing the demo", flush=True)
    subprocess.run(
        [sys.executable, "-m", "dagster_dataframely_demo.demo"],
        env=environment,
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
    )


@contextmanager
def _dagster_dev(environment: dict[str, str], log: Path) -> Iterator[str]:
    """`dagster dev` on a free loopback port; its whole process group is stopped on exit."""
    port = _free_port()
    dagster = Path(sys.executable).parent / "dagster"
    command = [str(dagster), "dev", "-h", "127.0.0.1", "-p", str(port)]
    command += ["-m", "dagster_dataframely_demo.definitions"]
    print(f"screenshots: starting dagster dev on 127.0.0.1:{port}", flush=True)
    with log.open("wb") as output:
        server = subprocess.Popen(
            command,
            env=environment,
            cwd=ROOT,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_until_serving(server, url, log)
            yield url
        finally:
            _stop(server)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_until_serving(server: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"screenshots: dagster dev exited ({server.returncode}):\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/server_info", timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(2)
    sys.exit(f"screenshots: dagster dev did not answer in {SERVER_START_TIMEOUT:.0f}s")


def _stop(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's process group, then SIGKILL to whatever is left of it."""
    print("screenshots: stopping dagster dev", flush=True)
    group = server.pid  # start_new_session made the server its group's leader
    try:
        os.killpg(group, signal.SIGTERM)
        server.wait(timeout=SERVER_STOP_TIMEOUT)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(group, signal.SIGKILL)  # the webserver and daemon can outlive their parent
    except ProcessLookupError:
        return
    server.wait()


def _photograph(url: str, shots: list[Shot]) -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            for shot in shots:
                print(f"screenshots: {shot.name}", flush=True)
                page.set_viewport_size({"width": shot.width, "height": shot.height})
                page.goto(url + shot.path, timeout=120_000)
                page.get_by_text(shot.ready, exact=True).first.wait_for(timeout=120_000)
                page.wait_for_load_state("networkidle", timeout=120_000)
                _dismiss_the_welcome_dialog(page)
                if shot.click is not None:
                    toggle = page.get_by_text(shot.click, exact=True).first
                    toggle.scroll_into_view_if_needed()
                    toggle.click()
                    page.wait_for_load_state("networkidle", timeout=120_000)
                    toggle.scroll_into_view_if_needed()
                # A node or panel still fetching its status says "Loading..." in place of it.
                page.get_by_text(re.compile(r"^Loading")).first.wait_for(
                    state="hidden", timeout=120_000
                )
                page.wait_for_timeout(1_500)  # the lineage graph zooms to fit; tables settle
                page.screenshot(path=IMAGES / shot.name, clip=shot.crop(page))
        finally:
            browser.close()


def _dismiss_the_welcome_dialog(page: Page) -> None:
    """Close Dagster's "join the community" dialog, if the `.nux` file no longer keeps it shut."""
    skip = page.get_by_role("button", name="Skip", exact=True)
    if skip.is_visible():
        skip.click()
        page.wait_for_timeout(500)


def _box(locator: Locator) -> FloatRect:
    box = locator.bounding_box()
    if box is None:
        raise RuntimeError(f"screenshots: {locator} is not on the page")
    return box


def _around(
    *boxes: FloatRect, right: float | None = None, bottom: float | None = None
) -> FloatRect:
    """The smallest rectangle holding every box, with a margin; stretched to `right`/`bottom`."""
    left = min(box["x"] for box in boxes) - PAD
    top = min(box["y"] for box in boxes) - PAD
    end_x = right if right is not None else max(box["x"] + box["width"] for box in boxes) + PAD
    end_y = bottom if bottom is not None else max(box["y"] + box["height"] for box in boxes) + PAD
    return {"x": max(left, 0), "y": max(top, 0), "width": end_x - left, "height": end_y - top}


def _to_the_top(locator: Locator) -> None:
    """Scroll `locator` to the top of the window before measuring what lies below it.

    The UI scrolls inside its own panel, so what lies below the window cannot be photographed.
    """
    locator.evaluate("element => element.scrollIntoView({block: 'start'})")
    locator.page.wait_for_timeout(500)


def _row(page: Page, key: str) -> Locator:
    """The metadata table's row for `key` (the innermost row, not a table around it)."""
    return page.locator("tr").filter(has=page.get_by_text(key, exact=True)).last


def _lineage(page: Page) -> FloatRect:
    toolbar = _box(page.get_by_role("button", name="Nearest Neighbors"))
    size = page.viewport_size or {"width": 0, "height": 0}
    return _around(toolbar, right=size["width"], bottom=size["height"])


def _window(page: Page) -> FloatRect:
    """The whole window: a graph that fits it."""
    size = page.viewport_size or {"width": 0, "height": 0}
    return {"x": 0, "y": 0, "width": size["width"], "height": size["height"]}


def _columns(page: Page) -> FloatRect:
    heading = page.get_by_text("Columns", exact=True).first
    _to_the_top(heading)
    table = page.locator("table").filter(has=page.get_by_text("Column name", exact=True)).last
    return _around(_box(heading), _box(table))


def _check_list(page: Page) -> FloatRect:
    """From the asset's tab bar down, from the list of checks to the window's right edge."""
    tabs = _box(page.get_by_text("Events", exact=True).first)
    checks = _box(page.get_by_text(re.compile(r"^Checks \(\d+\)$")).first)
    size = page.viewport_size or {"width": 0, "height": 0}
    return _around(tabs, checks, right=size["width"], bottom=size["height"])


def _failing_check(page: Page) -> FloatRect:
    heading = page.get_by_text("Latest execution", exact=True).first
    return _around(_box(heading), _box(_row(page, "dy_rule__expr")))


def _policy_check(page: Page) -> FloatRect:
    """The list of checks, and the selected check from its heading down to its threshold."""
    checks = _box(page.get_by_text(re.compile(r"^Checks \(\d+\)$")).first)
    threshold = _box(_row(page, "dy_threshold"))
    size = page.viewport_size or {"width": 0, "height": 0}
    return _around(checks, threshold, right=size["width"])


def _materialization(first: str, last: str) -> Callable[[Page], FloatRect]:
    def crop(page: Page) -> FloatRect:
        _to_the_top(_row(page, first))
        return _around(_box(_row(page, first)), _box(_row(page, last)))

    return crop


SHOTS = [
    Shot(
        "quarantine-lineage.png",
        "marketplace_lines' lineage: the quarantine node in the same group (dashed: nothing "
        "materializes it) fed by marketplace_lines and read by quarantine_triage",
        "/assets/marketplace_lines?view=lineage",
        "quarantine_triage",
        _lineage,
        width=1400,
        height=760,
    ),
    Shot(
        "columns-tab.png",
        "marketplace_lines' Columns: types, constraints, descriptions, column metadata and the "
        "schema-level rules",
        "/assets/marketplace_lines",
        "customer_email",
        _columns,
        height=1400,
    ),
    Shot(
        "check-list.png",
        "marketplace_lines' Checks tab: one check per rule, the failing ones WARN, "
        "dy_rule__primary_key selected",
        "/assets/marketplace_lines?view=checks&checkDetail=dy_rule__primary_key",
        "dy_failed_count",
        _check_list,
        height=900,
    ),
    Shot(
        "failing-check.png",
        "the failing dy_rule__primary_key check's latest execution: failed count, failed-row "
        "sample, rule name and expression",
        "/assets/marketplace_lines?view=checks&checkDetail=dy_rule__primary_key",
        "dy_failed_count",
        _failing_check,
        width=1900,
    ),
    Shot(
        "invalid-by-rules.png",
        "marketplace_lines' materialization with 8 invalid rows: invalid count and quarantine "
        "address first, then the valid rows' tables, the invalid sample and invalid_by_rules",
        "/assets/marketplace_lines?view=events",
        "dataframely/invalid_by_rules",
        _materialization("dataframely/invalid_count", "dataframely/invalid_by_rules"),
        width=2300,
        height=2100,
    ),
    Shot(
        "collection-filter-check.png",
        "order_book/lines, a member of the OrderBook Collection: its rule checks and the check of "
        "the Collection's filter, dy_filter__every_line_has_an_order, selected",
        "/assets/order_book/lines?view=checks&checkDetail=dy_filter__every_line_has_an_order",
        "dy_failed_count",
        _check_list,
        height=900,
    ),
    Shot(
        "quality-policy-check.png",
        "marketplace_lines_with_policy's Checks tab under a quality policy: the blocking "
        "dy_rule__primary_key check failed (its own threshold tolerates no duplicate) with its "
        "failed fraction and threshold, while the rules one line failed (5%) pass within theirs",
        "/assets/marketplace_lines_with_policy?view=checks&checkDetail=dy_rule__primary_key",
        "dy_threshold",
        _policy_check,
        width=1850,
        height=1100,
    ),
    Shot(
        "materialization-metadata.png",
        "storefront_lines' materialization with no invalid rows: row count, valid sample and "
        "one statistics table per dtype group",
        "/assets/storefront_lines?view=events",
        "dataframely/valid_statistics/string",
        _materialization("dagster/row_count", "dataframely/valid_statistics/string"),
        width=2300,
        height=1600,
    ),
    Shot(
        "metric-plots.png",
        "app_orders' Overview tab, its Metadata section switched to Plots: each numeric key "
        "of its materializations over time, the column metrics among them, after the demo's "
        "four runs of it (the last one the replayed null burst of channel)",
        "/assets/app_orders",
        "Plots",
        _window,
        width=1500,
        height=1300,
        click="Plots",
    ),
    # The demo's features module (issue 21), each at a width the docs page shows readably.
    # staged_lines has none: staging is a rename inside the IO manager, and its pages in the
    # UI look like any other asset's (its checks appear in the features group below).
    Shot(
        "warning-rules.png",
        "reviewed_lines' Checks tab: the warning rule's check on the channel fails at WARN, "
        "and the line whose only fault is its channel was written",
        "/assets/reviewed_lines?view=checks&checkDetail=dy_rule__channel__check__known_channel",
        "dy_failed_count",
        _check_list,
        width=1250,
        height=860,
    ),
    Shot(
        "table-checks.png",
        "legacy_orders, a plain @dg.asset: dd.table_checks' checks on its stored table, "
        "dy_rule__amount__min failing at WARN",
        "/assets/legacy_orders?view=checks&checkDetail=dy_rule__amount__min",
        "dy_failed_count",
        _check_list,
        width=1250,
        height=860,
    ),
    Shot(
        "multi-asset.png",
        "the features group: web_lines and marketplace_review, the two outputs of the "
        "dd.multi_asset split_by_channel, beside the group's other assets",
        "/locations/dagster_dataframely_demo.definitions/asset-groups/features",
        "marketplace_review",
        _window,
        width=1250,
        height=1100,
    ),
]


if __name__ == "__main__":
    main()
