"""OpenTelemetry GenAI spans (OTLP) as regista runs.

Each conversation of GenAI spans becomes one run: an OTel trace, or the traces of an agent
that opens no span of its own (one per model call), put together by the recording proxy's
rule (:func:`~regista.wire.sessions.continues_conversation`). Chat spans are model steps,
tool spans are tool steps, in the order they started; where no tool span recorded a tool
call, its step is rebuilt from the tool result that the next call sends back. A call seen
twice (an instrumentation's span and the SDK's own) counts once. What a chat span holds is
read by :mod:`regista.importers._otlp_calls` (OpenInference's raw bodies, the GenAI
attributes, the indexed styles of OpenLLMetry and OpenInference). A span without its content
is still a step, marked ``not_captured``; a model step whose answer was not captured says
``content_captured: false`` in its response. Spans that regista itself exported come back as
the same run: the same session id, steps, kinds, tokens, timestamps and (when it was
included) content and request hashes. What is written reads back (the reader's own check).
See docs/importers.md.
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from regista.errors import RegistaError, TraceError, UserError
from regista.harness_notes import typed
from regista.importers._builder import ImportReport, RunBuilder, derived_session_id
from regista.importers._common import Conversion, ImportedRun, read_source, record_report
from regista.importers._otlp_calls import (
    ModelCall,
    finish_reason_of,
    genai_messages,
    json_value,
    provider_of,
    read_call,
)
from regista.trace.canonical import request_hash
from regista.trace.otel_spans import CACHE_1H, REASONING
from regista.types import tool_results_of

__all__ = ["convert", "convert_request", "hex_id", "parse_protobuf", "spans_of"]

FORMAT = "otlp"
_ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")
#: Instrumentation scopes of the SDKs' own spans (the anthropic SDK's ``chat`` spans).
_SDK_SCOPES = ("com.anthropic.sdk",)
_CHAT_OPS = {"chat", "text_completion", "generate_content"}


# -- decoding OTLP -------------------------------------------------------------------------


def _value(v: Any) -> Any:
    if not isinstance(v, dict):
        return None
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            return None
    if "doubleValue" in v:
        return v["doubleValue"]
    if "boolValue" in v:
        return v["boolValue"]
    if "arrayValue" in v:
        array = v["arrayValue"]
        values = _list(array.get("values")) if isinstance(array, dict) else []
        return [_value(x) for x in values if isinstance(x, dict)]
    if "kvlistValue" in v:
        kvs = v["kvlistValue"]
        return _attrs(kvs.get("values")) if isinstance(kvs, dict) else {}
    return None


def _attrs(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(items, list):
        for kv in items:
            if isinstance(kv, dict) and isinstance(kv.get("key"), str):
                out[kv["key"]] = _value(kv.get("value"))
    return out


def hex_id(raw: Any) -> str:
    """A trace or span id as lower-case hex (OTLP JSON writes hex; protobuf's JSON, base64)."""
    if not isinstance(raw, str):
        return ""
    if re.fullmatch(r"[0-9a-fA-F]+", raw) and len(raw) in (16, 32):
        return raw.lower()
    try:  # protobuf's JSON mapping writes bytes as base64
        return base64.b64decode(raw, validate=True).hex()
    except (binascii.Error, ValueError):
        return raw


def _nanos(raw: Any) -> int:
    try:
        return int(raw)
    except (TypeError, ValueError):
        return 0


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def spans_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The spans of an OTLP ``ExportTraceServiceRequest`` (JSON form) as flat dicts."""
    spans: list[dict[str, Any]] = []
    for rs in _list(body.get("resourceSpans")):
        if not isinstance(rs, dict):
            continue
        res = rs.get("resource")
        resource = _attrs(res.get("attributes")) if isinstance(res, dict) else {}
        for ss in _list(rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans")):
            if not isinstance(ss, dict):
                continue
            found_scope = ss.get("scope")
            scope = found_scope.get("name") if isinstance(found_scope, dict) else None
            for sp in _list(ss.get("spans")):
                if not isinstance(sp, dict):
                    continue
                found = sp.get("status")
                status: dict[str, Any] = found if isinstance(found, dict) else {}
                spans.append(
                    {
                        "trace_id": hex_id(sp.get("traceId")),
                        "span_id": hex_id(sp.get("spanId")),
                        "parent_id": hex_id(sp.get("parentSpanId")),
                        "name": str(sp.get("name") or ""),
                        "start": _nanos(sp.get("startTimeUnixNano")),
                        "end": _nanos(sp.get("endTimeUnixNano")),
                        "attrs": _attrs(sp.get("attributes")),
                        "error": status.get("code") in (2, "STATUS_CODE_ERROR"),
                        "status": status.get("message"),
                        "resource": resource,
                        "scope": scope if isinstance(scope, str) else "",
                    }
                )
    return spans


def parse_protobuf(data: bytes) -> dict[str, Any]:
    """An OTLP protobuf ``ExportTraceServiceRequest`` in its JSON form.

    Raises:
        TraceError: The bytes are not such a message.
    """
    try:
        from google.protobuf import json_format  # type: ignore[import-untyped]
        from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    except ImportError:
        raise UserError(
            "reading OTLP protobuf needs the 'otel' extra: pip install 'regista-harness[otel]'"
        ) from None

    message = trace_service_pb2.ExportTraceServiceRequest()
    try:
        message.ParseFromString(data)
    except DecodeError as exc:
        raise TraceError(f"not an OTLP protobuf trace export ({exc})") from None
    return dict(json_format.MessageToDict(message))


def _int(attrs: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        v = attrs.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def _usage(attrs: dict[str, Any]) -> dict[str, Any] | None:
    inp = _int(
        attrs,
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",
        "llm.token_count.prompt",
        "llm.usage.prompt_tokens",
    )
    out = _int(
        attrs,
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
        "llm.token_count.completion",
        "llm.usage.completion_tokens",
    )
    if inp is None and out is None:
        return None
    read = (
        _int(
            attrs,
            "gen_ai.usage.cache_read.input_tokens",
            "gen_ai.usage.cache_read_input_tokens",
            "llm.token_count.prompt_details.cache_read",
        )
        or 0
    )
    write = (
        _int(
            attrs,
            "gen_ai.usage.cache_creation.input_tokens",
            "gen_ai.usage.cache_creation_input_tokens",
            "gen_ai.usage.cache_write.input_tokens",
            "llm.token_count.prompt_details.cache_write",
        )
        or 0
    )
    # The conventions count cached tokens in input_tokens; regista (Anthropic) does not.
    usage: dict[str, Any] = {
        "input_tokens": max((inp or 0) - read - write, 0),
        "output_tokens": out or 0,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
    }
    # The hour-long part of the cache writes (regista's own export says it) and the
    # reasoning part of the output (the conventions' attribute, or OpenLLMetry's).
    hour = min(_int(attrs, CACHE_1H) or 0, write)
    if hour:
        usage["cache_creation"] = {
            "ephemeral_5m_input_tokens": write - hour,
            "ephemeral_1h_input_tokens": hour,
        }
    reasoning = _int(attrs, REASONING, "gen_ai.usage.reasoning_tokens")
    if reasoning:
        usage["reasoning_output_tokens"] = reasoning
    return usage


def _ts(ns: int) -> str:
    dt = datetime.fromtimestamp(ns // 1_000_000_000, UTC).replace(
        microsecond=(ns % 1_000_000_000) // 1000
    )
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# -- spans → a run -------------------------------------------------------------------------


def _server(attrs: dict[str, Any]) -> dict[str, Any] | None:
    """``{"address", "port"}`` from ``server.address`` / ``server.port``, when there."""
    address, port = attrs.get("server.address"), attrs.get("server.port")
    if not isinstance(address, str) or not address:
        return None
    if isinstance(port, int) and not isinstance(port, bool):
        return {"address": address, "port": port}
    return {"address": address}


def _kind(span: dict[str, Any]) -> str | None:
    a = span["attrs"]
    if a.get("regista.step.kind") == "compaction":
        return "compaction"
    op = a.get("gen_ai.operation.name")
    if op == "execute_tool" or a.get("openinference.span.kind") == "TOOL":
        return "tool"
    if (
        op in _CHAT_OPS
        or a.get("llm.request.type") in ("chat", "completion")
        or (a.get("openinference.span.kind") == "LLM")
    ):
        return "model"
    return None


def _tool_call_id(span: dict[str, Any]) -> str:
    """The id of a tool span's call: the conventions', OpenInference's, or made from the span."""
    a = span["attrs"]
    for key in ("gen_ai.tool.call.id", "tool_call.id", "tool.id"):
        if isinstance(a.get(key), str) and a[key]:
            return str(a[key])
    return f"call_{span['span_id']}"


def _is_exported_run(spans: list[dict[str, Any]]) -> bool:
    """Spans that regista exported: an agent span holding the run's step count."""
    return any(
        s["attrs"].get("gen_ai.operation.name") == "invoke_agent" and "regista.steps" in s["attrs"]
        for s in spans
    )


class _Calls:
    """Model spans read once (grouping, duplicates and the run all ask)."""

    def __init__(self) -> None:
        self._read: dict[int, ModelCall] = {}

    def __call__(self, span: dict[str, Any]) -> ModelCall:
        found = self._read.get(id(span))
        if found is None:
            found = self._read[id(span)] = read_call(span["attrs"])
        return found


class _Run:
    def __init__(
        self, spans: list[dict[str, Any]], source: str, calls: _Calls, trace_ids: list[str]
    ) -> None:
        self.spans = spans
        self.call = calls
        by_id = {s["span_id"]: s for s in spans}
        steps = [s for s in spans if _kind(s)]
        steps.sort(key=lambda s: (s["attrs"].get("regista.step", 1 << 40), s["start"]))
        self.steps = steps
        root = next(
            (s for s in spans if s["attrs"].get("gen_ai.operation.name") == "invoke_agent"), None
        )
        self.root = root
        conv_id = (root or (steps[0] if steps else spans[0]))["attrs"].get("gen_ai.conversation.id")
        trace_id = trace_ids[0]
        if isinstance(conv_id, str) and _ULID.fullmatch(conv_id) and _is_exported_run(spans):
            self.session_id = conv_id  # exported by regista: the same run comes back
        else:
            # The first step's start (not the first span's: a parent span often arrives
            # last, and the id must not change as a trace's batches come in).
            first = min(s["start"] for s in steps) if steps else min(s["start"] for s in spans)
            self.session_id = derived_session_id(f"otlp:{trace_id}", _ts(first))
        self.by_id = by_id
        first_chat = next((s for s in steps if _kind(s) == "model"), None)
        first_call = calls(first_chat) if first_chat is not None else None
        ra = root["attrs"] if root else {}
        model = ra.get("gen_ai.request.model") or (first_call.model if first_call else "unknown")
        provider = provider_of(ra) if root else "unknown"
        if provider == "unknown" and first_call is not None:
            provider = first_call.provider
        task_msgs = genai_messages(ra.get("gen_ai.input.messages")) if root else None
        task = ""
        if task_msgs:
            task = "".join(
                b.get("text", "") for b in task_msgs[0]["content"] if b.get("type") == "text"
            )
        elif first_call is not None:
            task = next(
                (
                    b.get("text", "")
                    for m in first_call.messages or []
                    if m["role"] == "user"
                    for b in m["content"]
                    if isinstance(b, dict) and b.get("type") == "text"
                ),
                "",
            )
        start_ns = root["start"] if root else min(s["start"] for s in spans)
        imported: dict[str, Any] = {"format": FORMAT, "source": source, "trace_id": trace_id}
        if len(trace_ids) > 1:
            imported["trace_ids"] = trace_ids
        meta: dict[str, Any] = {"imported_from": imported}
        service = spans[0]["resource"].get("service.name")
        if service:
            meta["service_name"] = service
        if root and isinstance(ra.get("gen_ai.agent.name"), str):
            meta["agent_name"] = ra["gen_ai.agent.name"]
        if root:
            system = read_call(ra).system
        else:
            system = first_call.system if first_call is not None else None
        self.b = RunBuilder(
            self.session_id,
            task=task,
            model=str(model),
            provider=provider,
            started=_ts(start_ns),
            metadata=meta,
            instructions=system,
        )
        self.b.provider = provider
        self.prev: list[dict[str, Any]] = []
        self.typed = 0  # turns counted from the messages (spans that say none)
        #: The last answer's tool calls, and the tool calls that have spans of their own.
        self.asked: list[dict[str, Any]] = []
        self.asked_at = _ts(start_ns)
        self.spanned = {_tool_call_id(s) for s in steps if _kind(s) == "tool"}

    def _said_turn(self, span: dict[str, Any]) -> int | None:
        """The turn regista's own export gave ``span`` (on it or on its turn span)."""
        t = span["attrs"].get("regista.turn")
        if isinstance(t, int):
            return t
        parent = self.by_id.get(span["parent_id"])
        if parent is not None and isinstance(parent["attrs"].get("regista.turn"), int):
            return int(parent["attrs"]["regista.turn"])
        return None

    def _turn(self, span: dict[str, Any]) -> int:
        said = self._said_turn(span)
        return max(self.b.turn, 0) if said is None else said

    def run(self) -> list[dict[str, Any]]:
        for span in self.steps:
            kind = _kind(span)
            self.b.turn = self._turn(span)
            if kind == "model":
                self._model(span)
            elif kind == "tool":
                self._tool(span)
            else:
                self._compaction(span)
        root = self.root
        stop = root["attrs"].get("regista.stop_reason") if root else None
        if root is None or not isinstance(stop, str) or not stop:
            return self.b.finish()
        # A run exported by regista: its agent span says how and when it ended.
        return self.b.finish(
            stop_reason=stop,
            ended=_ts(root["end"]),
            duration_ms=max(root["end"] - root["start"], 0) / 1e6,
        )

    def _rebuilt_tools(self, new: list[dict[str, Any]], ts: str) -> None:
        """Tool steps for the last answer's tool calls that ``new`` messages answer (the
        instrumentations of an SDK see the model calls only: the tools ran in between)."""
        results = tool_results_of(new)
        for use in self.asked:
            tid = str(use.get("id"))
            block = results.get(tid)
            if block is None or tid in self.spanned:
                continue
            args = use.get("input")
            name = str(use.get("name"))
            step = self.b.tool_call(
                tool_use_id=tid,
                name=name,
                input=args if isinstance(args, dict) else {},
                ts=self.asked_at,
                turn=max(self.b.turn, 0),
            )
            content = block.get("content", "")
            self.b.tool_result(
                step=step,
                tool_use_id=tid,
                name=name,
                content=content if isinstance(content, str | list) else str(content),
                is_error=bool(block.get("is_error")),
                ts=ts,
                extra={"rebuilt_from": "messages"},
            )
        self.asked = []

    def _model(self, span: dict[str, Any]) -> None:
        a = span["attrs"]
        call = self.call(span)
        not_captured = [
            n for n, v in (("input", call.messages), ("output", call.response)) if v is None
        ]
        messages = call.messages or []
        model = call.model
        request = {
            "model": model,
            "system": call.system,
            "messages": messages,
            "tools": call.tools,
            "tool_choice": call.tool_choice,
            "max_tokens": call.max_tokens,
            "params": call.params,
        }
        response: dict[str, Any] = dict(call.response or {})
        if call.response is None:
            # Nothing to answer with: a replay must say so rather than answer empty.
            response = {"id": call.response_id, "content": [], "content_captured": False}
        response.setdefault("role", "assistant")
        response.setdefault("content", [])
        response.setdefault("stop_reason", None)
        response.setdefault("stop_sequence", None)
        if "model" not in response or response["model"] is None:
            response["model"] = a.get("gen_ai.response.model")
        if response.get("stop_reason") is None:
            response["stop_reason"] = finish_reason_of(a)
        usage = _usage(a)
        if usage is not None:
            response["usage"] = usage
        prefix = len(self.prev) if messages[: len(self.prev)] == self.prev else 0
        if (
            self._said_turn(span) is None
            and prefix < len(messages)
            and (typed(messages[-1]) or not self.typed)
        ):
            # Other instrumentations say no turn: a turn is what the person typed, a new
            # last message of text (the first call opens the first turn whatever it holds).
            self.typed += 1
            self.b.turn = self.typed - 1
        self._rebuilt_tools(messages[prefix:], _ts(span["start"]))
        step = self.b.step
        self.b.step += 1
        unknown = [k for k in ("system", "tools", "max_tokens") if not request[k]]
        self.b._emit(
            _ts(span["start"]),
            "llm.request",
            step=step,
            turn=max(self.b.turn, 0),
            request_hash=request_hash(request),
            model=model,
            system=call.system,
            tools=call.tools,
            tool_choice=call.tool_choice,
            max_tokens=call.max_tokens,
            params=call.params,
            messages_prefix=prefix,
            messages=messages[prefix:],
            **({"unknown": unknown} if unknown else {}),
        )
        self.prev = messages
        extra: dict[str, Any] = {}
        if not_captured:
            extra["not_captured"] = not_captured
        if isinstance(a.get("gen_ai.request.stream"), bool):
            extra["stream"] = a["gen_ai.request.stream"]
        server = _server(a)
        if server is not None:
            extra["server"] = server
        cost = a.get("regista.cost_usd")
        self.b._emit(
            _ts(span["end"]),
            "llm.response",
            step=step,
            turn=max(self.b.turn, 0),
            response=response,
            provider=call.provider if call.provider != "unknown" else self.b.provider,
            source=a.get("regista.source", "live")
            if a.get("regista.source") in ("live", "recorded", "edit")
            else "live",
            cost_usd=cost if isinstance(cost, int | float) else self.b.price(model, usage),
            duration_ms=(span["end"] - span["start"]) / 1e6,
            matched=None,
            **extra,
        )
        if usage is not None:
            from regista.types import Usage

            self.b.usage = self.b.usage + Usage.model_validate(usage)
        content = response["content"] if isinstance(response["content"], list) else []
        self.asked = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        self.asked_at = _ts(span["end"])
        text = "".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
        if text:
            self.b.last_text = text
        if span["error"]:
            self.b.error(
                message=str(span["status"] or "error"),
                error_type=str(a.get("error.type") or "error"),
                ts=_ts(span["end"]),
                step=step,
            )

    def _tool(self, span: dict[str, Any]) -> None:
        a = span["attrs"]
        name = str(a.get("gen_ai.tool.name") or a.get("tool.name") or span["name"])
        tid = _tool_call_id(span)
        # OpenInference's TOOL spans: the arguments in input.value, the result in output.value.
        raw_args = a.get("gen_ai.tool.call.arguments", a.get("input.value"))
        args = json_value(raw_args)
        step = self.b.tool_call(
            tool_use_id=tid,
            name=name,
            input=args if isinstance(args, dict) else {},
            ts=_ts(span["start"]),
            turn=max(self.b.turn, 0),
        )
        if raw_args is None:
            self.b.events[-1]["not_captured"] = ["input"]
        refused = a.get("error.type") == "permission_denied"
        if refused or "regista.permission.denied" in a:
            self.b._emit(
                _ts(span["start"]),
                "permission.decision",
                step=step,
                tool_use_id=tid,
                allowed=not refused,
                reason=a.get("regista.permission.reason"),
                by="recorded",
            )
        if a.get("error.type") == "incomplete":
            return
        result = a.get("gen_ai.tool.call.result")
        if result is None and isinstance(a.get("output.value"), str):
            result = orjson.dumps(a["output.value"]).decode()  # its text, as is
        extra: dict[str, Any] = {}
        if result is None:
            content: Any = ""
            if not span["error"]:
                extra["not_captured"] = ["content"]
            else:
                content = str(span["status"] or "")
        else:
            parsed = json_value(result)
            content = parsed if isinstance(parsed, str) else result
        self.b.tool_result(
            step=step,
            tool_use_id=tid,
            name=name,
            content=content,
            is_error=bool(span["error"]),
            ts=_ts(span["end"]),
            duration_ms=(span["end"] - span["start"]) / 1e6,
            extra=extra,
        )

    def _compaction(self, span: dict[str, Any]) -> None:
        a = span["attrs"]
        found_in = read_call(a).messages
        found_out = genai_messages(a.get("gen_ai.output.messages"))
        missing = [n for n, v in (("input", found_in), ("output", found_out)) if v is None]
        replaced, out = found_in or [], found_out or []
        summary = "".join(
            b.get("text", "") for m in out for b in m["content"] if b.get("type") == "text"
        )
        self.b.messages = replaced
        self.b.compaction(
            summary=summary,
            tokens_before=_int(a, "regista.compaction.tokens_before") or 0,
            ts=_ts(span["end"]),
            usage=_usage(a),
            extra={"not_captured": missing} if missing else None,
        )
        self.prev = []


def _captured(call: ModelCall) -> int:
    return (call.messages is not None) + (call.response is not None)


def _drop_duplicates(
    spans: list[dict[str, Any]], calls: _Calls, report: ImportReport
) -> list[dict[str, Any]]:
    """``spans`` without the second sight of a model call.

    One call is seen twice when two instrumentations wrap it: OpenLLMetry or OpenInference
    around the SDK, and the SDK's own spans (the anthropic SDK emits a ``chat`` span of its
    own, with no content, as a trace of its own). Two model spans from different
    instrumentation scopes are the same call when their times overlap and they carry the same
    response id (or neither has one and they name the same model); the one that captured
    more is kept, and of equals, the instrumentation's over the SDK's.
    """
    models = sorted((s for s in spans if _kind(s) == "model"), key=lambda s: s["start"])
    dropped: set[int] = set()
    for i, x in enumerate(models):
        for y in models[i + 1 :]:
            if y["start"] > x["end"]:
                break  # sorted by start: no later span overlaps x
            if id(x) in dropped or id(y) in dropped or x["scope"] == y["scope"]:
                continue
            cx, cy = calls(x), calls(y)
            same = (
                cx.response_id == cy.response_id
                if cx.response_id or cy.response_id
                else cx.model == cy.model
            )
            if not same:
                continue
            rank_x = (_captured(cx), not x["scope"].startswith(_SDK_SCOPES), len(x["attrs"]))
            rank_y = (_captured(cy), not y["scope"].startswith(_SDK_SCOPES), len(y["attrs"]))
            dropped.add(id(y) if rank_x >= rank_y else id(x))
    if dropped:
        report.skip("model span seen twice (SDK-native duplicate)")
    return [s for s in spans if id(s) not in dropped]


def _conversations(
    traces: list[list[dict[str, Any]]], calls: _Calls
) -> list[list[list[dict[str, Any]]]]:
    """OTel traces put together into conversations.

    An agent that opens no span of its own gives one trace per model call. A trace whose
    first model call continues another's last one (the same system prompt, that call's
    messages first: the recording proxy's rule,
    :func:`~regista.wire.sessions.continues_conversation`) belongs to its conversation.
    A run that regista exported is one trace and stays one run.
    """
    from regista.wire.sessions import continues_conversation

    def first_start(spans: list[dict[str, Any]]) -> int:
        return min((s["start"] for s in spans if _kind(s)), default=0)

    out: list[list[list[dict[str, Any]]]] = []
    last: list[ModelCall | None] = []
    for spans in sorted(traces, key=first_start):
        chats = sorted((s for s in spans if _kind(s) == "model"), key=lambda s: s["start"])
        if _is_exported_run(spans) or not chats:
            out.append([spans])
            last.append(None)
            continue
        first = calls(chats[0])
        joined = False
        if first.messages:
            for k in range(len(out) - 1, -1, -1):
                prior = last[k]
                if prior is None or prior.messages is None:
                    continue
                if continues_conversation(
                    first.system, first.messages, prior.system, prior.messages
                ):
                    out[k].append(spans)
                    last[k] = calls(chats[-1])
                    joined = True
                    break
        if not joined:
            out.append([spans])
            last.append(calls(chats[-1]))
    return out


def _checked(run: ImportedRun, source: str) -> ImportedRun:
    """``run`` when it reads back: the trace reader's own check (every event's model and
    :func:`~regista.trace.validate.check_event`) passes on its bytes."""
    from regista.trace.reader import Trace

    try:
        Trace.from_bytes(run.to_bytes(), f"{source}#{run.session_id}")
    except RegistaError as exc:
        raise TraceError(
            f"{source}: these spans give a run that does not read back: {exc}"
        ) from None
    return run


def convert_request(body: dict[str, Any], source: str = "<request>") -> Conversion:
    """The runs of an OTLP export request (JSON form): one per conversation of GenAI spans
    (an OTel trace, or the traces of one conversation, see :func:`_conversations`)."""
    report = ImportReport()
    calls = _Calls()
    spans = _drop_duplicates(spans_of(body), calls, report)
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        by_trace.setdefault(span["trace_id"], []).append(span)
    conv = Conversion(format=FORMAT, source=Path(source), report=report)
    traces = []
    for trace_spans in by_trace.values():
        if not any(_kind(s) for s in trace_spans):
            report.skip("trace without GenAI spans")
            continue
        traces.append(trace_spans)
    for group in _conversations(traces, calls):
        merged = [s for t in group for s in t]
        run = _Run(merged, source, calls, [t[0]["trace_id"] for t in group])
        conv.runs.append(_checked(ImportedRun(run.session_id, run.run()), source))
    if conv.runs:
        record_report(conv)
    return conv


def convert(path: Path, data: bytes | None = None) -> Conversion:
    """The runs of an OTLP JSON file (an export request, or one per line).

    Raises:
        TraceError: The file holds no GenAI spans.
    """
    path = Path(path)
    raw = read_source(path) if data is None else data
    bodies: list[dict[str, Any]] = []
    try:
        doc = orjson.loads(raw)
        bodies = [doc] if isinstance(doc, dict) else []
    except orjson.JSONDecodeError:
        for line in raw.splitlines():
            try:
                obj = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                bodies.append(obj)
    merged = {
        "resourceSpans": [
            rs
            for b in bodies
            if isinstance(b.get("resourceSpans"), list)
            for rs in b["resourceSpans"]
        ]
    }
    conv = convert_request(merged, str(path.resolve()))
    if not conv.runs:
        raise TraceError(f"{path}: no OpenTelemetry GenAI spans in it")
    return conv
