"""OpenTelemetry GenAI spans (OTLP) as regista runs.

Each OTel trace that holds GenAI spans becomes one run. Chat spans are model steps, tool
spans are tool steps, in the order they started. Content is read from the GenAI
semantic-convention attributes (``gen_ai.input.messages``, ``gen_ai.output.messages``,
``gen_ai.system_instructions``, ``gen_ai.tool.definitions``, ``gen_ai.tool.call.*``) and
from the older attribute styles: OpenLLMetry's ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``
and OpenInference's ``llm.input_messages.N.*`` / ``llm.output_messages.N.*``. A span without
its content is still a step, marked ``not_captured``. Spans that regista itself exported
come back as the same run: the same session id, steps, kinds, tokens, timestamps and (when
it was included) content. See docs/importers.md.
"""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from regista.errors import TraceError, UserError
from regista.importers._builder import ImportReport, RunBuilder, derived_session_id
from regista.importers._common import Conversion, ImportedRun, read_source, record_report
from regista.trace.canonical import request_hash

__all__ = ["convert", "convert_request", "parse_protobuf", "spans_of"]

FORMAT = "otlp"
_ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")
_FINISH = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_call": "tool_use",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
}
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


def _hex_id(raw: Any) -> str:
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
            for sp in _list(ss.get("spans")):
                if not isinstance(sp, dict):
                    continue
                found = sp.get("status")
                status: dict[str, Any] = found if isinstance(found, dict) else {}
                spans.append(
                    {
                        "trace_id": _hex_id(sp.get("traceId")),
                        "span_id": _hex_id(sp.get("spanId")),
                        "parent_id": _hex_id(sp.get("parentSpanId")),
                        "name": str(sp.get("name") or ""),
                        "start": _nanos(sp.get("startTimeUnixNano")),
                        "end": _nanos(sp.get("endTimeUnixNano")),
                        "attrs": _attrs(sp.get("attributes")),
                        "error": status.get("code") in (2, "STATUS_CODE_ERROR"),
                        "status": status.get("message"),
                        "resource": resource,
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


# -- content back to the Anthropic shape ---------------------------------------------------


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


def _block(part: dict[str, Any]) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": str(part.get("content", ""))}
    if kind == "tool_call":
        args = part.get("arguments")
        return {
            "type": "tool_use",
            "id": part.get("id"),
            "name": part.get("name"),
            "input": args
            if isinstance(args, dict)
            else ({} if args is None else {"arguments": args}),
        }
    if kind == "tool_call_response":
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": part.get("id"),
            "content": part.get("response", ""),
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
    return {k: v for k, v in part.items()}


def _messages(value: Any) -> list[dict[str, Any]] | None:
    """``gen_ai.input.messages`` back to Anthropic messages (tool results into user ones)."""
    parsed = _json(value)
    if not isinstance(parsed, list):
        return None
    out: list[dict[str, Any]] = []
    for m in parsed:
        if not isinstance(m, dict):
            continue
        role = "assistant" if m.get("role") == "assistant" else "user"
        raw_parts = m.get("parts")
        parts: list[Any] = raw_parts if isinstance(raw_parts, list) else []
        blocks = [_block(p) for p in parts if isinstance(p, dict)]
        if out and out[-1]["role"] == role == "user":
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _indexed(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.N.key`` attributes as a list of dicts (OpenLLMetry / OpenInference styles)."""
    rows: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        head, _, rest = key[len(prefix) :].partition(".")
        if head.isdigit() and rest:
            rows.setdefault(int(head), {})[rest] = value
    return [rows[i] for i in sorted(rows)]


def _legacy_messages(attrs: dict[str, Any], kind: str) -> list[dict[str, Any]] | None:
    """Prompts or completions in the indexed attribute styles."""
    rows = _indexed(attrs, "gen_ai.prompt." if kind == "in" else "gen_ai.completion.")
    role_key, content_key = "role", "content"
    if not rows:
        rows = _indexed(attrs, "llm.input_messages." if kind == "in" else "llm.output_messages.")
        role_key, content_key = "message.role", "message.content"
    if not rows:
        return None
    out: list[dict[str, Any]] = []
    for row in rows:
        role = "assistant" if row.get(role_key) == "assistant" else "user"
        blocks: list[dict[str, Any]] = []
        content = row.get(content_key)
        if isinstance(content, str) and content:
            parsed = _json(content) if content[:1] == "[" else None
            if isinstance(parsed, list) and all(
                isinstance(b, dict) and "type" in b for b in parsed
            ):
                blocks.extend(parsed)  # OpenLLMetry writes Anthropic content blocks as JSON
            else:
                blocks.append({"type": "text", "text": content})
        for call in _indexed(row, "tool_calls."):
            args = _json(call.get("arguments"))
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.get("id"),
                    "name": call.get("name"),
                    "input": args if isinstance(args, dict) else {},
                }
            )
        if out and out[-1]["role"] == role == "user":
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _int(attrs: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        v = attrs.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def _usage(attrs: dict[str, Any]) -> dict[str, int] | None:
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
        _int(attrs, "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens")
        or 0
    )
    write = (
        _int(
            attrs,
            "gen_ai.usage.cache_creation.input_tokens",
            "gen_ai.usage.cache_creation_input_tokens",
        )
        or 0
    )
    # The conventions count cached tokens in input_tokens; regista (Anthropic) does not.
    return {
        "input_tokens": max((inp or 0) - read - write, 0),
        "output_tokens": out or 0,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
    }


def _ts(ns: int) -> str:
    dt = datetime.fromtimestamp(ns // 1_000_000_000, UTC).replace(
        microsecond=(ns % 1_000_000_000) // 1000
    )
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _system(attrs: dict[str, Any]) -> str | None:
    parts = _json(attrs.get("gen_ai.system_instructions"))
    if isinstance(parts, list):
        return "".join(str(p.get("content", "")) for p in parts if isinstance(p, dict))
    return None


def _tools(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    defs = _json(attrs.get("gen_ai.tool.definitions"))
    if not isinstance(defs, list):
        return []
    return [
        {
            "name": d.get("name"),
            "description": d.get("description"),
            "input_schema": d.get("parameters"),
        }
        for d in defs
        if isinstance(d, dict)
    ]


_PARAMS = {
    "gen_ai.request.temperature": "temperature",
    "gen_ai.request.top_p": "top_p",
    "gen_ai.request.top_k": "top_k",
    "gen_ai.request.seed": "seed",
    "gen_ai.request.stop_sequences": "stop_sequences",
}


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


class _Run:
    def __init__(self, spans: list[dict[str, Any]], source: str) -> None:
        self.spans = spans
        by_id = {s["span_id"]: s for s in spans}
        steps = [s for s in spans if _kind(s)]
        steps.sort(key=lambda s: (s["attrs"].get("regista.step", 1 << 40), s["start"]))
        self.steps = steps
        root = next(
            (s for s in spans if s["attrs"].get("gen_ai.operation.name") == "invoke_agent"), None
        )
        self.root = root
        conv_id = (root or (steps[0] if steps else spans[0]))["attrs"].get("gen_ai.conversation.id")
        trace_id = spans[0]["trace_id"]
        if (
            isinstance(conv_id, str)
            and _ULID.fullmatch(conv_id)
            and root is not None
            and "regista.steps" in root["attrs"]
        ):
            self.session_id = conv_id  # exported by regista: the same run comes back
        else:
            # The first step's start (not the first span's: a parent span often arrives
            # last, and the id must not change as a trace's batches come in).
            first = min(s["start"] for s in steps) if steps else min(s["start"] for s in spans)
            self.session_id = derived_session_id(f"otlp:{trace_id}", _ts(first))
        self.by_id = by_id
        first_chat = next((s for s in steps if _kind(s) == "model"), None)
        ra = root["attrs"] if root else {}
        model = (
            ra.get("gen_ai.request.model")
            or (first_chat or {"attrs": {}})["attrs"].get("gen_ai.request.model")
            or "unknown"
        )
        provider = (
            ra.get("gen_ai.provider.name")
            or (first_chat or {"attrs": {}})["attrs"].get("gen_ai.provider.name")
            or (first_chat or {"attrs": {}})["attrs"].get("gen_ai.system")
            or "unknown"
        )
        provider = "scripted" if provider == "regista.scripted" else str(provider)
        task_msgs = _messages(ra.get("gen_ai.input.messages")) if root else None
        task = ""
        if task_msgs:
            task = "".join(
                b.get("text", "") for b in task_msgs[0]["content"] if b.get("type") == "text"
            )
        elif first_chat is not None:
            msgs = self._input(first_chat["attrs"]) or []
            task = next(
                (
                    b.get("text", "")
                    for m in msgs
                    if m["role"] == "user"
                    for b in m["content"]
                    if b.get("type") == "text"
                ),
                "",
            )
        start_ns = root["start"] if root else min(s["start"] for s in spans)
        meta: dict[str, Any] = {
            "imported_from": {"format": FORMAT, "source": source, "trace_id": trace_id}
        }
        service = spans[0]["resource"].get("service.name")
        if service:
            meta["service_name"] = service
        if root and isinstance(ra.get("gen_ai.agent.name"), str):
            meta["agent_name"] = ra["gen_ai.agent.name"]
        system = _system(ra) if root else None
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

    def _input(self, a: dict[str, Any]) -> list[dict[str, Any]] | None:
        msgs = _messages(a.get("gen_ai.input.messages"))
        return msgs if msgs is not None else _legacy_messages(a, "in")

    def _turn(self, span: dict[str, Any]) -> int:
        t = span["attrs"].get("regista.turn")
        if isinstance(t, int):
            return t
        parent = self.by_id.get(span["parent_id"])
        if parent is not None and isinstance(parent["attrs"].get("regista.turn"), int):
            return int(parent["attrs"]["regista.turn"])
        return max(self.b.turn, 0)

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

    def _model(self, span: dict[str, Any]) -> None:
        a = span["attrs"]
        messages = self._input(a)
        out = _messages(a.get("gen_ai.output.messages"))
        if out is None:
            out = _legacy_messages(a, "out")
        not_captured = [n for n, v in (("input", messages), ("output", out)) if v is None]
        messages = messages or []
        model = str(a.get("gen_ai.request.model") or "unknown")
        system = _system(a)
        request = {
            "model": model,
            "system": system,
            "messages": messages,
            "tools": _tools(a),
            "tool_choice": None,
            "max_tokens": _int(a, "gen_ai.request.max_tokens") or 0,
            "params": {k: a[key] for key, k in _PARAMS.items() if key in a},
        }
        reasons = a.get("gen_ai.response.finish_reasons")
        reason = reasons[0] if isinstance(reasons, list) and reasons else None
        content = [b for m in (out or []) for b in m["content"]]
        response: dict[str, Any] = {
            "id": a.get("gen_ai.response.id"),
            "model": a.get("gen_ai.response.model"),
            "role": "assistant",
            "content": content,
            "stop_reason": _FINISH.get(str(reason), reason),
            "stop_sequence": None,
        }
        usage = _usage(a)
        if usage is not None:
            response["usage"] = usage
        step = self.b.step
        self.b.step += 1
        prefix = len(self.prev) if messages[: len(self.prev)] == self.prev else 0
        unknown = [k for k in ("system", "tools", "max_tokens") if not request[k]]
        self.b._emit(
            _ts(span["start"]),
            "llm.request",
            step=step,
            turn=max(self.b.turn, 0),
            request_hash=request_hash(request),
            model=model,
            system=system,
            tools=request["tools"],
            tool_choice=None,
            max_tokens=request["max_tokens"],
            params=request["params"],
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
            provider=self.b.provider,
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
        text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
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
        tid = str(a.get("gen_ai.tool.call.id") or f"call_{span['span_id']}")
        args = _json(a.get("gen_ai.tool.call.arguments"))
        step = self.b.tool_call(
            tool_use_id=tid,
            name=name,
            input=args if isinstance(args, dict) else {},
            ts=_ts(span["start"]),
            turn=max(self.b.turn, 0),
        )
        if "gen_ai.tool.call.arguments" not in a:
            self.b.events[-1]["not_captured"] = ["input"]
        if a.get("error.type") == "permission_denied":
            self.b._emit(
                _ts(span["start"]),
                "permission.decision",
                step=step,
                tool_use_id=tid,
                allowed=False,
                reason=a.get("regista.permission.reason"),
                by="recorded",
            )
        elif "regista.permission.denied" in a:
            self.b._emit(
                _ts(span["start"]),
                "permission.decision",
                step=step,
                tool_use_id=tid,
                allowed=True,
                reason=a.get("regista.permission.reason"),
                by="recorded",
            )
        if a.get("error.type") == "incomplete":
            return
        result = a.get("gen_ai.tool.call.result")
        extra: dict[str, Any] = {}
        if result is None:
            content: Any = ""
            if not span["error"]:
                extra["not_captured"] = ["content"]
            else:
                content = str(span["status"] or "")
        else:
            parsed = _json(result)
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
        found_in = self._input(a)
        found_out = _messages(a.get("gen_ai.output.messages"))
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


def convert_request(body: dict[str, Any], source: str = "<request>") -> Conversion:
    """The runs of an OTLP export request (JSON form): one per OTel trace with GenAI spans."""
    report = ImportReport()
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for span in spans_of(body):
        by_trace.setdefault(span["trace_id"], []).append(span)
    conv = Conversion(format=FORMAT, source=Path(source), report=report)
    for spans in by_trace.values():
        if not any(_kind(s) for s in spans):
            report.skip("trace without GenAI spans")
            continue
        run = _Run(spans, source)
        conv.runs.append(ImportedRun(run.session_id, run.run()))
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
