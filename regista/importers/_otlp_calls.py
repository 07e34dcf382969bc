"""One model span of an OTLP export as a model call: request and answer in regista's shape.

The instrumentations write a call in three styles, read in this order of faithfulness:

- **OpenInference's raw bodies**: ``input.value`` / ``output.value`` holding the JSON the SDK
  sent and got (``input.mime_type: application/json``). They are normalised by the very
  functions the recording proxy uses (``regista.wire.shapes``), so an imported call is the
  request the proxy would have recorded, byte for byte.
- **The GenAI conventions** (OpenLLMetry today, regista's own export):
  ``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.system_instructions``,
  ``gen_ai.tool.definitions``.
- **The indexed styles**: OpenLLMetry's older ``gen_ai.prompt.N.*`` /
  ``gen_ai.completion.N.*`` and OpenInference's ``llm.input_messages.N.message.*`` /
  ``llm.output_messages.N.message.*`` (with ``tool_calls.N.tool_call.*``), ``llm.tools.N.*``.

Messages are converted to the Anthropic shape as the proxy converts each API: a ``system``
(or ``developer``) message becomes the system prompt, tool results go into user messages,
and for OpenAI a tool result's text is its one text block.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = [
    "ModelCall",
    "finish_reason_of",
    "genai_messages",
    "indexed_messages",
    "json_value",
    "provider_of",
    "read_call",
]

_FINISH = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_call": "tool_use",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}
_SYSTEM_ROLES = ("system", "developer")


def json_value(value: Any) -> Any:
    """``value`` parsed when it is JSON text (else ``None``), as is when it is not text."""
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


@dataclass
class ModelCall:
    """A model span read: what was sent and what came back (``None``: not captured)."""

    model: str
    provider: str
    system: str | None = None
    messages: list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: dict[str, Any] | None = None
    max_tokens: int = 0
    params: dict[str, Any] = field(default_factory=dict)
    #: The answer in the Messages response shape, without usage (``None``: not captured).
    response: dict[str, Any] | None = None
    #: The response's id (from the attributes, or the raw body).
    response_id: str | None = None


def _text(value: Any) -> str:
    """An id or a name as the trace holds it: text (an instrumentation may leave it out)."""
    return value if isinstance(value, str) else "" if value is None else str(value)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def provider_of(attrs: dict[str, Any]) -> str:
    """Who served the call, lower case (``anthropic``, ``openai``, …; ``unknown``)."""
    for key in ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system"):
        found = _str(attrs.get(key))
        if found:
            name = found.lower()
            return "scripted" if name == "regista.scripted" else name
    return "unknown"


def model_of(attrs: dict[str, Any]) -> str:
    for key in (
        "gen_ai.request.model",
        "llm.request.model_name",
        "llm.model_name",
        "gen_ai.response.model",
    ):
        found = _str(attrs.get(key))
        if found:
            return found
    return "unknown"


# -- the GenAI conventions ---------------------------------------------------------------


def _block(part: dict[str, Any], openai: bool) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": str(part.get("content", ""))}
    if kind == "tool_call":
        args = json_value(part.get("arguments"))
        return {
            "type": "tool_use",
            "id": _text(part.get("id")),
            "name": _text(part.get("name")),
            "input": args if isinstance(args, dict) else {},
        }
    if kind == "tool_call_response":
        content = part.get("response", "")
        if part.get("regista.shape") == "blocks" and isinstance(content, str):
            content = [{"type": "text", "text": content}]
        elif openai and isinstance(content, str):  # as the proxy reads a `tool` message
            content = [{"type": "text", "text": content}] if content else []
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": _text(part.get("id")),
            "content": content,
        }
        if part.get("is_error"):
            block["is_error"] = True
        return block
    if kind == "reasoning":
        signature = part.get("signature")
        return {
            "type": "thinking",
            "thinking": str(part.get("content", "")),
            "signature": signature if isinstance(signature, str) else "",
        }
    if kind == "blob":
        return {
            "type": str(part.get("modality") or "image"),
            "source": {
                "type": "base64",
                "media_type": part.get("mime_type"),
                "data": part.get("content", ""),
            },
        }
    if kind == "uri":
        return {
            "type": str(part.get("modality") or "image"),
            "source": {"type": "url", "url": part.get("uri", "")},
        }
    return dict(part)


def _add(out: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    """Append a message, joining consecutive user content (tool results and text)."""
    if out and out[-1]["role"] == role == "user" and isinstance(out[-1]["content"], list):
        out[-1]["content"].extend(blocks)
    else:
        out.append({"role": role, "content": blocks})


def genai_messages(
    value: Any, openai: bool = False, system: list[str] | None = None
) -> list[dict[str, Any]] | None:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` as Anthropic messages; the
    text of system messages goes to ``system`` when it is given."""
    parsed = json_value(value)
    if not isinstance(parsed, list):
        return None
    out: list[dict[str, Any]] = []
    for m in parsed:
        if not isinstance(m, dict):
            continue
        raw_parts = m.get("parts")
        parts = [p for p in raw_parts if isinstance(p, dict)] if isinstance(raw_parts, list) else []
        kept = m.get("regista.message")
        if isinstance(kept, dict):  # regista's export: the message as it was
            role = m.get("role") if m.get("role") in ("user", "assistant", "system") else "user"
            extra = {k: v for k, v in kept.items() if k not in ("role", "content")}
            out.append({**extra, "role": role, "content": [_block(p, openai) for p in parts]})
            continue
        if m.get("role") in _SYSTEM_ROLES and system is not None:
            system.extend(str(p.get("content", "")) for p in parts if p.get("type") == "text")
            continue
        role = "assistant" if m.get("role") == "assistant" else "user"
        _add(out, role, [_block(p, openai) for p in parts])
    return out


def _system_instructions(attrs: dict[str, Any]) -> str | None:
    parts = json_value(attrs.get("gen_ai.system_instructions"))
    if isinstance(parts, list):
        return "".join(str(p.get("content", "")) for p in parts if isinstance(p, dict))
    return None


def _tool(d: Any) -> dict[str, Any] | None:
    """A tool definition in any of the shapes instrumentations write, as Anthropic's."""
    if not isinstance(d, dict):
        return None
    fn = d.get("function")
    if isinstance(fn, dict):  # OpenAI's {"type": "function", "function": {…}}
        d = fn
    schema = d.get("input_schema", d.get("parameters"))
    description = d.get("description")
    return {
        "name": _text(d.get("name")),
        "description": description if isinstance(description, str) else None,
        "input_schema": schema if isinstance(schema, dict) else {},
    }


def _tools(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    defs = json_value(attrs.get("gen_ai.tool.definitions"))
    if not isinstance(defs, list):
        defs = [json_value(row.get("tool.json_schema")) for row in indexed(attrs, "llm.tools.")]
    return [t for t in (_tool(d) for d in defs) if t is not None]


# -- the indexed styles ------------------------------------------------------------------


def indexed(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.N.key`` attributes as a list of dicts (OpenLLMetry / OpenInference styles)."""
    rows: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        head, _, rest = key[len(prefix) :].partition(".")
        if head.isdigit() and rest:
            rows.setdefault(int(head), {})[rest] = value
    return [rows[i] for i in sorted(rows)]


def _row_blocks(row: dict[str, Any], content_key: str, openai: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    content = row.get(content_key)
    if isinstance(content, str) and content:
        parsed = json_value(content) if content[:1] == "[" else None
        if isinstance(parsed, list) and all(isinstance(b, dict) and "type" in b for b in parsed):
            blocks.extend(parsed)  # OpenLLMetry writes Anthropic content blocks as JSON
        else:
            blocks.append({"type": "text", "text": content})
    elif content_key == "message.content":  # OpenInference's typed contents
        for part in indexed(row, "message.contents."):
            if part.get("message_content.type") == "text":
                blocks.append({"type": "text", "text": str(part.get("message_content.text", ""))})
    for call in indexed(row, "tool_calls.") or indexed(row, "message.tool_calls."):
        args = json_value(call.get("arguments", call.get("tool_call.function.arguments")))
        blocks.append(
            {
                "type": "tool_use",
                "id": _text(call.get("id", call.get("tool_call.id"))),
                "name": _text(call.get("name", call.get("tool_call.function.name"))),
                "input": args if isinstance(args, dict) else {},
            }
        )
    return blocks


def indexed_messages(
    attrs: dict[str, Any], kind: str, openai: bool = False, system: list[str] | None = None
) -> list[dict[str, Any]] | None:
    """Prompts (``kind`` "in") or completions ("out") in the indexed attribute styles."""
    rows = indexed(attrs, "gen_ai.prompt." if kind == "in" else "gen_ai.completion.")
    role_key, content_key, call_key = "role", "content", "tool_call_id"
    if not rows:
        rows = indexed(attrs, "llm.input_messages." if kind == "in" else "llm.output_messages.")
        role_key, content_key = "message.role", "message.content"
        call_key = "message.tool_call_id"
    if not rows:
        return None
    out: list[dict[str, Any]] = []
    for row in rows:
        role = row.get(role_key)
        blocks = _row_blocks(row, content_key, openai)
        if role in _SYSTEM_ROLES and system is not None:
            system.extend(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        elif role == "tool":
            text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
            result: Any = ([{"type": "text", "text": text}] if text else []) if openai else text
            block = {
                "type": "tool_result",
                "tool_use_id": _text(row.get(call_key)),
                "content": result,
            }
            _add(out, "user", [block])
        else:
            _add(out, "assistant" if role == "assistant" else "user", blocks)
    return out


# -- OpenInference's raw bodies ----------------------------------------------------------


def _raw(attrs: dict[str, Any], key: str) -> dict[str, Any] | None:
    if attrs.get(f"{key}.mime_type") != "application/json":
        return None
    body = json_value(attrs.get(f"{key}.value"))
    return body if isinstance(body, dict) else None


def _raw_request(attrs: dict[str, Any], call: ModelCall) -> bool:
    body = _raw(attrs, "input")
    if body is None or not isinstance(body.get("messages"), list):
        return False
    from regista.errors import RegistaError
    from regista.wire.shapes import anthropic_request, openai_request

    try:
        request = (openai_request if call.provider == "openai" else anthropic_request)(body)
    except (RegistaError, ValueError, TypeError, AttributeError):
        return False
    call.system, call.messages = request.system, list(request.messages)
    call.tools, call.tool_choice = list(request.tools), request.tool_choice
    call.max_tokens, call.params = request.max_tokens, dict(request.params)
    call.model = request.model or call.model
    return True


def _raw_response(attrs: dict[str, Any], call: ModelCall) -> bool:
    body = _raw(attrs, "output")
    if body is None:
        return False
    if isinstance(body.get("choices"), list):
        from regista.wire.shapes import openai_response

        try:
            payload = openai_response(body).payload()
        except (ValueError, TypeError, AttributeError):
            return False
    elif isinstance(body.get("content"), list) and body.get("role") == "assistant":
        # The SDK's model dumped: its unset fields are nulls the API never sent.
        payload = {k: v for k, v in body.items() if v is not None}
        payload["content"] = [
            {k: v for k, v in b.items() if v is not None} if isinstance(b, dict) else b
            for b in body["content"]
        ]
    else:
        return False
    payload.pop("usage", None)
    call.response = payload
    call.response_id = _str(payload.get("id")) or call.response_id
    return True


# -- a span ------------------------------------------------------------------------------


def _int(attrs: dict[str, Any], key: str) -> int | None:
    v = attrs.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


_PARAMS = {
    "gen_ai.request.temperature": "temperature",
    "gen_ai.request.top_p": "top_p",
    "gen_ai.request.top_k": "top_k",
    "gen_ai.request.seed": "seed",
    "gen_ai.request.stop_sequences": "stop_sequences",
}


def finish_reason_of(attrs: dict[str, Any]) -> str | None:
    """The Anthropic ``stop_reason`` that a span's finish reason attributes say."""
    reasons = attrs.get("gen_ai.response.finish_reasons")
    reason = reasons[0] if isinstance(reasons, list) and reasons else None
    if reason is None:
        reason = attrs.get("llm.finish_reason", attrs.get("anthropic.message.stop_reason"))
    if reason is None:
        return None
    return _FINISH.get(str(reason), str(reason))


def read_call(attrs: dict[str, Any]) -> ModelCall:
    """The model call that a chat span's attributes describe."""
    call = ModelCall(model=model_of(attrs), provider=provider_of(attrs))
    call.response_id = _str(attrs.get("gen_ai.response.id"))
    openai = call.provider == "openai"
    if not _raw_request(attrs, call):
        system: list[str] = []
        messages = genai_messages(attrs.get("gen_ai.input.messages"), openai, system)
        if messages is None:
            messages = indexed_messages(attrs, "in", openai, system)
        call.messages = messages
        instructions = _system_instructions(attrs)
        if instructions is not None:
            system.insert(0, instructions)
        call.system = "\n\n".join(system) or None
        call.tools = _tools(attrs)
        call.max_tokens = _int(attrs, "gen_ai.request.max_tokens") or 0
        invocation = json_value(attrs.get("llm.invocation_parameters"))
        if not call.max_tokens and isinstance(invocation, dict):
            found = invocation.get("max_tokens")
            call.max_tokens = found if isinstance(found, int) else 0
        call.params = {k: attrs[key] for key, k in _PARAMS.items() if key in attrs}
        extra = json_value(attrs.get("regista.request"))  # regista's own export
        if isinstance(extra, dict):
            tools, choice = extra.get("tools"), extra.get("tool_choice")
            params = extra.get("params")
            if isinstance(tools, list) and all(isinstance(t, dict) for t in tools):
                call.tools = tools
            call.tool_choice = choice if isinstance(choice, dict) else None
            call.params = params if isinstance(params, dict) else call.params
    if not _raw_response(attrs, call):
        out = genai_messages(attrs.get("gen_ai.output.messages"), openai)
        if out is None:
            out = indexed_messages(attrs, "out", openai)
        if out is not None:
            call.response = {
                "id": call.response_id,
                "model": attrs.get("gen_ai.response.model"),
                "role": "assistant",
                "content": [b for m in out for b in m["content"]],
                "stop_reason": finish_reason_of(attrs),
                "stop_sequence": None,
            }
    return call
