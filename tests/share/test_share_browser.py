"""The share page in real headless Chromium: offline, clickable, and inert to hostile text.

Screenshots are kept in ``$REGISTA_ARTIFACTS`` (default ``.artifacts/`` in the repository).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import simple_agent
from hostile import XSS, hostile_trace

from regista.share import write_share

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(os.environ.get("REGISTA_ARTIFACTS", Path(__file__).parents[2] / ".artifacts"))
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (.ci/run installs it)"
)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
            viewport={"width": 1280, "height": 800},
            offline=True,
        )
        yield context
        context.close()


def _open(browser: Any, page_path: Path) -> tuple[Any, list[str], list[str]]:
    page = browser.new_page()
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(page_path.as_uri())
    page.wait_for_selector("body[data-ready='1']")
    return page, requests, errors


def test_one_run_click_through(browser: Any, tmp_path: Path) -> None:
    trace = simple_agent(tmp_path).run_sync("Weather in Paris?").trace_path
    out = write_share(tmp_path / "run.html", trace)
    page, requests, errors = _open(browser, out)
    assert "Weather in Paris?" in page.inner_text("header")
    rows = page.locator("#timeline .row")
    assert rows.count() == 5
    rows.nth(1).click()
    detail = page.inner_text("#detail")
    assert "step 1 · tool · ok" in detail and "get_weather" in detail and "Sunny in Paris" in detail
    page.keyboard.press("j")
    assert "step 2 · model" in page.inner_text("#detail")
    assert "request diff" in page.inner_text("#detail")
    page.keyboard.press("j")
    assert "get_forecast" in page.inner_text("#detail")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "share-one-run.png"), full_page=True)
    assert [u for u in requests if not u.startswith("file:")] == []
    assert errors == []


def test_hostile_trace_runs_nothing(browser: Any, tmp_path: Path) -> None:
    out = write_share(tmp_path / "hostile.html", hostile_trace(tmp_path))
    page, requests, errors = _open(browser, out)
    for i in range(page.locator("#timeline .row").count()):
        page.locator("#timeline .row").nth(i).click()
        assert page.evaluate("window.__pwned") is None
    page.locator("#timeline .row").nth(1).click()
    text = page.inner_text("#detail")
    assert XSS[0] in text and XSS[2] in text  # shown as text
    assert page.locator("#detail img, #detail svg, #detail script").count() == 0
    assert XSS[4] in page.inner_text("header")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "share-hostile.png"), full_page=True)
    assert [u for u in requests if not u.startswith("file:")] == []
    assert errors == []


def test_two_runs_side_by_side(browser: Any, tmp_path: Path) -> None:
    a = simple_agent(tmp_path).run_sync("Weather in Paris?").trace_path
    b = simple_agent(tmp_path, instructions="You are terse.").run_sync("Weather in Paris?")
    out = write_share(tmp_path / "two.html", a, b.trace_path)
    page, requests, errors = _open(browser, out)
    assert page.locator("header .run-header").count() == 2
    page.locator("#timeline .row").first.click()
    detail = page.inner_text("#detail")
    assert "pair 0" in detail and "system" in detail
    assert page.locator("#detail .side-a .step-detail").count() == 1
    assert page.locator("#detail .side-b .step-detail").count() == 1
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "share-two-runs.png"), full_page=True)
    assert [u for u in requests if not u.startswith("file:")] == []
    assert errors == []


def test_big_trace_draws_the_timeline_in_slices(browser: Any, tmp_path: Path) -> None:
    from builders import answer, tool_use

    from regista.providers import ScriptedProvider

    many = [answer(tool_use(f"toolu_{i}", "get_weather", city=f"C{i}")) for i in range(600)]
    agent = simple_agent(tmp_path, provider=ScriptedProvider([*many, answer(text="done")]))
    agent.max_turns = 700
    trace = agent.run_sync("Everywhere").trace_path
    out = write_share(tmp_path / "big.html", trace)
    page, _, errors = _open(browser, out)
    assert page.locator("#timeline .row").count() == 400  # the first slice only
    page.keyboard.press("j")
    page.evaluate("document.getElementById('timeline').scrollTop = 1e9")
    page.locator("#timeline .row").nth(400).wait_for()  # the next slice was drawn
    assert errors == []


def _bars_proportional(page: Any, selector: str) -> int:
    """The waterfall's bars are as long as their steps' times: every bar's width over its
    duration is the same scale (bars held at their 2 px minimum aside)."""
    bars = page.evaluate(
        """sel => Array.from(document.querySelectorAll(sel + ' .bar')).map(b => ({
            w: b.getBoundingClientRect().width, ms: Number(b.dataset.ms),
            track: b.parentElement.getBoundingClientRect().width}))""",
        selector,
    )
    assert bars, "no bar drawn"
    total = max(b["ms"] for b in bars)
    scaled = [(b["w"], b["ms"]) for b in bars if b["w"] > 3 and b["ms"] > 0]
    assert scaled, bars
    scale = scaled[0][0] / scaled[0][1]
    for w, ms in scaled:
        assert abs(w - ms * scale) <= 1.5, (w, ms, scale, total)
    return len(bars)


def test_the_page_opens_on_a_waterfall_with_loops_flagged(browser: Any, tmp_path: Path) -> None:
    sample = Path(__file__).parents[2] / "sample_traces" / "refund_search_loop.jsonl"
    out = write_share(tmp_path / "loop.html", sample)
    page, requests, errors = _open(browser, out)
    assert page.locator("#waterfall").is_visible()
    assert _bars_proportional(page, "#waterfall") == 20
    caption = page.inner_text("#waterfall caption")
    assert "9 repeated steps (↻) took" in caption and "tokens" in caption
    repeated = page.locator("#waterfall tr.repeat")
    assert repeated.count() == 9
    assert "↻" in repeated.first.inner_text()
    # hover or focus shows the step's tokens and cost
    bar = page.locator("#waterfall tr.wf-row").nth(2).locator(".bar")
    bar.focus()
    tip = bar.locator(".tip")
    assert tip.is_visible()
    assert "tokens in 669" in tip.inner_text() and "$0.0000" in tip.inner_text()
    assert bar.get_attribute("aria-label") == tip.inner_text()
    page.locator("#waterfall tr.wf-row").nth(11).click()
    assert "step 11 · tool" in page.inner_text("#detail")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "share-waterfall-recorded.png"), full_page=True)
    assert [u for u in requests if not u.startswith("file:")] == []
    assert errors == []


def test_the_waterfall_of_an_imported_claude_code_session(browser: Any, tmp_path: Path) -> None:
    from importers.cc_fixtures import basic_session

    from regista.importers import convert_file

    conv = convert_file(basic_session().write(tmp_path / "session.jsonl"))
    assert conv is not None
    run = tmp_path / "imported.jsonl"
    run.write_bytes(conv.main.to_bytes())
    out = write_share(tmp_path / "imported.html", run)
    page, requests, errors = _open(browser, out)
    assert _bars_proportional(page, "#waterfall") >= 4
    assert page.locator("#waterfall tr.failed").count() == 1  # the failing Bash call
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "share-waterfall-claude-code.png"), full_page=True)
    assert [u for u in requests if not u.startswith("file:")] == []
    assert errors == []


def test_the_page_says_where_the_time_and_money_went(browser: Any, tmp_path: Path) -> None:
    sample = Path(__file__).parents[2] / "sample_traces" / "refund_search_loop.jsonl"
    out = write_share(tmp_path / "by.html", sample)
    page, requests, errors = _open(browser, out)
    table = page.locator("#by table")
    assert "Tokens, cost and time by tool" in table.inner_text()
    assert "search_orders" in table.inner_text() and "100%" in table.inner_text()
    page.locator("#by button[data-by='model']").click()
    text = page.locator("#by table").inner_text()
    # each tool step its recorded 250 ms, each scripted answer its 250 ms span: as show --by
    assert "(tools)" in text and "scripted" in text and "50%" in text
    assert page.locator("#by button[data-by='model']").get_attribute("aria-pressed") == "true"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "share-by-model.png"), full_page=True)
    assert [u for u in requests if not u.startswith("file:")] == []
    assert errors == []
