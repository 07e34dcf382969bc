"""The step view reads well: JSON wrapped between words with a hanging indent, the answer
before the request, a request diff with no escaped JSON, and a wide enough gist column."""

from __future__ import annotations

from pathlib import Path

from shown import plain
from waits import settle

from regista.diff.structural import structural_diff
from regista.trace.reader import Trace
from regista_tui.app import RegistaApp
from regista_tui.widgets.step.json_view import JsonView
from regista_tui.widgets.step.render import render_changes, render_step
from regista_tui.widgets.timeline.timeline import Timeline

HAPPY = Path(__file__).parents[2] / "sample_traces" / "refund_happy.jsonl"


def test_json_wraps_between_words_under_its_value() -> None:
    value = {"item": "Standing desk", "note": "a long note that goes on past the edge of it"}
    shown = plain(JsonView(value), 34)
    lines = shown.splitlines()
    assert '  "item": "Standing desk",' in lines
    assert lines[2] == '  "note": "a long note that goes '
    assert lines[3].startswith("          on past")  # under the value, not at column 0
    words = {w.strip('",') for line in lines for w in line.split()}
    assert {"Standing", "desk", "goes", "past"} <= words  # no word cut in two


def test_a_model_step_shows_its_answer_first() -> None:
    shown = plain(render_step(Trace.load(HAPPY).steps()[2]), 80)
    assert shown.index("Response") < shown.index("Request")
    assert shown.index("Looking up ORD-1042.") < shown.index("system ")


def test_the_request_diff_has_no_escaped_json() -> None:
    steps = Trace.load(HAPPY).steps()
    a, b = steps[0].request, steps[2].request
    assert a is not None and b is not None
    changes = structural_diff(a.canonical(), b.canonical(), "request")
    shown = plain(render_changes(changes, width=100), 100)
    assert '\\"' not in shown
    assert '"order_id": "ORD-1042",' in shown  # the tool result, pretty-printed
    assert "added request.messages[2]" in shown


async def test_the_gist_column_is_wide_at_120_columns() -> None:
    from regista_tui.__main__ import open_index

    index, _ = open_index(HAPPY)
    app = RegistaApp(index, settle_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        timeline = app.screen.query_one(Timeline)
        row = timeline.row_text(0, timeline.content_region.width).plain
        gist = row.split("scripted", 1)[1].strip()
        assert gist.startswith("Let me find the order: sea")  # was "Let me find the …"


def test_a_long_added_value_is_cut_until_show_more() -> None:
    from regista.diff.structural import Change

    change = Change("request.messages[3]", "added", new={"role": "user", "content": "x " * 500})
    short = plain(render_changes([change], width=120), 100)
    assert "more characters (m: show more)" in short
    longer = plain(render_changes([change], width=1200), 100)
    assert "m: show more" not in longer
