"""A recorded run's task is what the person asked, not the notes a harness sends as user
messages (Codex's environment and AGENTS.md messages, Claude Code's reminders)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from regista.harness_notes import asked, is_note
from regista.trace.reader import Trace
from regista.types import LlmRequest, LlmResponse
from regista.wire.sessions import SessionBook

ENV = (
    "<environment_context>\n  <cwd>/tmp/w</cwd>\n  <shell>bash</shell>\n"
    "  <current_date>2026-12-01</current_date>\n</environment_context>"
)
AGENTS = (
    "# AGENTS.md instructions for /tmp/w\n\n<INSTRUCTIONS>\nAnswer in French.\n\n</INSTRUCTIONS>"
)


def _text(*texts: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": t} for t in texts]


@pytest.mark.parametrize(
    ("messages", "task"),
    [
        # Codex 0.171: AGENTS.md and the environment in one user message, the task in the next
        ([_text(AGENTS, ENV), _text("fix the tests")], "fix the tests"),
        ([_text(ENV), _text("fix the tests")], "fix the tests"),
        # older Codex: <user_instructions>
        ([_text("<user_instructions>\nbe brief\n</user_instructions>"), _text("hi")], "hi"),
        # Claude Code: reminders before the task in one message
        ([_text("<system-reminder>\nctx\n</system-reminder>", "list files")], "list files"),
        # nothing but notes: the first message, whole
        ([_text(ENV)], ENV),
        (["plain <b>text</b> a person typed"], "plain <b>text</b> a person typed"),
    ],
)
def test_the_task_is_what_the_person_asked(tmp_path: Path, messages: list[Any], task: str) -> None:
    book = SessionBook(tmp_path)
    request = LlmRequest(
        model="gpt-x",
        system="You are Codex.",
        messages=[{"role": "user", "content": m} for m in messages],
        max_tokens=100,
    )
    book.record("openai", request, LlmResponse(content=_text("ok"), stop_reason="end_turn"))
    book.close()
    assert Trace.load(book.paths[0]).start.task == task


def test_notes_are_told_from_text() -> None:
    assert is_note(ENV) and is_note(AGENTS) and is_note(AGENTS + "\n" + ENV)
    assert asked("<environment_context>x</environment_context>\nand this") == "and this"
    assert asked("a < b") == "a < b"
    assert not is_note("") and not is_note("hello")
