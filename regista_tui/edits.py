"""What the step editor shows for a step, and how the edited text becomes a fork edit.

Kept apart from the modal so the rules are plain functions: a tool result is shown as it
was recorded (pretty-printed when it is JSON) and may be any text; a model answer is
shown as its text and ``tool_use`` blocks in JSON and is validated as ``fork`` will.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson

from regista import InvalidEditError, ModelAnswerEdit, ToolResultEdit
from regista.engine import Step, validate_model_edit

__all__ = ["EditorContent", "editor_content", "model_edit_from", "tool_edit_from"]


@dataclass(frozen=True)
class EditorContent:
    """The editor's starting state for one step.

    Attributes:
        kind: ``tool`` or ``model``.
        text: What the text area holds.
        language: ``json`` when the text is JSON (for highlighting), else ``None``.
        is_error: The recorded is_error flag (tool steps).
        was_json: The recorded tool result was a JSON document (kept compact on save).
        blocks: The recorded tool result was a list of content blocks.
        note: Something the person should know (e.g. thinking blocks left out).
    """

    kind: str
    text: str
    language: str | None
    is_error: bool = False
    was_json: bool = False
    blocks: bool = False
    note: str = ""


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _as_json(text: str) -> tuple[bool, Any]:
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return False, None
    try:
        return True, orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return False, None


def editor_content(step: Step) -> EditorContent:
    """The editor for ``step``.

    Raises:
        InvalidEditError: The step cannot be edited (a compaction, or a step that never
            finished).
    """
    if step.kind == "compaction":
        raise InvalidEditError(
            f"step {step.index} is a compaction: it cannot be edited (edit a model or tool "
            "step, or rewind with r)"
        )
    if step.kind == "tool":
        result = step.result
        if result is None:
            raise InvalidEditError(f"step {step.index} has no recorded result to edit")
        if isinstance(result.content, list):
            return EditorContent(
                "tool", _pretty(result.content), "json", result.is_error, blocks=True
            )
        ok, value = _as_json(result.content)
        if ok:
            return EditorContent("tool", _pretty(value), "json", result.is_error, was_json=True)
        return EditorContent("tool", result.content, None, result.is_error)
    response = step.response
    if response is None:
        raise InvalidEditError(f"step {step.index} has no recorded answer to edit")
    blocks = [b for b in response.content if b.get("type") in ("text", "tool_use")]
    kept = [
        {"type": "text", "text": b.get("text", "")}
        if b["type"] == "text"
        else {
            "type": "tool_use",
            "id": b.get("id"),
            "name": b.get("name"),
            "input": b.get("input", {}),
        }
        for b in blocks
    ]
    dropped = len(response.content) - len(blocks)
    note = f"{dropped} block(s) other than text and tool_use left out" if dropped else ""
    return EditorContent("model", _pretty(kept), "json", note=note)


def tool_edit_from(text: str, is_error: bool, start: EditorContent) -> ToolResultEdit:
    """The tool-result edit for the editor's ``text``.

    A result that was recorded as JSON and still parses is stored compact, as tools write
    it; any other text is kept as typed (a tool result may be plain text).

    Raises:
        InvalidEditError: The result was a list of content blocks and the text is not one.
    """
    if start.blocks:
        ok, value = _as_json(text)
        if not ok or not isinstance(value, list) or not all(isinstance(b, dict) for b in value):
            raise InvalidEditError(
                "this result is a list of content blocks: keep it a JSON list of objects "
                'such as [{"type": "text", "text": "..."}]'
            )
        return ToolResultEdit(value, is_error)
    if start.was_json:
        ok, value = _as_json(text)
        if ok:
            return ToolResultEdit(orjson.dumps(value).decode(), is_error)
    return ToolResultEdit(text, is_error)


def model_edit_from(text: str, tool_names: set[str]) -> ModelAnswerEdit:
    """The model-answer edit for the editor's ``text`` (plain text or JSON blocks).

    Raises:
        InvalidEditError: Bad JSON, an unknown tool, a tool_use input that is not an
            object, … (the engine's own checks).
    """
    if not text.strip():
        raise InvalidEditError("the answer is empty: write text or JSON content blocks")
    return validate_model_edit(ModelAnswerEdit.parse(text), tool_names)
