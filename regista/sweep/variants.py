"""The variants of a sweep: what each fork changes at the sweep's step.

A variant is one edit of step ``N``: a new tool result, a new model answer, or another
model from step ``N`` on. They come from repeated command-line flags (``--tool-result``,
``--answer``, ``--model``) or from a JSON file (``--variants FILE``)::

    [
      {"kind": "tool_result", "content": "{\\"matches\\": []}", "label": "empty"},
      {"kind": "tool_result", "content": "timeout", "is_error": true},
      {"kind": "model_answer", "content": "I could not find the order."},
      {"kind": "model", "model": "claude-haiku-4-5"}
    ]

An item may name its own ``at_step``; the others edit the sweep's ``--at`` step. An edit
item has the shape of an item of ``regista fork --edits`` (and is checked by the same
reader, :func:`regista.cli._edits.parse_edits_file`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import orjson

from regista.errors import InvalidEditError

__all__ = ["Variant", "VariantKind", "parse_variants_file", "variant_of_flag"]

VariantKind = Literal["tool_result", "model_answer", "model"]

#: At most this many characters of an edit make its generated label.
LABEL_CHARS = 32


@dataclass(frozen=True)
class Variant:
    """One fork of a sweep.

    Attributes:
        label: How tables and columns name it (``result: "{}"``, ``model: haiku``, or the
            file's ``label``).
        kind: ``tool_result``, ``model_answer`` or ``model``.
        at_step: The step it changes.
        edit: A :class:`~regista.fork.ToolResultEdit` or
            :class:`~regista.fork.ModelAnswerEdit` (``None`` for a model variant).
        model: The model from ``at_step`` on (a model variant only).
    """

    label: str
    kind: VariantKind
    at_step: int
    edit: Any = None
    model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The variant as the sweep file and ``--json`` give it (a ``--variants`` item)."""
        out: dict[str, Any] = {"label": self.label, "at_step": self.at_step}
        if self.kind == "model":
            out.update(kind="model", model=self.model)
        else:
            out.update(self.edit.to_dict())
        return out

    def edit_item(self) -> dict[str, Any]:
        """The variant as an item of ``regista fork --edits`` (not for a model variant)."""
        return {"at_step": self.at_step, **self.edit.to_dict()}


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def _label(kind: VariantKind, edit: Any, model: str | None) -> str:
    if kind == "model":
        return f"model: {model}"
    content = edit.content
    if kind == "tool_result":
        text = content if isinstance(content, str) else orjson.dumps(content).decode()
        return f"{'error' if edit.is_error else 'result'}: {_short(text)}"
    texts = [b.get("text", "") for b in content if b.get("type") == "text"]
    calls = [b.get("name", "") for b in content if b.get("type") == "tool_use"]
    return f"answer: {_short(' '.join([*texts, *(f'{c}(…)' for c in calls)]))}"


def variant_of_flag(flag: str, value: str, at_step: int) -> Variant:
    """The variant of one ``--tool-result`` / ``--answer`` / ``--model`` flag (its value
    already read from ``@file``).

    Raises:
        InvalidEditError: The value is not such an edit.
    """
    from regista.fork import ModelAnswerEdit, ToolResultEdit, validate_model_edit

    if flag == "model":
        name = value.strip()
        if not name:
            raise InvalidEditError("--model: give a model name")
        return Variant(_label("model", None, name), "model", at_step, model=name)
    if flag == "tool_result":
        edit: Any = ToolResultEdit(value)
        return Variant(_label("tool_result", edit, None), "tool_result", at_step, edit)
    edit = validate_model_edit(ModelAnswerEdit.parse(value), set())
    return Variant(_label("model_answer", edit, None), "model_answer", at_step, edit)


def parse_variants_file(raw: str | bytes, name: str, at_step: int | None) -> list[Variant]:
    """The variants of a ``--variants`` JSON file (see the module docs).

    Args:
        raw: The file's text.
        name: How messages name it.
        at_step: The sweep's step (``--at``), for items that give none.

    Raises:
        InvalidEditError: The file is not such a list (one line naming the problem).
    """
    from regista.cli._edits import json_items, parse_edits_file

    out: list[Variant] = []
    for where, item in json_items(raw, name, "variant"):
        label = item.get("label")
        if label is not None and (not isinstance(label, str) or not label.strip()):
            raise InvalidEditError(f"{where}: 'label' must be text")
        step = item.get("at_step", at_step)
        if step is None:
            raise InvalidEditError(f"{where}: no 'at_step', and no --at N for the sweep")
        if not isinstance(step, int) or isinstance(step, bool) or step < 0:
            raise InvalidEditError(f"{where}: 'at_step' must be a step number")
        if item.get("kind") == "model":
            model = item.get("model")
            if not isinstance(model, str) or not model.strip():
                raise InvalidEditError(f"{where}: a model variant needs 'model', a model name")
            made = variant_of_flag("model", model, step)
        else:
            one = {k: v for k, v in item.items() if k != "label"}
            one["at_step"] = step
            try:
                ((_, edit),) = parse_edits_file(orjson.dumps([one]).decode(), "\0")
            except InvalidEditError as exc:
                raise InvalidEditError(str(exc).replace("\0: edit 0", where, 1)) from None
            kind: VariantKind = (
                "tool_result" if one.get("kind") == "tool_result" else "model_answer"
            )
            if kind == "model_answer":
                from regista.fork import validate_model_edit

                try:
                    edit = validate_model_edit(edit, set())
                except InvalidEditError as exc:
                    raise InvalidEditError(f"{where}: {exc}") from None
            made = Variant(_label(kind, edit, None), kind, step, edit)
        if label is not None:
            made = Variant(" ".join(label.split()), made.kind, made.at_step, made.edit, made.model)
        out.append(made)
    return out
