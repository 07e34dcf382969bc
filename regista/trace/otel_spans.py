"""The span tree of a trace, as plain data: what ``regista.trace.otel`` hands to OpenTelemetry.

Building the tree is pure (no OpenTelemetry import) and deterministic: the same trace gives
the same tree, and a $0 replay of a session gives the same tree except for the attributes in
:data:`RUN_SPECIFIC_ATTRIBUTES` and the timestamps. See ``docs/otel.md``.

Shape::

    invoke_agent {agent}            session.start → session.end
    └── turn {n}                    first → last step of the turn
        ├── chat {model}            llm.request → llm.response (compactions: chat too)
        └── execute_tool {name}     tool.call → tool.result
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import orjson

from regista.breakdown import ns_of, run_span, step_time
from regista.errors import TraceFormatError
from regista.tokens import tokens_of
from regista.trace.events import ErrorEvent, SessionStart
from regista.trace.otel_fit import fit_json, fit_text
from regista.trace.otel_messages import (
    finish_reason,
    input_messages,
    output_messages,
    system_instructions,
    to_json,
)
from regista.trace.reader import Trace
from regista.trace.steps import Step
from regista.types import LlmResponse, Usage, text_of

__all__ = [
    "RUN_SPECIFIC_ATTRIBUTES",
    "AttrValue",
    "SpanEventSpec",
    "SpanSpec",
    "build_span_tree",
    "provider_name",
]

AttrValue = str | bool | int | float | list[str]

#: Attributes that legitimately differ between a session and a $0 replay of it (or any two
#: runs of the same script): which run it was, where each step's answer came from, what it
#: cost, and who decided a permission (the policy, or the recording).
RUN_SPECIFIC_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "gen_ai.conversation.id",
        "session.id",
        "regista.source",
        "regista.replay_of",
        "regista.forked_from",
        "regista.cost_usd",
        "regista.permission.by",
    }
)

#: regista's provider names → ``gen_ai.provider.name`` (others are passed through).
_PROVIDERS = {"anthropic": "anthropic", "scripted": "regista.scripted"}

#: Sampling parameters (``params`` of a request) → GenAI request attributes.
_PARAMS: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "temperature": ("gen_ai.request.temperature", (int, float)),
    "top_p": ("gen_ai.request.top_p", (int, float)),
    "top_k": ("gen_ai.request.top_k", (int, float)),
    "seed": ("gen_ai.request.seed", int),
    "stop_sequences": ("gen_ai.request.stop_sequences", list),
}


@dataclass
class SpanEventSpec:
    """A span event (an exception recorded while the session ran)."""

    name: str
    time_ns: int
    attributes: dict[str, AttrValue] = field(default_factory=dict)


@dataclass
class SpanSpec:
    """One span to emit: ``error`` set means status ERROR with that description."""

    name: str
    kind: Literal["internal", "client"]
    start_ns: int
    end_ns: int
    attributes: dict[str, AttrValue] = field(default_factory=dict)
    error: str | None = None
    events: list[SpanEventSpec] = field(default_factory=list)
    children: list[SpanSpec] = field(default_factory=list)
    #: Names the span within its session (``session``, ``turn/N``, ``step/N``): the span id
    #: is derived from it, so re-exporting a session gives the same ids.
    key: str = ""

    def walk(self) -> list[SpanSpec]:
        """This span and all below it, depth first."""
        out = [self]
        for child in self.children:
            out.extend(child.walk())
        return out


def provider_name(provider: str) -> str:
    """``gen_ai.provider.name`` for a regista provider name.

    ``anthropic`` is the convention's well-known value; the offline ``ScriptedProvider``
    is ``regista.scripted`` (a custom value: it answers in Anthropic's shape, but it is
    not Anthropic, and backends must not price it as such).
    """
    return _PROVIDERS.get(provider, provider)


def ts_ns(event: Any, trace: Trace | None = None) -> int:
    """An event's recorded ``ts`` in nanoseconds since the epoch (an error names ``trace``)."""
    ns = ns_of(event.ts)
    if ns is None:
        path = (trace.path if trace is not None else None) or "<memory>"
        raise TraceFormatError(path, event.seq + 1, f"invalid ts {event.ts!r}")
    return ns


def _set(attrs: dict[str, AttrValue], key: str, value: Any) -> None:
    if value is not None:
        attrs[key] = value


#: The part of ``gen_ai.usage.cache_creation.input_tokens`` written for an hour (the
#: conventions have no name for it; a regista run sent back to the receiver keeps it).
CACHE_1H = "regista.usage.cache_creation.ephemeral_1h.input_tokens"
#: The conventions' count of the output tokens spent reasoning (part of the output).
REASONING = "gen_ai.usage.reasoning.output_tokens"


def _usage(usage: Usage | dict[str, Any] | None) -> dict[str, AttrValue]:
    # Anthropic's input_tokens leave out cached tokens; the convention's include them.
    t = tokens_of(usage)
    attrs: dict[str, AttrValue] = {
        "gen_ai.usage.input_tokens": t.input + t.cache_read + t.cache_write,
        "gen_ai.usage.output_tokens": t.output,
        "gen_ai.usage.cache_read.input_tokens": t.cache_read,
        "gen_ai.usage.cache_creation.input_tokens": t.cache_write,
    }
    if t.cache_write_1h:
        attrs[CACHE_1H] = t.cache_write_1h
    if t.reasoning:
        attrs[REASONING] = t.reasoning
    return attrs


def server_attributes(server: object) -> dict[str, AttrValue]:
    """``server.address`` / ``server.port`` of a recorded ``{"address", "port"}``."""
    if not isinstance(server, dict):
        return {}
    attrs: dict[str, AttrValue] = {}
    address, port = server.get("address"), server.get("port")
    if isinstance(address, str) and address:
        attrs["server.address"] = address
        if isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536:
            attrs["server.port"] = port
    return attrs


def _request_params(max_tokens: int | None, params: dict[str, Any]) -> dict[str, AttrValue]:
    attrs: dict[str, AttrValue] = {}
    _set(attrs, "gen_ai.request.max_tokens", max_tokens)
    for name, (key, kind) in _PARAMS.items():
        value: Any = params.get(name)
        if isinstance(value, bool) or not isinstance(value, kind):
            continue
        attrs[key] = [str(v) for v in value] if isinstance(value, list) else cast(float, value)
    return attrs


def _exception(ev: ErrorEvent, trace: Trace, content: bool) -> SpanEventSpec:
    # An error's message often quotes tool data: without content, only its type and where.
    return SpanEventSpec(
        "exception",
        ts_ns(ev, trace),
        {
            "exception.type": ev.error_type,
            "exception.message": ev.message if content else _bare_error(ev),
            "regista.error.where": ev.where,
        },
    )


def _bare_error(ev: ErrorEvent) -> str:
    return f"{ev.error_type} ({ev.where} error; message left out without --include-content)"


#: Attributes whose values are JSON text (cut by whole messages, parts or items).
JSON_ATTRIBUTES = frozenset(
    {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.definitions",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "regista.forked_from",
        "regista.request",
    }
)


#: Attributes that are exported whole or not at all when values are cut.
WHOLE_OR_NOTHING = frozenset({"regista.request"})


def _io(attrs: dict[str, AttrValue], key: str, value: str, json: bool) -> None:
    """``input.value`` / ``output.value`` (what Phoenix and other OpenInference readers show
    as a span's Input and Output) with their MIME type."""
    attrs[f"{key}.value"] = value
    attrs[f"{key}.mime_type"] = "application/json" if json else "text/plain"


def fit_values(span: SpanSpec, limit: int) -> None:
    """Cut every string attribute of ``span`` and below to ``limit`` characters, keeping
    JSON values valid (see :mod:`regista.trace.otel_fit`)."""
    for node in span.walk():
        attrs = node.attributes
        for key, value in list(attrs.items()):
            if not isinstance(value, str) or len(value) <= limit:
                continue
            if key in WHOLE_OR_NOTHING:  # a part of it would mislead an import: left out
                del attrs[key]
                continue
            is_json = key in JSON_ATTRIBUTES or (
                key.endswith(".value") and attrs.get(key[:-6] + ".mime_type") == "application/json"
            )
            if is_json:
                try:
                    attrs[key] = fit_json(orjson.loads(value), limit)
                    continue
                except orjson.JSONDecodeError:
                    pass
            attrs[key] = fit_text(value, limit)
        if node.error is not None:
            node.error = fit_text(node.error, limit)


def agent_name(start: SessionStart) -> str | None:
    """``metadata["agent_name"]``, else the attribute of ``agent_ref`` ("module:attr")."""
    name = start.metadata.get("agent_name")
    if isinstance(name, str) and name:
        return name
    if start.agent_ref and ":" in start.agent_ref:
        return start.agent_ref.rsplit(":", 1)[1] or None
    return None


class _Builder:
    def __init__(self, trace: Trace, include_content: bool) -> None:
        self.trace = trace
        self.content = include_content
        self.start = trace.start
        self.sid = trace.session_id
        self.tool_descriptions = {
            str(t.get("name")): str(t.get("description") or "") for t in self.start.tools
        }
        self.provider = provider_name(self._first_provider())

    def _first_provider(self) -> str:
        for step in self.trace.steps():
            ev = step.response_event or step.compaction
            if ev is not None:
                return str(ev.provider)
        return self.start.provider

    def ns(self, event: Any) -> int:
        return ts_ns(event, self.trace)

    def common(self, step: Step) -> dict[str, AttrValue]:
        return {
            "gen_ai.conversation.id": self.sid,
            "regista.step": step.index,
            "regista.step.kind": step.kind,
            "regista.turn": step.turn,
            "regista.source": step.source,
        }

    # -- steps ---------------------------------------------------------------------------

    def model(self, step: Step) -> SpanSpec:
        req, resp = step.request_event, step.response_event
        assert req is not None
        provider = provider_name(resp.provider) if resp else self.provider
        attrs: dict[str, AttrValue] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": req.model,
            **_request_params(req.max_tokens, req.params),
            **self.common(step),
            "regista.request_hash": req.request_hash,
            "openinference.span.kind": "LLM",
            "llm.provider": provider,
            "llm.model_name": req.model,
        }
        how = (resp.model_extra or {}) if resp else {}
        stream = req.params.get("stream", how.get("stream"))
        if isinstance(stream, bool):
            attrs["gen_ai.request.stream"] = stream
        attrs.update(server_attributes(how.get("server")))
        span = self.step_spec(step, f"chat {req.model}", "client", attrs)
        if resp is not None:
            response = LlmResponse.model_validate(resp.response)
            _set(attrs, "gen_ai.response.id", response.id)
            _set(attrs, "gen_ai.response.model", response.model)
            # The model that answered is what a backend prices: the offline model is free.
            attrs["llm.model_name"] = (
                "scripted" if resp.provider == "scripted" else (response.model or req.model)
            )
            if response.stop_reason:
                attrs["gen_ai.response.finish_reasons"] = [finish_reason(response.stop_reason)]
            attrs.update(_usage(response.usage))
            _set(attrs, "regista.cost_usd", resp.cost_usd)
            if resp.cost_usd is not None:
                attrs["llm.cost.total"] = resp.cost_usd
            if self.content:
                out = output_messages(response.content, response.stop_reason)
                attrs["gen_ai.output.messages"] = to_json(out)
                text = response.text
                only_text = all(b.get("type") == "text" for b in response.content)
                _io(attrs, "output", text if only_text else to_json(out), not only_text)
        if self.content:
            request = self.trace.request_for(req)
            attrs["gen_ai.input.messages"] = to_json(input_messages(request.messages))
            _io(attrs, "input", str(attrs["gen_ai.input.messages"]), True)
            system = system_instructions(request.system)
            if system is not None:
                attrs["gen_ai.system_instructions"] = to_json(system)
            if request.tools:
                attrs["gen_ai.tool.definitions"] = to_json(_tool_definitions(request.tools))
            # What the conventions have no attribute for, so that the request comes back
            # whole on import (the same request hash): tools as sent, tool choice, params.
            attrs["regista.request"] = to_json(
                {
                    "tools": request.tools,
                    "tool_choice": request.tool_choice,
                    "params": request.params,
                }
            )
        self.errors(step, span)
        if resp is None and span.error is None:
            span.error = "no response was recorded (the session stopped during this call)"
            attrs["error.type"] = "incomplete"
        return span

    def compaction(self, step: Step) -> SpanSpec:
        ev = step.compaction
        assert ev is not None
        model = self.start.model
        attrs: dict[str, AttrValue] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider_name(ev.provider),
            "gen_ai.request.model": model,
            **_usage(ev.usage),
            **self.common(step),
            "regista.request_hash": ev.request_hash,
            "regista.compaction.tokens_before": ev.tokens_before,
            "regista.compaction.replaced_messages": len(ev.replaced),
            "openinference.span.kind": "LLM",
            "llm.provider": provider_name(ev.provider),
            "llm.model_name": "scripted" if ev.provider == "scripted" else model,
        }
        _set(attrs, "regista.cost_usd", ev.cost_usd)
        if ev.cost_usd is not None:
            attrs["llm.cost.total"] = ev.cost_usd
        if self.content:
            attrs["gen_ai.input.messages"] = to_json(input_messages(ev.replaced))
            attrs["gen_ai.output.messages"] = to_json(
                output_messages([{"type": "text", "text": ev.summary}], "end_turn")
            )
            _io(attrs, "input", str(attrs["gen_ai.input.messages"]), True)
            _io(attrs, "output", ev.summary, False)
        span = self.step_spec(step, f"chat {model}", "client", attrs)
        self.errors(step, span)
        return span

    def tool(self, step: Step) -> SpanSpec:
        call, decision, result = step.tool_call, step.decision, step.result
        assert call is not None
        attrs: dict[str, AttrValue] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.tool_use_id,
            "gen_ai.tool.type": "function",
            **self.common(step),
            "openinference.span.kind": "TOOL",
            "tool.name": call.name,
        }
        _set(attrs, "gen_ai.tool.description", self.tool_descriptions.get(call.name) or None)
        if decision is not None:
            attrs["regista.permission.denied"] = not decision.allowed
            attrs["regista.permission.by"] = decision.by
            _set(attrs, "regista.permission.reason", decision.reason)
        if self.content:
            attrs["gen_ai.tool.call.arguments"] = to_json(call.input)
            _io(attrs, "input", str(attrs["gen_ai.tool.call.arguments"]), True)
            if result is not None:
                _io(attrs, "output", text_of(result.content) or to_json(result.content), False)
        span = self.step_spec(step, f"execute_tool {call.name}", "internal", attrs)
        # Status comes from the recorded decision and result only, never from error
        # events, so that a replay (which does not run the tool again) gives the same one.
        if step.denied:
            reason = decision.reason if decision else None
            span.error = f"permission denied: {reason}" if reason else "permission denied"
            attrs["error.type"] = "permission_denied"
        elif result is not None and result.is_error:
            span.error = (
                _first_line(text_of(result.content))
                if self.content
                else f"tool {call.name} returned an error"
            )
            attrs["error.type"] = "tool_error"
        elif result is None:
            span.error = "no result was recorded (the session stopped during this call)"
            attrs["error.type"] = "incomplete"
        if result is not None and self.content:  # error results too: they are what came back
            attrs["gen_ai.tool.call.result"] = _result_json(result.content)
        span.events.extend(_exception(ev, self.trace, self.content) for ev in step.errors)
        return span

    def step_spec(
        self,
        step: Step,
        name: str,
        kind: Literal["internal", "client"],
        attrs: dict[str, AttrValue],
    ) -> SpanSpec:
        """The span of ``step``, placed in time by :func:`step_span`."""
        start, end = step_span(step, self.ns)
        return SpanSpec(name, kind, start, end, attrs, key=f"step/{step.index}")

    def errors(self, step: Step, span: SpanSpec) -> None:
        for ev in step.errors:
            span.events.append(_exception(ev, self.trace, self.content))
            span.error = ev.message if self.content else _bare_error(ev)
            span.attributes["error.type"] = ev.error_type

    # -- tree ----------------------------------------------------------------------------

    def turns(self) -> list[SpanSpec]:
        by_turn: dict[int, list[SpanSpec]] = {}
        for step in self.trace.steps():
            if step.kind == "model":
                span = self.model(step)
            elif step.kind == "tool":
                span = self.tool(step)
            else:
                span = self.compaction(step)
            by_turn.setdefault(step.turn, []).append(span)
        out = []
        for turn in sorted(by_turn):
            children = by_turn[turn]
            out.append(
                SpanSpec(
                    f"turn {turn}",
                    "internal",
                    min(c.start_ns for c in children),
                    max(c.end_ns for c in children),
                    {
                        "gen_ai.conversation.id": self.sid,
                        "regista.turn": turn,
                        "openinference.span.kind": "CHAIN",
                    },
                    children=children,
                    key=f"turn/{turn}",
                )
            )
        return out

    def session(self) -> SpanSpec:
        start, end = self.start, self.trace.end
        summary = self.trace.summary()
        name = agent_name(start)
        attrs: dict[str, AttrValue] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": self.provider,
            "gen_ai.conversation.id": self.sid,
            "gen_ai.request.model": start.model,
            **_request_params(start.max_tokens, start.params),
            **_usage(summary.tokens.usage_dict()),
            "regista.turns": summary.turns,
            "regista.steps": summary.steps,
            "regista.tool_calls": summary.tool_calls,
            "regista.complete": end is not None,
            "openinference.span.kind": "AGENT",
            "session.id": self.sid,
        }
        _set(attrs, "gen_ai.agent.name", name)
        _set(attrs, "regista.agent_ref", start.agent_ref)
        _set(attrs, "regista.policy", start.policy)
        _set(attrs, "regista.stop_reason", summary.stop_reason)
        _set(attrs, "regista.cost_usd", summary.cost_usd)
        _set(attrs, "regista.replay_of", start.replay_of)
        if start.forked_from:
            forked = start.forked_from if self.content else _without_edit_text(start.forked_from)
            attrs["regista.forked_from"] = to_json(forked)
        if self.content:
            attrs["gen_ai.input.messages"] = to_json(
                input_messages([{"role": "user", "content": start.task}])
            )
            system = system_instructions(start.instructions)
            if system is not None:
                attrs["gen_ai.system_instructions"] = to_json(system)
            _io(attrs, "input", start.task, False)
            if summary.output is not None:
                attrs["gen_ai.output.messages"] = to_json(
                    output_messages([{"type": "text", "text": summary.output}], "end_turn")
                )
                _io(attrs, "output", summary.output, False)
        children = self.turns()
        # As long as the run took (regista.breakdown.took_ms), from its first event or its
        # first step's start, whichever is earlier.
        placed = run_span(self.trace, [(c.start_ns, c.end_ns) for c in children])
        if placed is None:
            self.ns(start)
            self.ns(self.trace.events[-1])
            raise AssertionError("a run without a time")  # pragma: no cover
        start_ns, end_ns = placed
        span = SpanSpec(
            f"invoke_agent {name or 'regista'}",
            "internal",
            start_ns,
            end_ns,
            attrs,
            children=children,
            key="session",
        )
        loose = [ev for ev in self.trace.events if isinstance(ev, ErrorEvent) and ev.step is None]
        span.events.extend(_exception(ev, self.trace, self.content) for ev in loose)
        if end is None:
            span.error = "the session did not finish (the trace has no session.end)"
            attrs["error.type"] = "incomplete"
        elif end.error:
            span.error = end.error if self.content else f"the session ended in {end.stop_reason}"
            # The failure is the error event written right before session.end, if any
            # (an earlier one may be a tool error the session survived).
            cause = self.trace.events[-2] if len(self.trace.events) > 1 else None
            attrs["error.type"] = (
                cause.error_type if isinstance(cause, ErrorEvent) else end.stop_reason
            )
        return span


def step_span(step: Step, ns: Callable[[Any], int]) -> tuple[int, int]:
    """When a step started and ended, in the unit of ``ns`` (an event's time, which raises
    on one that is not a time): :func:`regista.breakdown.step_span`, the one definition of
    a step's place in time, which the export's spans and the share page's waterfall both
    draw (it ends at its closing event and lasts :func:`regista.breakdown.took_ms`)."""
    _, span = step_time(step)
    if span is None:
        for ev in step.events:
            ns(ev)  # names the event whose time is not one
        raise AssertionError("a span without a time")  # pragma: no cover
    return span


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "the tool returned an error"
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _result_json(content: str | list[dict[str, Any]]) -> str:
    # A tool result that already is JSON text is kept as is; anything else is encoded.
    if isinstance(content, str):
        stripped = content.lstrip()
        if stripped[:1] in ("{", "["):
            try:
                import orjson

                orjson.loads(content)
                return content
            except orjson.JSONDecodeError:
                pass
    return to_json(content)


def _tool_definitions(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "name": t.get("name"),
            "description": t.get("description"),
            "parameters": t.get("input_schema"),
        }
        for t in tools
    ]


def build_span_tree(
    trace: Trace, *, include_content: bool = False, max_value_chars: int | None = None
) -> SpanSpec:
    """The session span of ``trace`` with its turns and steps below it.

    ``max_value_chars`` cuts long attribute values, keeping JSON values valid.
    """
    tree = _Builder(trace, include_content).session()
    if max_value_chars is not None:
        fit_values(tree, max_value_chars)
    return tree


def _without_edit_text(forked_from: dict[str, Any]) -> dict[str, Any]:
    """A fork's link without what its edits said (content is exported only on request)."""

    def bare(edit: Any) -> Any:
        if not isinstance(edit, dict):
            return edit
        return {k: v for k, v in edit.items() if k not in ("content", "text", "answer")}

    out = {k: v for k, v in forked_from.items() if k not in ("edit", "edits")}
    if "edit" in forked_from:
        out["edit"] = bare(forked_from["edit"])
    if isinstance(forked_from.get("edits"), list):
        out["edits"] = [
            {**item, "edit": bare(item.get("edit"))} if isinstance(item, dict) else item
            for item in forked_from["edits"]
        ]
    return out
