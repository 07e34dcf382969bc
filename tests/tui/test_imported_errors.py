"""An imported session's error results, in the debugger: its header counts the errors that
``show`` counts, and ``x`` goes to each of them.

An importer writes a tool result's ``is_error`` before its (long) content; the index read
only the tail of each line, so the header of a session that ``show`` said had 5 errors said
none, and ``x`` found no error (10 of 48 error results were invisible)."""

from __future__ import annotations

from pathlib import Path

from importers.cc_fixtures import CCSession, text, tool_use
from shown import text_of
from waits import settle

from regista.importers import convert, write_runs
from regista.trace.reader import Trace
from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp
from regista_tui.widgets.timeline.timeline import Timeline


def _imported(tmp_path: Path) -> Path:
    s = CCSession()
    s.prompt("run the checks")
    for i, failed in enumerate([False, True, False, True, True]):
        tid = f"toolu_e{i}"
        s.answer(tool_use(tid, "Bash", command=f"check {i}"))
        out = f"check {i}: " + "x" * 2000
        s.tool_result(tid, out, is_error=failed, result={"stdout": out})
    s.answer(text("done"), stop_reason="end_turn")
    src = s.write(tmp_path / "cc" / "4f1c2a9e-8d3b-4e6f-a1b2-c3d4e5f60718.jsonl")
    return write_runs(convert("claude-code", src), tmp_path / "traces")[0]


async def test_the_header_and_x_find_an_imported_session_s_errors(tmp_path: Path) -> None:
    path = _imported(tmp_path)
    steps = Trace.load(path).steps()
    errors = [st.index for st in steps if st.is_error]
    assert len(errors) == 3  # as show counts them
    index, notice = open_index(path)
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        assert "3 errors" in text_of(app, "#header", 160)
        visited = []
        for _ in errors:
            await pilot.press("x")
            visited.append(app.screen.query_one(Timeline).cursor)
        assert visited == errors
