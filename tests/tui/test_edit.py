"""The step editor: what it shows, what it accepts, and backing out of it."""

from __future__ import annotations

from pathlib import Path

import pytest
from fork_helpers import LOOP, browser, open_editor
from shown import text_of
from textual.widgets import Switch, TextArea
from waits import settle

from regista.errors import InvalidEditError
from regista.fork import ModelAnswerEdit, ToolResultEdit
from regista.trace.reader import Trace
from regista_tui.edits import editor_content, model_edit_from, tool_edit_from
from regista_tui.screens.browser import BrowserScreen
from regista_tui.screens.edit import EditStep

TOOLS = {"search_orders", "get_order", "issue_refund", "send_email"}


@pytest.fixture(autouse=True)
def _shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REGISTA_SAMPLE_DB", str(tmp_path / "shop.db"))


# -- the rules -------------------------------------------------------------------------


def test_a_json_tool_result_is_pretty_printed_and_saved_compact() -> None:
    step = Trace.load(LOOP).steps()[1]
    content = editor_content(step)
    assert content.language == "json" and content.was_json and not content.is_error
    assert content.text.startswith('{\n  "query": ')
    edit = tool_edit_from('{\n  "matches": [1]\n}', True, content)
    assert edit == ToolResultEdit('{"matches":[1]}', True)
    assert tool_edit_from("plain words", False, content) == ToolResultEdit("plain words")


def test_a_model_answer_is_its_text_and_tool_use_blocks() -> None:
    step = Trace.load(LOOP).steps()[0]
    content = editor_content(step)
    assert content.kind == "model" and content.language == "json"
    edit = model_edit_from(content.text, TOOLS)
    assert edit.content == step.response.content  # type: ignore[union-attr]
    assert model_edit_from("Just text.", TOOLS) == ModelAnswerEdit(
        [{"type": "text", "text": "Just text."}], "end_turn"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[{"type": "text"', "not valid"),
        ('[{"type": "tool_use", "name": "drop_db", "input": {}}]', "unknown tool 'drop_db'"),
        ('[{"type": "tool_use", "name": "get_order", "input": [1]}]', "must be a JSON object"),
        ("   ", "empty"),
    ],
)
def test_bad_model_answers_are_refused(text: str, message: str) -> None:
    with pytest.raises(InvalidEditError, match=message):
        model_edit_from(text, TOOLS)


def test_a_compaction_cannot_be_edited(trace_path: Path) -> None:
    compaction = next(s for s in Trace.load(trace_path).steps() if s.kind == "compaction")
    with pytest.raises(InvalidEditError, match="compaction: it cannot be edited"):
        editor_content(compaction)


# -- the modal -------------------------------------------------------------------------


async def test_a_bad_edit_keeps_the_editor_open_and_writes_nothing(tmp_path: Path) -> None:
    app = browser(LOOP, tmp_path / "forks")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = await open_editor(app, pilot)  # step 0: the model's first answer
        assert editor.content.kind == "model"
        editor.query_one(TextArea).load_text(
            '[{"type": "tool_use", "name": "drop_db", "input": {}}]'
        )
        await pilot.press("ctrl+s")
        assert app.screen is editor
        assert "unknown tool 'drop_db'" in text_of(app, "#edit-error")
        editor.query_one(TextArea).load_text('[{"type": "text", "text": "fixed"}]')
        await settle(pilot)
        assert text_of(app, "#edit-error").strip() == ""  # cleared as the text changes
        await pilot.press("escape")
        assert isinstance(app.screen, BrowserScreen)
    assert not (tmp_path / "forks").exists()


async def test_escape_cancels_the_editor_and_nothing_changes(tmp_path: Path) -> None:
    app = browser(LOOP, tmp_path / "forks")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = await open_editor(app, pilot, "j")
        assert editor.query_one(TextArea).language == "json"
        assert editor.query_one("#is-error", Switch).value is False
        editor.query_one(TextArea).load_text("changed")
        await settle(pilot)
        assert "not valid JSON now: will be sent as plain text" in text_of(app, "#edit-error")
        await pilot.press("escape")
        assert isinstance(app.screen, BrowserScreen)
        await pilot.press("e")  # the editor starts again from the recording
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert isinstance(app.screen, EditStep)
        assert '"matches": []' in app.screen.query_one(TextArea).text
    assert not (tmp_path / "forks").exists()


async def test_e_on_a_compaction_says_why_not(tmp_path: Path, trace_path: Path) -> None:
    app = browser(trace_path, tmp_path / "forks")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        steps = Trace.load(trace_path).steps()
        number = next(s.index for s in steps if s.kind == "compaction")
        await pilot.press("colon", *str(number), "enter", "e")
        await settle(pilot)
        assert isinstance(app.screen, BrowserScreen)
        assert "cannot be edited" in text_of(app, "#status")


async def test_ctrl_a_selects_all_and_the_editor_says_so(tmp_path: Path) -> None:
    """Select all is ctrl+a (F7 too), and the editor's border says so: typing then
    replaces the whole recorded value."""
    app = browser(LOOP, tmp_path / "forks")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = await open_editor(app, pilot, "j")
        box = editor.query_one("EditStep > Vertical")
        assert "ctrl+a select all" in str(box.border_subtitle)
        area = editor.query_one(TextArea)
        for key in ("ctrl+a", "f7"):
            area.load_text('{\n  "matches": []\n}')
            area.move_cursor((1, 3))
            await pilot.press(key, *"found")
            assert area.text == "found", key


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_long_value_leaves_the_plan_and_the_error_on_screen(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = browser(LOOP, tmp_path / "forks")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        editor = await open_editor(app, pilot)
        long_answer = "[" + ",".join(['{"type": "text", "text": "a line"}'] * 40) + ",]"
        editor.query_one(TextArea).load_text(long_answer.replace(",", ",\n"))
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "not valid" in text_of(app, "#edit-error")
        box = editor.query_one("EditStep > Vertical").content_region
        for selector in [".hint", "#editor", "#edit-plan", "#edit-error"]:
            region = editor.query_one(selector).region
            assert region.height and box.contains_region(region), selector
