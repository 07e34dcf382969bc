"""The edge between the providers' HTTP shapes and regista's normalised model I/O.

Requests and responses are normalised to the Anthropic Messages shape (the trace's). An
OpenAI chat completion keeps what that loses (its ids, ``created``, the raw argument
strings of its tool calls, ``finish_reason``, the raw usage, …) under the response's
``openai`` field, so a replay serves the very body the provider sent.

The strict replay digest (:func:`sdk_digest`) covers the system prompt and the messages
only: the model name, tools and sampling parameters are not part of it. The volatile spans
that a client varies by itself (the date, its folder, …: :mod:`regista.diff.masks`) are
masked before it is taken.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from regista.diff.masks import MaskHit, MaskSet
from regista.redact import redact_bytes
from regista.trace.canonical import canonical_json
from regista.types import LlmRequest, LlmResponse, Usage
from regista.wire.errors import ErrorShape, HttpError

__all__ = [
    "anthropic_body",
    "anthropic_request",
    "masked_form",
    "openai_body",
    "openai_request",
    "openai_response",
    "openai_tool_choice",
    "sdk_digest",
    "tool_arguments",
]

_FINISH_TO_STOP = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_STOP_TO_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}


#: Fields regista itself puts on a message (an importer's ``origin``: a meta or developer
#: message of a transcript): no provider saw them, so no digest covers them.
OWN_MESSAGE_FIELDS = frozenset({"origin"})


def digest_form(system: str | None, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """What the strict digest covers: the system prompt, and the messages as the provider
    saw them: a string ``content`` written as its one text block (both shapes say the same
    thing either way), regista's own fields (:data:`OWN_MESSAGE_FIELDS`) left out."""
    return {
        "system": system or None,
        "messages": [_as_sent(m) for m in messages],
    }


def _as_sent(m: dict[str, Any]) -> dict[str, Any]:
    content = m.get("content")
    if isinstance(content, str):
        m = {**m, "content": [{"type": "text", "text": content}] if content else []}
    if not OWN_MESSAGE_FIELDS.isdisjoint(m):
        m = {k: v for k, v in m.items() if k not in OWN_MESSAGE_FIELDS}
    return m


def masked_form(
    system: str | None, messages: list[dict[str, Any]], masks: MaskSet | None = None
) -> tuple[dict[str, Any], list[MaskHit]]:
    """The :func:`digest_form` with the volatile spans ``masks`` name replaced by their
    placeholders, and what was masked."""
    form = digest_form(system, messages)
    return masks.apply(form) if masks else (form, [])


def sdk_digest(
    system: str | None, messages: list[dict[str, Any]], masks: MaskSet | None = None
) -> str:
    """The strict replay digest: SHA-256 of the canonical :func:`digest_form` (its volatile
    spans masked by ``masks``), secrets redacted (``request_hash`` of it, in one pass: a
    server gets a fresh parse of the history on every call, so there is nothing to remember
    message by message). With no mask hit, the digest is the unmasked one."""
    form, _ = masked_form(system, messages, masks)
    return hashlib.sha256(redact_bytes(canonical_json(form))).hexdigest()


def _bad(message: str, shape: ErrorShape) -> HttpError:
    return HttpError(400, message, shape=shape)


def _messages(body: dict[str, Any], shape: ErrorShape) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad("'messages' must be a non-empty list", shape)
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise _bad(f"messages[{i}] must be an object with a 'role'", shape)
    return messages


#: Request fields that are part of the normalised request, or of how it was sent
#: (``stream``: the answer says whether it streamed).
_MODELLED = frozenset(
    (
        "model",
        "system",
        "messages",
        "tools",
        "tool_choice",
        "max_tokens",
        "max_completion_tokens",
        "stream",
        "stream_options",
    )
)


def _params(body: dict[str, Any]) -> dict[str, Any]:
    """Every other field of a request, verbatim under its own name: the sampling
    parameters, and the fields regista has no model for (``service_tier``, ``container``,
    ``mcp_servers``, a field newer than this regista, …), which are kept, never dropped."""
    return {k: v for k, v in body.items() if k not in _MODELLED}


def _max_tokens(body: dict[str, Any], *names: str) -> int:
    for name in names:
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return 4096


# -- Anthropic -------------------------------------------------------------------------------


def anthropic_request(body: dict[str, Any]) -> LlmRequest:
    """A Messages API request body, normalised (``system`` blocks joined into text, a string
    ``content`` written as its text block, as regista's own loop writes it)."""
    messages = _messages(body, "anthropic")
    for i, m in enumerate(messages):
        if not isinstance(m.get("content"), str | list):
            raise _bad(f"messages[{i}].content must be a string or a list", "anthropic")
    system = body.get("system")
    if isinstance(system, list):
        system = "\n\n".join(
            str(b.get("text", "")) for b in system if isinstance(b, dict) and "text" in b
        )
    elif system is not None and not isinstance(system, str):
        raise _bad("'system' must be a string or a list of text blocks", "anthropic")
    tools = body.get("tools") or []
    tool_choice = body.get("tool_choice")
    return LlmRequest(
        model=str(body.get("model") or ""),
        system=system or None,
        messages=digest_form(None, messages)["messages"],
        tools=tools if isinstance(tools, list) else [],
        tool_choice=tool_choice if isinstance(tool_choice, dict) else None,
        max_tokens=_max_tokens(body, "max_tokens"),
        params=_params(body),
    )


def anthropic_body(response: LlmResponse) -> dict[str, Any]:
    """The Messages API response body of ``response``."""
    body = response.payload()
    body.pop("openai", None)
    body.pop("openai_responses", None)
    body.setdefault("type", "message")
    if not body.get("id"):
        body["id"] = "msg_regista_replay"
    if body.get("stop_reason") is None:  # a source that did not say (an imported transcript)
        body["stop_reason"] = derived_stop_reason(response)
    return body


def derived_stop_reason(response: LlmResponse) -> str:
    """The stop reason of an answer whose source did not record one: ``tool_use`` beside
    tool calls (the client's loop runs them and calls again), else ``end_turn``."""
    return "tool_use" if response.tool_uses else "end_turn"


# -- OpenAI chat completions -----------------------------------------------------------------


def _openai_content(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    if isinstance(content, list):
        for part in content:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                blocks.append({"type": "text", "text": str(part.get("text", ""))})
            elif kind == "image_url":
                url = part.get("image_url", {})
                url = url.get("url") if isinstance(url, dict) else url
                blocks.append({"type": "image", "source": {"type": "url", "url": url}})
            else:
                blocks.append({"type": "openai_part", "part": part})
    return blocks


def tool_arguments(raw: Any) -> dict[str, Any]:
    """A tool call's arguments as an object: a JSON string parsed; anything else that is
    not an object is kept whole under ``_raw_arguments``."""
    if isinstance(raw, str):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"_raw_arguments": raw}
        return value if isinstance(value, dict) else {"_raw_arguments": raw}
    return raw if isinstance(raw, dict) else {}


#: The fields of an OpenAI message that its normalised form holds.
_MESSAGE_FIELDS = frozenset(("role", "content", "tool_calls", "tool_call_id"))


def _kept(message: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
    """``message`` with the other fields of the OpenAI message it came from (``refusal``,
    ``audio``, ``name``, …) kept verbatim under ``openai``; empty ones are left out."""
    extra = {
        k: v
        for k, v in raw.items()
        if k not in _MESSAGE_FIELDS and v is not None and v != [] and v != {}
    }
    if extra:
        message["openai"] = extra
    return message


_CHOICES = {"auto": "auto", "required": "any", "none": "none"}


def openai_tool_choice(choice: Any) -> dict[str, Any] | None:
    """An OpenAI ``tool_choice`` in the Messages shape, the original kept under ``openai``
    (what a replay or a live call sends back): ``auto`` → ``{"type": "auto"}``, ``required``
    → ``any``, ``none`` → ``none``, a named function → ``{"type": "tool", "name": …}``.
    A shape with no Messages equivalent is kept verbatim, marked ``openai_tool_choice``."""
    if choice is None:
        return None
    if isinstance(choice, str) and choice in _CHOICES:
        return {"type": _CHOICES[choice], "openai": choice}
    if isinstance(choice, dict) and choice.get("type") == "function":
        fn = choice.get("function")
        name = fn.get("name") if isinstance(fn, dict) else None
        if isinstance(name, str):
            return {"type": "tool", "name": name, "openai": choice}
    return {"type": "openai_tool_choice", "openai": choice}


#: The fields of an OpenAI function tool that its normalised form holds.
_FUNCTION_FIELDS = frozenset(("name", "description", "parameters"))


def _openai_tool(tool: Any) -> dict[str, Any]:
    """An OpenAI tool as a Messages tool (name, description, input schema). What that
    leaves out — a function's ``strict``, a tool of another type (``custom``, a built-in
    one), … — is kept verbatim under ``openai``."""
    t = tool if isinstance(tool, dict) else {}
    fn = t.get("function")
    if t.get("type", "function") == "function" and isinstance(fn, dict):
        out = {
            "name": str(fn.get("name", "")),
            "description": fn.get("description", ""),
            "input_schema": fn.get("parameters", {}),
        }
        if set(fn) - _FUNCTION_FIELDS or set(t) - {"type", "function"}:
            out["openai"] = tool
        return out
    kind = t.get("type")
    named = t.get(kind) if isinstance(kind, str) else None
    name = named.get("name") if isinstance(named, dict) else None
    return {"name": str(name if name is not None else kind or ""), "openai": tool}


def openai_tool_text(value: Any) -> str:
    """A tool result (text or content blocks) as a chat completions ``tool`` message's
    content: text as it is, blocks as their JSON."""
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def openai_tool_result(value: Any) -> list[dict[str, Any]]:
    """A tool result as :func:`openai_request` reads it back from a ``tool`` message."""
    return _openai_content(openai_tool_text(value))


def openai_request(body: dict[str, Any]) -> LlmRequest:
    """A chat completions request, normalised to the Messages shape.

    ``system`` / ``developer`` messages become the system prompt; an assistant's
    ``tool_calls`` become ``tool_use`` blocks; consecutive ``tool`` messages become one user
    message of ``tool_result`` blocks.
    """
    raw = _messages(body, "openai")
    system: list[str] = []
    messages: list[dict[str, Any]] = []
    for m in raw:
        role = m["role"]
        if role in ("system", "developer"):
            system.extend(b["text"] for b in _openai_content(m.get("content")) if "text" in b)
        elif role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": str(m.get("tool_call_id", "")),
                "content": _openai_content(m.get("content")),
            }
            last = messages[-1] if messages else None
            if (
                last is not None
                and last["role"] == "user"
                and last["content"]
                and all(b.get("type") == "tool_result" for b in last["content"])
            ):
                last["content"].append(block)
            else:
                messages.append({"role": "user", "content": [block]})
        elif role == "assistant":
            content = _openai_content(m.get("content"))
            for call in m.get("tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                fn = call.get("function") or {}
                content.append(
                    {
                        "type": "tool_use",
                        "id": str(call.get("id", "")),
                        "name": str(fn.get("name", "")),
                        "input": tool_arguments(fn.get("arguments")),
                    }
                )
            messages.append(_kept({"role": "assistant", "content": content}, m))
        else:
            messages.append(
                _kept({"role": "user", "content": _openai_content(m.get("content"))}, m)
            )
    tools = [_openai_tool(t) for t in body.get("tools") or []]
    return LlmRequest(
        model=str(body.get("model") or ""),
        system="\n\n".join(system) or None,
        messages=messages,
        tools=tools,
        tool_choice=openai_tool_choice(body.get("tool_choice")),
        max_tokens=_max_tokens(body, "max_completion_tokens", "max_tokens"),
        params=_params(body),
    )


def openai_response(body: dict[str, Any]) -> LlmResponse:
    """A chat completion, normalised; what the Messages shape loses is kept in ``openai``."""
    choices = body.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message") or {}
    content = _openai_content(message.get("content"))
    arguments: list[str] = []
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        arguments.append(str(fn.get("arguments", "")))
        content.append(
            {
                "type": "tool_use",
                "id": str(call.get("id", "")),
                "name": str(fn.get("name", "")),
                "input": tool_arguments(fn.get("arguments")),
            }
        )
    usage = body.get("usage")
    finish = choice.get("finish_reason")
    kept = {k: v for k, v in body.items() if k not in ("choices",)}
    kept["finish_reason"] = finish
    kept["arguments"] = arguments
    kept["message"] = {k: v for k, v in message.items() if k not in ("content", "tool_calls")}
    kept["content_was_null"] = message.get("content") is None
    return LlmResponse(
        id=body.get("id"),
        model=body.get("model"),
        content=content,
        stop_reason=_FINISH_TO_STOP.get(str(finish), "end_turn"),
        usage=openai_usage(usage),
        openai=kept,
    )


def _count(d: Any, key: str) -> int:
    value = d.get(key) if isinstance(d, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def openai_usage(usage: Any) -> Usage:
    """OpenAI's usage counted as the trace counts it (Anthropic's way): ``input_tokens``
    without the cached prompt tokens, which are ``cache_read_input_tokens``; reasoning
    tokens (part of the output) also as ``reasoning_output_tokens``."""
    if not isinstance(usage, dict):
        usage = {}
    cached = _count(usage.get("prompt_tokens_details"), "cached_tokens")
    reasoning = _count(usage.get("completion_tokens_details"), "reasoning_tokens")
    counts = {
        "input_tokens": max(_count(usage, "prompt_tokens") - cached, 0),
        "output_tokens": _count(usage, "completion_tokens"),
        "cache_read_input_tokens": cached,
    }
    if reasoning:
        counts["reasoning_output_tokens"] = reasoning
    return Usage.model_validate(counts)


def usage_body(u: Usage) -> dict[str, Any]:
    """A chat completion's ``usage`` for counts kept the trace's way: ``prompt_tokens``
    include the cached ones (read and written), as OpenAI counts them."""
    cached = u.cache_read_input_tokens
    prompt = u.input_tokens + cached + u.cache_creation_input_tokens
    reasoning = (u.model_extra or {}).get("reasoning_output_tokens")
    return {
        "prompt_tokens": prompt,
        "completion_tokens": u.output_tokens,
        "total_tokens": prompt + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {
            "reasoning_tokens": reasoning if isinstance(reasoning, int) else 0
        },
    }


def openai_body(response: LlmResponse, model: str) -> dict[str, Any]:
    """The chat completion body of ``response``: the recorded one exactly when it was
    recorded from OpenAI, else built from the Messages shape."""
    kept: dict[str, Any] = dict(getattr(response, "openai", None) or {})
    text = "".join(b.get("text", "") for b in response.content if b.get("type") == "text")
    uses = [b for b in response.content if b.get("type") == "tool_use"]
    raw_args: list[str] = list(kept.pop("arguments", []))
    tool_calls = [
        {
            "id": b.get("id", ""),
            "type": "function",
            "function": {
                "name": b.get("name", ""),
                "arguments": raw_args[i]
                if i < len(raw_args)
                else orjson.dumps(b.get("input", {})).decode(),
            },
        }
        for i, b in enumerate(uses)
    ]
    message: dict[str, Any] = {"role": "assistant"}
    message.update(kept.pop("message", {}))
    was_null = kept.pop("content_was_null", False)
    message["content"] = None if (was_null and not text) else text
    if tool_calls:
        message["tool_calls"] = tool_calls
    finish = kept.pop("finish_reason", None) or (
        _STOP_TO_FINISH.get(response.stop_reason, "stop")
        if response.stop_reason is not None
        else "tool_calls"
        if tool_calls
        else "stop"
    )
    body: dict[str, Any] = {
        "id": response.id or "chatcmpl-regista-replay",
        "object": "chat.completion",
        "created": 0,
        "model": response.model or model,
    }
    body.update(kept)
    body["choices"] = [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}]
    if "usage" not in kept:  # else as recorded (null: a stream that did not ask for it)
        body["usage"] = usage_body(response.usage)
    return body
