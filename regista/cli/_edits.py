"""Fork edits from the command line: repeated ``--at``/``--tool-result``/``--answer``
flags, or a JSON edits file."""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from typing import Any

import orjson

from regista.errors import InvalidEditError

__all__ = ["EditsAction", "fork_argv", "json_items", "parse_edits_file"]


class EditsAction(argparse.Action):
    """Collects ``--at N`` and the edit flags after it, in order, into ``args.plan``:
    a list of ``[step, kind, value, is_error]``."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        plan: list[list[Any]] = getattr(namespace, "plan", None) or []
        namespace.plan = plan
        if self.dest == "at":
            try:
                step = int(str(values))
            except ValueError:
                parser.error(f"--at: a step number, not {values!r}")
            plan.append([step, None, None, False])
            return
        if not plan:
            parser.error(f"{option_string} needs a step: put --at N before it")
        last = plan[-1]
        if self.dest == "error":
            last[3] = True
            return
        if last[1] is not None:
            parser.error(f"step {last[0]} already has an edit: repeat --at N for another one")
        last[1] = "tool_result" if self.dest == "tool_result" else "model_answer"
        last[2] = values


def json_items(raw: str | bytes, name: str, noun: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The objects of a JSON file that lists them (bare, or as ``{"<noun>s": [...]}``),
    each with how a message names it (``FILE: edit 2``), in order.

    Raises:
        InvalidEditError: The file is not such a list, or an item is not an object (as the
            items are reached).
    """
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InvalidEditError(f"{name}: not valid JSON: {exc}") from None
    if isinstance(data, dict) and f"{noun}s" in data:
        data = data[f"{noun}s"]
    if not isinstance(data, list) or not data:
        raise InvalidEditError(f"{name}: expected a non-empty JSON list of {noun}s")
    for i, item in enumerate(data):
        where = f"{name}: {noun} {i}"
        if not isinstance(item, dict):
            raise InvalidEditError(f"{where}: expected an object, got {type(item).__name__}")
        yield where, item


def parse_edits_file(raw: str, name: str) -> list[tuple[int, Any]]:
    """The edits of a JSON edits file: a list of objects with ``at_step`` and ``kind``
    (``tool_result`` with ``content`` and ``is_error``, or ``model_answer`` with
    ``content``: text or content blocks, and an optional ``stop_reason``).

    Raises:
        InvalidEditError: The file is not such a list (one line naming the problem).
    """
    from regista.fork import ModelAnswerEdit, ToolResultEdit

    edits: list[tuple[int, Any]] = []
    for where, item in json_items(raw, name, "edit"):
        if "edit" in item and isinstance(item["edit"], dict):  # the trace's forked_from shape
            item = {**item["edit"], "at_step": item.get("at_step")}
        step = item.get("at_step")
        if not isinstance(step, int) or isinstance(step, bool):
            raise InvalidEditError(f"{where}: 'at_step' must be a step number")
        kind = item.get("kind")
        content = item.get("content")
        if kind == "tool_result":
            if not isinstance(content, str | list):
                raise InvalidEditError(f"{where}: a tool result's 'content' must be text")
            is_error = item.get("is_error", False)
            if not isinstance(is_error, bool):
                raise InvalidEditError(f"{where}: 'is_error' must be true or false")
            try:
                edits.append((step, ToolResultEdit(content, is_error=is_error)))
            except InvalidEditError as exc:
                raise InvalidEditError(f"{where}: {exc}") from None
        elif kind == "model_answer":
            stop = item.get("stop_reason")
            if stop is not None and not isinstance(stop, str):
                raise InvalidEditError(f"{where}: 'stop_reason' must be text")
            if isinstance(content, str):
                edits.append((step, ModelAnswerEdit.text(content)))
            elif isinstance(content, list):
                try:
                    edits.append((step, ModelAnswerEdit(content, stop)))
                except InvalidEditError as exc:
                    raise InvalidEditError(f"{where}: {exc}") from None
            else:
                raise InvalidEditError(
                    f"{where}: a model answer's 'content' must be text or content blocks"
                )
        else:
            raise InvalidEditError(
                f"{where}: 'kind' must be 'tool_result' or 'model_answer', not {kind!r:.40}"
            )
    return edits


def fork_argv(
    trace: str, step: int, edit: Any, trace_dir: str, *, resume_in: str | None = None
) -> list[str]:
    """The ``regista fork|rewind`` arguments (before ``-- CMD``) for one edit of ``step``
    (a :class:`~regista.fork.ToolResultEdit` or :class:`~regista.fork.ModelAnswerEdit`;
    ``None``: a rewind to ``step``): what the TUI tells a person to run. ``resume_in``
    (``claude`` / ``codex``): the line that writes the fork back into that CLI instead."""
    from regista.cli._common import literal_arg
    from regista.fork import ModelAnswerEdit

    tail = ["--resume-in", resume_in] if resume_in else ["--trace-dir", trace_dir]
    if edit is None:
        return ["regista", "rewind", trace, "--at", str(step), *tail]
    argv = ["regista", "fork", trace, "--at", str(step)]
    if isinstance(edit, ModelAnswerEdit):
        answer: dict[str, Any] = {"content": edit.content}
        if edit.stop_reason is not None:
            answer["stop_reason"] = edit.stop_reason
        argv += ["--answer", orjson.dumps(answer).decode()]
    else:
        content = edit.content
        argv += [
            "--tool-result",
            literal_arg(content if isinstance(content, str) else orjson.dumps(content).decode()),
        ]
        argv += ["--error"] if edit.is_error else []
    return [*argv, *tail]
