"""The OpenAI Responses API at regista's edge: requests and responses normalised to the
trace's Messages shape, the response body served back, and its SSE grammar both ways.

Requests (``POST /v1/responses``):

- ``instructions`` and the ``system`` / ``developer`` messages of ``input`` become the system
  prompt (joined by a blank line, in order), as for chat completions;
- ``message`` items become user / assistant messages (``input_text`` / ``output_text`` →
  ``text``; ``input_image`` with a URL → ``image``; any other part kept verbatim as an
  ``openai_part`` block);
- a call item (``function_call``, ``custom_tool_call``, ``local_shell_call``, ``shell_call``,
  ``apply_patch_call``, … : any ``*_call`` with a ``call_id``) becomes a ``tool_use`` block of
  the assistant's message, and its ``*_call_output`` item a ``tool_result`` block, so the
  recorder makes tool steps of them as it does of chat completions' tool calls;
- a ``reasoning`` item becomes a ``thinking`` block (its summary text), the item kept whole
  under ``openai_item``;
- any other item (``web_search_call``, ``item_reference``, ``compaction``, …) is kept
  verbatim as an ``openai_item`` block of the assistant's side: never refused.

Tools become Messages tool schemas (``name``, ``description``, ``input_schema``); what that
leaves out (a function's ``strict``, a custom or built-in tool such as ``web_search`` or
``local_shell``) is kept whole under ``openai``, as for chat completions.
``tool_choice`` is mapped as for chat completions (:func:`tool_choice_of`, the original
kept under ``openai``) and every other field that
shapes the answer (``reasoning``, ``text``, ``include``, ``store``, ``previous_response_id``,
``truncation``, …) under ``params``.

Responses keep the whole body the provider sent under the response's ``openai_responses``
field: a replay serves that very body (ids, output items, usage with its cached and
reasoning tokens). An answer that was not recorded from this API (an edit, an imported
session) is built from the Messages shape.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from regista.types import LlmRequest, LlmResponse, Message, Usage
from regista.wire.accumulate import StreamAnswer
from regista.wire.errors import HttpError
from regista.wire.shapes import openai_tool_choice, tool_arguments

__all__ = [
    "KEPT",
    "ResponsesStream",
    "responses_body",
    "responses_events",
    "responses_request",
    "responses_response",
]

#: The field of a normalised response that holds the recorded Responses body.
KEPT = "openai_responses"

#: Request fields that are not the conversation itself, kept under ``params``.
_PARAMS = (
    "temperature",
    "top_p",
    "top_logprobs",
    "parallel_tool_calls",
    "reasoning",
    "text",
    "include",
    "store",
    "previous_response_id",
    "truncation",
    "service_tier",
    "prompt",
    "prompt_cache_key",
    "prompt_cache_retention",
    "max_tool_calls",
    "background",
    "conversation",
    "safety_identifier",
    "metadata",
    "user",
)
#: Request fields that are transport, not model input (``stream``), or already normalised.
_NOT_PARAMS = {"model", "input", "instructions", "tools", "tool_choice", "max_output_tokens"}
_SIDE = {"user": "user", "assistant": "assistant"}


def _bad(message: str) -> HttpError:
    return HttpError(400, message, shape="openai")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _parts(content: Any) -> list[dict[str, Any]]:
    """A message's content (a string or a list of parts) as Messages blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "input_image" and isinstance(part.get("image_url"), str):
            blocks.append({"type": "image", "source": {"type": "url", "url": part["image_url"]}})
        else:
            blocks.append({"type": "openai_part", "part": part})
    return blocks


def _is_call(item: dict[str, Any]) -> bool:
    kind = item.get("type")
    return isinstance(kind, str) and kind.endswith("_call") and isinstance(item.get("call_id"), str)


def _is_output(item: dict[str, Any]) -> bool:
    kind = item.get("type")
    return (
        isinstance(kind, str)
        and kind.endswith("_call_output")
        and isinstance(item.get("call_id"), str)
    )


def tool_use_of(item: dict[str, Any]) -> dict[str, Any]:
    """The ``tool_use`` block of a call item (``function_call``, ``custom_tool_call``, …)."""
    kind = str(item.get("type"))
    block: dict[str, Any] = {"type": "tool_use", "id": str(item.get("call_id"))}
    if kind == "function_call":
        block["name"] = _text(item.get("name"))
        block["input"] = tool_arguments(item.get("arguments"))
        return block
    block["name"] = _text(item.get("name")) or kind.removesuffix("_call")
    if kind == "custom_tool_call":
        block["input"] = {"input": item.get("input")}
    elif isinstance(item.get("action"), dict):
        block["input"] = dict(item["action"])
    else:
        block["input"] = {
            k: v for k, v in item.items() if k not in ("type", "id", "call_id", "status")
        }
    block["openai_item"] = item
    return block


def _tool_result(item: dict[str, Any]) -> dict[str, Any]:
    output = item.get("output")
    if isinstance(output, list):
        content: str | list[dict[str, Any]] = _parts(output)
    elif isinstance(output, str):
        content = output
    else:
        content = orjson.dumps(output).decode()
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": str(item.get("call_id")),
        "content": content,
    }
    if item.get("type") != "function_call_output":
        block["openai_item"] = item
    return block


def _thinking(item: dict[str, Any]) -> dict[str, Any]:
    summary = item.get("summary")
    text = "\n\n".join(
        p["text"]
        for p in (summary if isinstance(summary, list) else [])
        if isinstance(p, dict) and isinstance(p.get("text"), str)
    )
    return {"type": "thinking", "thinking": text, "openai_item": item}


def input_messages(items: Any) -> tuple[list[str], list[Message]]:
    """The system texts and the Messages-shape messages of a request's ``input``."""
    if isinstance(items, str):
        return [], (
            [{"role": "user", "content": [{"type": "text", "text": items}]}] if items else []
        )
    if not isinstance(items, list):
        raise _bad("'input' must be a string or a list of items")
    system: list[str] = []
    messages: list[Message] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        last = messages[-1] if messages else None
        if last is not None and last["role"] == role:
            # an assistant's items make one message; only tool results join tool results
            blocks_then = [*last["content"], *blocks]
            if role == "assistant" or all(b.get("type") == "tool_result" for b in blocks_then):
                last["content"].extend(blocks)
                return
        messages.append({"role": role, "content": blocks})

    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise _bad(f"input[{i}] must be an object")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            role = item.get("role")
            role = role if isinstance(role, str) else None
            if role in ("system", "developer"):
                system.extend(b["text"] for b in _parts(item.get("content")) if "text" in b)
            elif role in _SIDE:
                add(_SIDE[role], _parts(item.get("content")))
            else:
                raise _bad(f"input[{i}].role must be user, assistant, system or developer")
        elif _is_call(item):
            add("assistant", [tool_use_of(item)])
        elif _is_output(item):
            add("user", [_tool_result(item)])
        elif kind == "reasoning":
            add("assistant", [_thinking(item)])
        else:  # web_search_call, item_reference, compaction, …: kept as sent
            add("assistant", [{"type": "openai_item", "item": item}])
    return system, messages


#: The fields of a Responses function tool that its normalised form holds.
_FUNCTION_FIELDS = frozenset(("type", "name", "description", "parameters"))


def _tools(raw: Any) -> list[dict[str, Any]]:
    """The Messages tools of a request (name, description, input schema); what that leaves
    out (a function's ``strict``, a custom or built-in tool) is kept verbatim under
    ``openai``, as for chat completions."""
    tools: list[dict[str, Any]] = []
    for t in raw if isinstance(raw, list) else []:
        if not isinstance(t, dict):
            continue
        if t.get("type") == "function":
            params = t.get("parameters")
            out: dict[str, Any] = {
                "name": _text(t.get("name")),
                "description": _text(t.get("description")),
                "input_schema": params if isinstance(params, dict) else {},
            }
            if set(t) - _FUNCTION_FIELDS or not isinstance(params, dict):
                out["openai"] = t
            tools.append(out)
        else:  # custom, web_search, local_shell, mcp, …: kept whole
            name = _text(t.get("name")) or _text(t.get("type"))
            tools.append({"name": name, "description": _text(t.get("description")), "openai": t})
    return tools


def tool_choice_of(choice: Any) -> dict[str, Any] | None:
    """A Responses ``tool_choice`` in the Messages shape, the original kept under ``openai``:
    ``auto`` → ``{"type": "auto"}``, ``required`` → ``any``, ``none`` → ``none``, a named
    function or custom tool → ``{"type": "tool", "name": …}``; any other shape (allowed
    tools, a built-in tool, MCP) kept verbatim as ``{"type": "openai_tool_choice", …}``."""
    if (
        isinstance(choice, dict)
        and choice.get("type") in ("function", "custom")
        and isinstance(choice.get("name"), str)
    ):
        return {"type": "tool", "name": choice["name"], "openai": choice}
    return openai_tool_choice(choice)  # the strings, and every other shape, as chat's


def responses_request(body: dict[str, Any], prior: list[Message] | None = None) -> LlmRequest:
    """A Responses API request, normalised to the Messages shape.

    Args:
        body: The request body.
        prior: The conversation ``previous_response_id`` names (its messages and answer),
            resolved by the caller; the request's own input follows it.
    """
    if "input" not in body and not body.get("previous_response_id"):
        raise _bad("'input' is required")
    system, messages = input_messages(body.get("input", []))
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        system.insert(0, instructions)
    elif isinstance(instructions, list):  # a list of input items, as ``input`` holds
        more, _ = input_messages(instructions)
        system[:0] = more
    if prior:
        merged = [dict(m, content=list(m["content"])) for m in prior]
        for m in messages:
            if merged and merged[-1]["role"] == m["role"] == "assistant":
                merged[-1]["content"].extend(m["content"])
            else:
                merged.append(m)
        messages = merged
    choice = body.get("tool_choice")
    max_tokens = body.get("max_output_tokens")
    params = {k: body[k] for k in _PARAMS if k in body}
    params.update(
        {
            k: v
            for k, v in body.items()
            if k not in _NOT_PARAMS and k not in params and k != "stream"
        }
    )
    return LlmRequest(
        model=str(body.get("model") or ""),
        system="\n\n".join(system) or None,
        messages=messages,
        tools=_tools(body.get("tools")),
        tool_choice=tool_choice_of(choice),
        max_tokens=max_tokens
        if isinstance(max_tokens, int) and not isinstance(max_tokens, bool)
        else 4096,
        params=params,
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def output_blocks(output: Any) -> list[dict[str, Any]]:
    """The Messages blocks of a response's ``output`` items."""
    content: list[dict[str, Any]] = []
    for item in output if isinstance(output, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "message":
            content.extend(_parts(item.get("content")))
        elif _is_call(item):
            content.append(tool_use_of(item))
        elif kind == "reasoning":
            content.append(_thinking(item))
        else:
            content.append({"type": "openai_item", "item": item})
    return content


def responses_response(body: dict[str, Any]) -> LlmResponse:
    """A Responses API answer, normalised; the whole body is kept under ``openai_responses``.

    Usage: ``input_tokens`` are the uncached ones (the Messages API's sense), the cached ones
    ``cache_read_input_tokens``; the reasoning tokens (part of the output) are kept beside
    them as ``reasoning_output_tokens``, as the Codex importer writes them.
    """
    if not isinstance(body.get("output"), list):
        raise ValueError("a Responses API answer has an 'output' list")
    content = output_blocks(body["output"])
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    assert isinstance(usage, dict)
    details = usage.get("input_tokens_details")
    cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
    out_details = usage.get("output_tokens_details")
    reasoning = _int(out_details.get("reasoning_tokens")) if isinstance(out_details, dict) else 0
    if any(b.get("type") == "tool_use" for b in content):
        stop = "tool_use"
    elif body.get("status") == "incomplete":
        details = body.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        stop = "max_tokens" if reason == "max_output_tokens" else "refusal"
    else:
        stop = "end_turn"
    extra: dict[str, Any] = {"reasoning_output_tokens": reasoning} if reasoning else {}
    model = body.get("model")
    rid = body.get("id")
    return LlmResponse(
        id=rid if isinstance(rid, str) else None,
        model=model if isinstance(model, str) else None,
        content=content,
        stop_reason=stop,
        usage=Usage(
            input_tokens=max(_int(usage.get("input_tokens")) - cached, 0),
            output_tokens=_int(usage.get("output_tokens")),
            cache_read_input_tokens=cached,
            **extra,
        ),
        **{KEPT: body},
    )


def recorded_body(response: LlmResponse) -> dict[str, Any] | None:
    """The Responses body ``response`` was recorded from, if it was."""
    kept = getattr(response, KEPT, None)
    return kept if isinstance(kept, dict) else None


def _output_of(content: list[dict[str, Any]], rid: str) -> list[dict[str, Any]]:
    output: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []

    def flush() -> None:
        if texts:
            output.append(
                {
                    "id": f"msg_{rid}_{len(output)}",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": list(texts),
                }
            )
            texts.clear()

    for b in content:
        kind = b.get("type")
        if kind == "text":
            texts.append(
                {
                    "type": "output_text",
                    "text": _text(b.get("text")),
                    "annotations": [],
                    "logprobs": [],
                }
            )
            continue
        if kind == "openai_part" and isinstance(b.get("part"), dict):
            texts.append(b["part"])
            continue
        flush()
        item = b.get("openai_item") if kind in ("tool_use", "thinking") else None
        if kind == "openai_item":
            item = b.get("item")
        if isinstance(item, dict):
            output.append(item)
        elif kind == "tool_use":
            output.append(
                {
                    "id": f"fc_{rid}_{len(output)}",
                    "type": "function_call",
                    "status": "completed",
                    "call_id": _text(b.get("id")),
                    "name": _text(b.get("name")),
                    "arguments": orjson.dumps(b.get("input", {})).decode(),
                }
            )
        elif kind == "thinking":
            output.append(
                {
                    "id": f"rs_{rid}_{len(output)}",
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": _text(b.get("thinking"))}],
                }
            )
    flush()
    return output


def responses_body(response: LlmResponse, request: dict[str, Any]) -> dict[str, Any]:
    """The Responses body of ``response``: the recorded one exactly when it was recorded from
    this API, else built from the Messages shape (for the ``request`` body)."""
    kept = recorded_body(response)
    if kept is not None:
        return kept
    rid = response.id or "resp_regista_replay"
    if not rid.startswith("resp_"):
        rid = f"resp_{rid}"
    u = response.usage
    cached = u.cache_read_input_tokens
    reasoning = _int((u.model_extra or {}).get("reasoning_output_tokens"))
    status = "incomplete" if response.stop_reason == "max_tokens" else "completed"
    return {
        "id": rid,
        "object": "response",
        "created_at": 0,
        "status": status,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "model": response.model or request.get("model") or "",
        "output": _output_of(response.content, rid.removeprefix("resp_")),
        "parallel_tool_calls": request.get("parallel_tool_calls", True),
        "previous_response_id": request.get("previous_response_id"),
        "reasoning": request.get("reasoning") or {"effort": None, "summary": None},
        "store": request.get("store", True),
        "temperature": request.get("temperature"),
        "text": request.get("text") or {"format": {"type": "text"}},
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools") or [],
        "top_p": request.get("top_p"),
        "truncation": request.get("truncation", "disabled"),
        "usage": {
            "input_tokens": u.input_tokens + cached,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": u.output_tokens,
            "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": u.input_tokens + cached + u.output_tokens,
        },
        "metadata": request.get("metadata") or {},
    }


# -- SSE -------------------------------------------------------------------------------------

#: Characters per delta.
CHUNK = 24


def responses_events(response: dict[str, Any]) -> Iterator[bytes]:
    """The Responses SSE stream of ``response`` (a complete ``response`` body): each event
    with its ``event:`` line, ``type`` and ``sequence_number``."""
    seq = 0

    def event(kind: str, **fields: Any) -> bytes:
        nonlocal seq
        data = {"type": kind, "sequence_number": seq, **fields}
        seq += 1
        return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"

    def pieces(text: str) -> Iterator[str]:
        for i in range(0, len(text), CHUNK):
            yield text[i : i + CHUNK]

    head = {**response, "status": "in_progress", "output": [], "usage": None}
    yield event("response.created", response=head)
    yield event("response.in_progress", response=head)
    for index, item in enumerate(_list(response.get("output"))):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        at = {"item_id": item.get("id", ""), "output_index": index}
        if kind == "message":
            parts = _list(item.get("content"))
            yield event(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            for ci, part in enumerate(parts):
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "output_text":
                    yield event(
                        "response.content_part.added",
                        **at,
                        content_index=ci,
                        part={**part, "text": ""},
                    )
                    text = _text(part.get("text"))
                    for piece in pieces(text):
                        yield event(
                            "response.output_text.delta",
                            **at,
                            content_index=ci,
                            delta=piece,
                            logprobs=[],
                        )
                    yield event(
                        "response.output_text.done",
                        **at,
                        content_index=ci,
                        text=text,
                        logprobs=part.get("logprobs") or [],
                    )
                elif part.get("type") == "refusal":
                    yield event(
                        "response.content_part.added",
                        **at,
                        content_index=ci,
                        part={**part, "refusal": ""},
                    )
                    refusal = _text(part.get("refusal"))
                    yield event("response.refusal.delta", **at, content_index=ci, delta=refusal)
                    yield event("response.refusal.done", **at, content_index=ci, refusal=refusal)
                else:
                    yield event("response.content_part.added", **at, content_index=ci, part=part)
                yield event("response.content_part.done", **at, content_index=ci, part=part)
        elif kind == "reasoning":
            yield event(
                "response.output_item.added", output_index=index, item={**item, "summary": []}
            )
            for si, part in enumerate(_list(item.get("summary"))):
                if not isinstance(part, dict):
                    continue
                text = _text(part.get("text"))
                yield event(
                    "response.reasoning_summary_part.added",
                    **at,
                    summary_index=si,
                    part={"type": "summary_text", "text": ""},
                )
                for piece in pieces(text):
                    yield event(
                        "response.reasoning_summary_text.delta", **at, summary_index=si, delta=piece
                    )
                yield event(
                    "response.reasoning_summary_text.done", **at, summary_index=si, text=text
                )
                yield event(
                    "response.reasoning_summary_part.done", **at, summary_index=si, part=part
                )
        elif kind == "function_call":
            args = _text(item.get("arguments"))
            yield event(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            for piece in pieces(args):
                yield event("response.function_call_arguments.delta", **at, delta=piece)
            yield event("response.function_call_arguments.done", **at, arguments=args)
        elif kind == "custom_tool_call":
            raw = _text(item.get("input"))
            yield event(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "input": ""},
            )
            for piece in pieces(raw):
                yield event("response.custom_tool_call_input.delta", **at, delta=piece)
            yield event("response.custom_tool_call_input.done", **at, input=raw)
        else:  # web_search_call, local_shell_call, …: the stream carries it whole
            yield event("response.output_item.added", output_index=index, item=item)
        yield event("response.output_item.done", output_index=index, item=item)
    final = {
        "completed": "response.completed",
        "incomplete": "response.incomplete",
        "failed": "response.failed",
    }.get(str(response.get("status")), "response.completed")
    yield event(final, response=response)


_FINAL = ("response.completed", "response.incomplete", "response.failed")


class ResponsesStream(StreamAnswer):
    """The ``response`` a Responses SSE stream adds up to: the body of its final event
    (``response.completed``, ``.incomplete`` or ``.failed``), with the items of
    ``response.output_item.done`` when that body lists none."""

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[int, dict[str, Any]] = {}
        self.final: dict[str, Any] | None = None
        self.kind: str | None = None

    def add(self, ev: dict[str, Any]) -> None:
        """Take one already-parsed event."""
        kind = ev.get("type")
        if kind == "response.output_item.done" and isinstance(ev.get("item"), dict):
            index = ev.get("output_index")
            self.items[index if isinstance(index, int) else len(self.items)] = ev["item"]
        elif kind in _FINAL and isinstance(ev.get("response"), dict):
            self.final = ev["response"]
            self.kind = str(kind)

    @property
    def done(self) -> bool:
        """Whether the final event was seen."""
        return self.final is not None

    @property
    def complete(self) -> bool:
        """Whether the stream added up to an answer (a failed or cut one does not)."""
        return self.final is not None and self.kind != "response.failed"

    def result(self) -> dict[str, Any] | None:
        if self.final is None:
            return None
        body = dict(self.final)
        if not body.get("output") and self.items:
            body["output"] = [item for _, item in sorted(self.items.items())]
        return body


def substitute_outputs(items: list[Any], edits: dict[str, Any]) -> None:
    """Put edited tool results in place of the agent's own in a request's ``input`` (the
    ``output`` of each ``*_call_output`` item whose ``call_id`` was edited): text as it is,
    content blocks as their JSON."""
    for item in items:
        if isinstance(item, dict) and _is_output(item) and item["call_id"] in edits:
            value = edits[item["call_id"]]
            item["output"] = value if isinstance(value, str) else orjson.dumps(value).decode()


def conversation_of(
    calls: list[tuple[LlmRequest, LlmResponse]], response_id: str
) -> list[Message] | None:
    """The messages that end with the answer ``response_id`` among recorded ``calls`` (what a
    ``previous_response_id`` stands for); ``None`` when none answered it."""
    for request, response in calls:
        ids = {response.id, f"resp_{response.id}"}
        kept = recorded_body(response)
        if kept is not None:
            ids.add(kept.get("id"))
        if response_id in ids:
            return [*request.messages, {"role": "assistant", "content": list(response.content)}]
    return None


def input_items(messages: list[Message]) -> list[dict[str, Any]]:
    """The Responses ``input`` items a conversation in the Messages shape stands for (the
    inverse of :func:`input_messages`): items kept whole are sent as they were, the rest
    rebuilt (text as messages, ``tool_use`` as ``function_call``, ``tool_result`` as
    ``function_call_output``)."""
    items: list[dict[str, Any]] = []
    for m in messages:
        role = str(m.get("role"))
        content = m.get("content")
        if isinstance(content, str):
            items.append({"role": role, "content": content})
            continue
        parts: list[dict[str, Any]] = []
        for b in content if isinstance(content, list) else []:
            kind = b.get("type")
            if kind == "text":
                kind_of = "input_text" if role == "user" else "output_text"
                parts.append({"type": kind_of, "text": _text(b.get("text"))})
                continue
            if kind == "openai_part" and isinstance(b.get("part"), dict):
                parts.append(b["part"])
                continue
            if kind == "image" and isinstance(b.get("source"), dict):
                parts.append({"type": "input_image", "image_url": b["source"].get("url")})
                continue
            _flush(items, role, parts)
            kept = b.get("item") if kind == "openai_item" else b.get("openai_item")
            if isinstance(kept, dict):
                items.append(kept)
            elif kind == "tool_use":
                items.append(
                    {
                        "type": "function_call",
                        "call_id": _text(b.get("id")),
                        "name": _text(b.get("name")),
                        "arguments": orjson.dumps(b.get("input", {})).decode(),
                    }
                )
            elif kind == "tool_result":
                result = b.get("content", "")
                items.append(
                    {
                        "type": "function_call_output",
                        "call_id": _text(b.get("tool_use_id")),
                        "output": result
                        if isinstance(result, str)
                        else orjson.dumps(result).decode(),
                    }
                )
        _flush(items, role, parts)
    return items


def _flush(items: list[dict[str, Any]], role: str, parts: list[dict[str, Any]]) -> None:
    """Close the message of ``parts`` (if any) into ``items``."""
    if parts:
        items.append({"type": "message", "role": role, "content": list(parts)})
        parts.clear()
