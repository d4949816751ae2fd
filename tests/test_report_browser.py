"""The HTML report in a real headless Chromium (Debian's `chromium`, driven by Playwright): it
opens without console errors or network requests, the timeline has one row per pod slot, and
hovering or clicking a decision shows its reason.

Chromium is installed by `apt-get install -y chromium chromium-driver` when missing (CI runs as
root); if that cannot be done the tests fail, loudly, instead of skipping.

`python tests/test_report_browser.py --update-screenshot` rewrites docs/report-fluentd.png, the
README's picture of the fluentd seed's rollout and undo.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import debian_tool

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOT = ROOT / "docs" / "report-fluentd.png"


def chromium() -> str:
    """/usr/bin/chromium, installed from Debian's packages if it is missing."""
    return debian_tool("chromium", "chromium", "chromium-driver")


def fluentd_report(directory: Path) -> Path:
    from replay.cli import main

    store = f"sqlite:{directory / 'fluentd.db'}"
    assert main(["replay", str(ROOT / "examples" / "fluentd-daemonset.jsonl"), "--store", store]) == 0
    page = directory / "fluentd.html"
    assert main(["report", "ds/fluentd-elasticsearch", "-n", "kube-system", "--store", store, "-o", str(page)]) == 0
    return page


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    executable = chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> Path:
    return fluentd_report(tmp_path_factory.mktemp("browser"))


@pytest.fixture
def opened(browser, report_page):
    """The report opened from disk with every network request refused and recorded."""
    page = browser.new_page(viewport={"width": 1300, "height": 1400})
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def refuse(route):
        requests.append(route.request.url)
        route.abort()

    page.route("http://**/*", refuse)
    page.route("https://**/*", refuse)
    page.goto(report_page.as_uri())
    page.wait_for_selector("#kreplay-report .main-svg")
    yield page, errors, requests
    page.close()


def test_the_report_opens_without_errors_or_network(opened):
    page, errors, requests = opened
    assert errors == []
    assert requests == []
    assert page.title() == "Rollout report: DaemonSet kube-system/fluentd-elasticsearch"
    summary = page.inner_text("#summary")
    assert "Most pods unavailable at once\t1 at 2026-11-20T10:05:00Z (maxUnavailable 1)" in summary
    assert "not stuck" in summary


def test_the_timeline_has_one_row_per_pod_slot(opened):
    page, _, _ = opened
    rows = page.eval_on_selector_all("#kreplay-report g.y2tick text", "els => els.map(e => e.textContent)")
    assert rows == ["master", "node-1", "node-2"]
    bars = page.eval_on_selector_all("#kreplay-report g.barlayer g.point", "els => els.length")
    assert bars >= 9 * 3  # nine pods, each Pending, Running and Ready at least


def _decision_point(page, reason: str) -> tuple[float, float]:
    """The page coordinates of the first plotted decision with this reason."""
    return page.evaluate(
        """(reason) => {
            const gd = document.getElementById('kreplay-report');
            const trace = gd.data.findIndex(t => t.name && t.name.startsWith('controller decision'));
            const t = gd.data[trace];
            const i = t.customdata.findIndex(c => c.includes('<b>' + reason + '</b>'));
            const xa = gd._fullLayout.xaxis2, ya = gd._fullLayout.yaxis2;
            const box = gd.getBoundingClientRect();
            return [box.left + xa._offset + xa.d2p(t.x[i]), box.top + ya._offset + ya.d2p(t.y[i])];
        }""",
        reason,
    )


def test_hovering_a_decision_shows_its_reason_message_and_trigger(opened):
    page, errors, _ = opened
    x, y = _decision_point(page, "rolling-update")
    page.mouse.move(x, y)
    hover = page.wait_for_selector("#kreplay-report .hoverlayer .hovertext", timeout=5000)
    # SVG text: the hover's wrapped lines are tspans, read here without the breaks between them
    shown = hover.text_content() or ""
    assert "rolling-update by daemonset-controller" in shown
    assert "maxUnavailable 1" in shown
    assert "because: #28" in shown and "updated daemonset kube-system/fluentd-elasticsearch by kubectl" in shown
    page.mouse.click(x, y)
    details = page.inner_text("#details")
    assert "rolling-update by daemonset-controller" in details and "because: #" in details
    assert errors == []


def screenshot(page_path: Path, png: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS, headless=True)
        page = b.new_page(viewport={"width": 1300, "height": 1200})
        page.goto(page_path.as_uri())
        page.wait_for_selector("#kreplay-report .main-svg")
        page.mouse.move(*_decision_point(page, "rolling-update"))  # show one decision's hover
        page.wait_for_selector("#kreplay-report .hoverlayer .hovertext")
        page.screenshot(path=str(png), full_page=True)
        b.close()


def test_a_screenshot_shows_the_charts(report_page, tmp_path, browser):
    png = tmp_path / "report.png"
    page = browser.new_page(viewport={"width": 1300, "height": 1200})
    page.goto(report_page.as_uri())
    page.wait_for_selector("#kreplay-report .main-svg")
    page.screenshot(path=str(png), full_page=True)
    page.close()
    assert png.stat().st_size > 50_000  # a blank page is a few kilobytes
    assert SCREENSHOT.exists(), "docs/report-fluentd.png is missing: python tests/test_report_browser.py --update-screenshot"


if __name__ == "__main__" and "--update-screenshot" in sys.argv:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        screenshot(fluentd_report(Path(d)), SCREENSHOT)
    print(f"wrote {SCREENSHOT}")
