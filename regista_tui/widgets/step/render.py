"""Rich renderables for one step: the readable view, the raw JSON and the request diff.

Every value is cut to ``limit`` characters before it is styled, so a step holding a
300 KB tool result costs no more to show than a small one ("show more" raises the limit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson
from rich.console import Group, RenderableType
from rich.text import Text

from regista.engine import Change, short_repr
from regista_tui.widgets.step.json_view import JsonView

if TYPE_CHECKING:
    from regista.engine import Step

__all__ = ["render_changes", "render_raw", "render_step"]

OP_STYLE = {"added": "green", "removed": "red", "changed": "yellow"}


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… {len(text) - limit:,} more characters (m: show more)"


def _json(value: Any, limit: int) -> RenderableType:
    return JsonView(value, limit)


def _text_or_json(text: str, limit: int, style: str = "") -> RenderableType:
    """A text as it is, or, when it holds a JSON object or array, that JSON pretty-printed."""
    if text[:1] in "{[":
        try:
            return _json(orjson.loads(text), limit)
        except orjson.JSONDecodeError:
            pass
    return Text(_cut(text, limit), style)


def _heading(title: str, detail: str = "") -> Text:
    text = Text(title, "bold underline")
    if detail:
        text.append("  " + detail, "dim")
    return text


def _block(block: dict[str, Any], limit: int) -> list[RenderableType]:
    kind = block.get("type")
    if kind == "text":
        return [Text(_cut(str(block.get("text", "")), limit))]
    if kind == "tool_use":
        head = Text("tool_use ", "bold green")
        head.append(f"{block.get('name')}", "green")
        head.append(f"  {block.get('id', '')}", "dim")
        return [head, _json(block.get("input"), limit)]
    if kind == "tool_result":
        head = Text("tool_result ", "bold green")
        head.append(str(block.get("tool_use_id", "")), "dim")
        if block.get("is_error"):
            head.append("  error", "bold red")
        content = block.get("content")
        body: RenderableType = (
            _text_or_json(content, limit) if isinstance(content, str) else _json(content, limit)
        )
        return [head, body]
    if kind == "thinking":
        return [
            Text("thinking", "bold dim"),
            Text(_cut(str(block.get("thinking", "")), limit), "dim italic"),
        ]
    return [_json(block, limit)]


def _message(message: dict[str, Any], number: int | None, limit: int) -> list[RenderableType]:
    role = str(message.get("role", "?"))
    head = Text(f"[{number}] " if number is not None else "", "dim")
    head.append(role, "bold magenta" if role == "assistant" else "bold blue")
    out: list[RenderableType] = [head]
    content = message.get("content")
    if isinstance(content, str):
        out.append(Text(_cut(content, limit)))
    else:
        for block in content or []:
            out.extend(_block(block, limit))
    return out


def _model(step: Step, limit: int, model_label: str | None) -> list[RenderableType]:
    """What the model answered first, then the request it answered (system prompt, tools
    and the messages new in this turn)."""
    out: list[RenderableType] = []
    resp = step.response_event
    if resp is None:
        out.append(Text("No response was recorded for this request.", "yellow"))
    else:
        from regista.engine import cost_text, tokens_of

        try:
            tokens = f"tokens {tokens_of(resp.response.get('usage')).text(brief=True)}"
        except ValueError:  # an odd usage: say so rather than fail
            tokens = "tokens unreadable"
        model = model_label or resp.response.get("model") or resp.provider
        # An unknown cost says so: never blank, never $0.
        stop = resp.response.get("stop_reason")
        # A response without a stop reason (an imported one split over lines) says none.
        stop_text = f"stop_reason {stop} · " if stop else ""
        detail = (
            f"{model} · {stop_text}{tokens} · "
            f"{cost_text(resp.cost_usd)} · {_took(step)} · {resp.source}"
        )
        out.append(_heading("Response", detail))
        for block in resp.response.get("content") or []:
            out.extend(_block(block, limit))
    req = step.request_event
    if req is not None:
        out.append(Text(""))
        params = ", ".join(f"{k}={short_repr(v, 30)}" for k, v in req.params.items())
        detail = f"turn {req.turn} · {req.model} · max_tokens {req.max_tokens}"
        out.append(_heading("Request", detail + (f" · {params}" if params else "")))
        if req.system:
            out.append(Text("system ", "bold").append(_cut(req.system, min(limit, 400)), "dim"))
        tools = ", ".join(str(t.get("name")) for t in req.tools) or "none"
        out.append(Text("tools ", "bold").append(tools, "green"))
        kept = f"{req.messages_prefix} earlier messages kept" if req.messages_prefix else ""
        out.append(Text(f"new messages: {len(req.messages)}  {kept}", "bold"))
        for i, msg in enumerate(req.messages):
            out.extend(_message(msg, req.messages_prefix + i, limit))
    return out


def _took(step: Step) -> str:
    """How long the step took, as every view says (``regista.breakdown.took_ms``)."""
    from regista.engine import step_ms

    ms = step_ms(step)
    return "time unknown" if ms is None else f"{ms:.0f} ms"


def _tool(step: Step, limit: int) -> list[RenderableType]:
    out: list[RenderableType] = []
    call, dec, res = step.tool_call, step.decision, step.result
    if call is not None:
        out.append(_heading(f"Tool call {call.name}", f"{call.tool_use_id} · turn {call.turn}"))
        out.append(_json(call.input, limit))
    if dec is not None:
        verdict = Text("allowed", "bold green") if dec.allowed else Text("denied", "bold red")
        line = Text("Permission ", "bold").append(verdict).append(f" by {dec.by}", "dim")
        if dec.reason:
            line.append(f": {dec.reason}")
        out.append(line)
    if res is None:
        out.append(Text("No result was recorded for this call.", "yellow"))
        return out
    denied = dec is not None and not dec.allowed
    detail = f"{res.source} · " + ("not run" if denied else _took(step))
    head = _heading("Result", detail)
    if res.is_error:
        head.append("  error", "bold red")
    out.append(head)
    if isinstance(res.content, str):
        out.append(_text_or_json(res.content, limit, "red" if res.is_error else ""))
    else:
        for block in res.content:
            out.extend(_block(block, limit))
    return out


def _compaction(step: Step, limit: int) -> list[RenderableType]:
    comp = step.compaction
    if comp is None:
        return [Text("Empty compaction step.", "yellow")]
    from regista.engine import cost_text, tokens_of

    try:
        tokens = f"tokens {tokens_of(comp.usage).text(brief=True)}"
    except ValueError:  # an odd usage: say so rather than fail
        tokens = "tokens unreadable"
    # The summarising call is a model call of the run: its tokens and cost are the run's.
    detail = (
        f"{comp.tokens_before} tokens before · {comp.provider} · {tokens} · "
        f"{cost_text(comp.cost_usd)} · {_took(step)}"
    )
    out: list[RenderableType] = [
        _heading("Compaction", detail),
        Text(f"Replaced {len(comp.replaced)} messages:", "bold"),
    ]
    for i, msg in enumerate(comp.replaced):
        out.extend(_message(msg, i, min(limit, 300)))
    out.append(_heading("Summary"))
    out.append(Text(_cut(comp.summary, limit)))
    return out


def render_step(step: Step, *, limit: int = 2000, model_label: str | None = None) -> Group:
    """The readable view of a step."""
    if step.kind == "model":
        parts = _model(step, limit, model_label)
    elif step.kind == "tool":
        parts = _tool(step, limit)
    else:
        parts = _compaction(step, limit)
    for err in step.errors:
        parts.append(Text(f"error ({err.where}) {err.error_type}: {err.message}", "bold red"))
    return Group(*parts)


def render_raw(step: Step, *, limit: int = 20_000) -> RenderableType:
    """The step's events as pretty, highlighted JSON (the first ``limit`` characters)."""
    events = [ev.model_dump(mode="json") for ev in step.events]
    return _json(events, limit)


def _inline(value: Any, width: int) -> str:
    """A value on one line; a string that holds JSON is shown as that JSON, not escaped."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            text = orjson.dumps(orjson.loads(value)).decode()
        except orjson.JSONDecodeError:
            pass
        else:
            return text if len(text) <= width else text[: width - 1] + "…"
    return short_repr(value, width)


def _block_of(value: Any, limit: int) -> RenderableType:
    """An added or removed message, block or object, drawn as the step view draws it."""
    from rich.padding import Padding

    if isinstance(value, dict) and "role" in value and "content" in value:
        parts = _message(value, None, limit)
    elif isinstance(value, dict) and isinstance(value.get("type"), str):
        parts = _block(value, limit)
    else:
        parts = [JsonView(value, limit)]
    return Padding(Group(*parts), (0, 0, 0, 9))


def render_changes(changes: list[Change], *, limit: int = 200, width: int = 120) -> RenderableType:
    """Structural changes, one line each, colored by operation; an added or removed message
    or object is drawn below its line as the step view draws it (never as escaped JSON).

    Args:
        changes: The changes to show.
        limit: How many changes to show.
        width: How many characters of each value to show ("show more" raises it).
    """
    if not changes:
        return Text("No differences.", "dim")
    lines: list[RenderableType] = []
    cut = False
    for change in changes[:limit]:
        text = Text(f"{change.op:>8} ", OP_STYLE.get(change.op, ""))
        text.append(change.path, "bold")
        whole = change.new if change.op == "added" else change.old
        if change.op in ("added", "removed") and isinstance(whole, dict | list) and whole:
            lines.append(text)
            lines.append(_block_of(whole, width * 2))
            continue
        if change.op == "added":
            values = [(_inline(change.new, width), "green")]
        elif change.op == "removed":
            values = [(_inline(change.old, width), "red")]
        else:
            values = [
                (_inline(change.old, width // 2), "red"),
                (" → ", ""),
                (_inline(change.new, width // 2), "green"),
            ]
        text.append("  ")
        for value, style in values:
            text.append(value, style)
            cut = cut or value.endswith("…")
        lines.append(text)
    if len(changes) > limit:
        lines.append(Text(f"… and {len(changes) - limit} more", "dim"))
    if cut:
        lines.append(Text("… values are cut (m: show more)", "dim"))
    return Group(*lines)
