"""OpenTelemetry export: a trace becomes a tree of GenAI spans, after the fact.

``export_trace(trace)`` builds the session's span tree from the recorded events — with the
**recorded** start and end times — and emits it through an OpenTelemetry tracer provider,
so a session shows up in Jaeger, Tempo, Langfuse, Phoenix, … like a live instrumented run::

    invoke_agent {agent}
    └── turn {n}
        ├── chat {model}
        └── execute_tool {name}

Conventions followed: the OpenTelemetry **GenAI semantic conventions** (status
Development) as published in ``open-telemetry/semantic-conventions-genai``, the successor
of the ``gen-ai`` pages of ``semantic-conventions`` v1.37–v1.41 — the "latest
experimental" flavour (``gen_ai.provider.name``, ``gen_ai.usage.input_tokens``, message
content as ``gen_ai.input.messages`` / ``gen_ai.output.messages`` JSON strings), not the
v1.36 names (``gen_ai.system``, ``gen_ai.prompt``, …). Token counts follow the convention's
Anthropic rules: ``gen_ai.usage.input_tokens`` includes the cache reads and writes.
regista's own attributes live under ``regista.*``. See ``docs/otel.md`` for the list.

Requires the ``otel`` extra (``pip install 'regista-harness[otel]'``); OpenTelemetry is
imported here only, and only when a function is called, so ``import regista`` never
loads it. Message content is exported only with ``include_content=True``.
"""

from __future__ import annotations

import hashlib
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from regista._version import __version__
from regista.errors import UserError
from regista.trace.otel_spans import (
    RUN_SPECIFIC_ATTRIBUTES,
    SpanSpec,
    build_span_tree,
)
from regista.trace.reader import Trace
from regista.trace.verify import check_rebuilt

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer, TracerProvider

__all__ = [
    "GENAI_CONVENTIONS",
    "INSTALL_HINT",
    "RUN_SPECIFIC_ATTRIBUTES",
    "ExportSummary",
    "SessionIds",
    "SpanSpec",
    "build_span_tree",
    "export_trace",
    "require_otel",
]

#: Which conventions the spans follow (also in ``docs/otel.md``).
GENAI_CONVENTIONS = (
    "OpenTelemetry GenAI semantic conventions, latest experimental "
    "(open-telemetry/semantic-conventions-genai; gen-ai pages of semantic-conventions "
    "v1.37-v1.41)"
)

INSTALL_HINT = "pip install 'regista-harness[otel]'"


@dataclass(frozen=True)
class ExportSummary:
    """What :func:`export_trace` emitted."""

    session_id: str
    trace_id: str
    """The OpenTelemetry trace id (32 hex digits) of the spans, for finding them in a backend."""
    spans: int


def require_otel(*, otlp: bool = False) -> None:
    """Raise a :class:`UserError` naming the extra when the OpenTelemetry SDK is missing.

    Args:
        otlp: The spans go over OTLP/HTTP: its exporter, the extra's other half, is
            needed too.
    """
    modules = ["opentelemetry.trace", "opentelemetry.sdk.trace"]
    if otlp:
        modules.append("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    try:
        for module in modules:
            importlib.import_module(module)
    except ImportError:
        raise UserError(f"OpenTelemetry export needs the 'otel' extra: {INSTALL_HINT}") from None


def export_trace(
    trace: Trace | str | Path,
    tracer_provider: TracerProvider | None = None,
    include_content: bool = False,
    max_value_chars: int | None = None,
) -> ExportSummary:
    """Emit a recorded session as OpenTelemetry spans with their recorded timestamps.

    Args:
        trace: A loaded :class:`Trace` or the path of a trace file.
        tracer_provider: Where the spans go; ``None`` uses the global provider (set up
            with ``opentelemetry.trace.set_tracer_provider``). Its processors are flushed
            before this returns.
        include_content: Also export prompts, answers, tool arguments and tool results
            (``gen_ai.input.messages``, ``gen_ai.output.messages``,
            ``gen_ai.tool.call.arguments``, …). Off by default: content is often sensitive.
        max_value_chars: Cut attribute values to this many characters; JSON values lose
            whole messages, parts or items first and always stay valid JSON.

    Raises:
        UserError: The ``otel`` extra is not installed.
        TraceError: The trace cannot be read.
    """
    require_otel()
    from opentelemetry import trace as trace_api

    loaded = trace if isinstance(trace, Trace) else Trace.load(trace)
    check_rebuilt(loaded)
    tree = build_span_tree(loaded, include_content=include_content, max_value_chars=max_value_chars)
    provider = tracer_provider or trace_api.get_tracer_provider()
    tracer = provider.get_tracer("regista", __version__)
    ids = SessionIds(loaded.session_id)
    if hasattr(tracer, "id_generator"):  # the SDK's tracer: ids derived from the session
        tracer.id_generator = ids
    root_context = _emit(tracer, tree, None, ids)
    flush = getattr(provider, "force_flush", None)
    if callable(flush):
        flush()
    return ExportSummary(
        session_id=loaded.session_id,
        trace_id=f"{root_context.trace_id:032x}",
        spans=len(tree.walk()),
    )


class SessionIds:
    """Trace and span ids derived from the session id and each span's key (``session``,
    ``turn/N``, ``step/N``): exporting a session again gives the same ids, so a backend
    sees the same spans instead of a second copy. (An OpenTelemetry ``IdGenerator``.)"""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.key = "session"

    def _digest(self, what: str, size: int) -> int:
        raw = hashlib.sha256(f"regista:{what}:{self.session_id}".encode()).digest()[:size]
        return int.from_bytes(raw, "big") or 1  # zero is not a valid id

    def generate_trace_id(self) -> int:
        return self._digest("trace", 16)

    def generate_span_id(self) -> int:
        return self._digest(f"span:{self.key}", 8)

    def is_trace_id_random(self) -> bool:
        return False  # derived, not random (sets no W3C "random" trace flag)


def _emit(tracer: Tracer, spec: SpanSpec, parent: Any, ids: SessionIds) -> Any:
    """Start ``spec``'s span, emit its children under it, end it; returns its SpanContext."""
    from opentelemetry import context as context_api
    from opentelemetry import trace as trace_api
    from opentelemetry.trace import SpanKind, Status, StatusCode

    kind = SpanKind.CLIENT if spec.kind == "client" else SpanKind.INTERNAL
    # A fresh context for the root: a historical session never joins whatever span is
    # current in the exporting process.
    ctx = parent if parent is not None else context_api.Context()
    ids.key = spec.key or spec.name
    span = tracer.start_span(
        spec.name, context=ctx, kind=kind, attributes=spec.attributes, start_time=spec.start_ns
    )
    for event in spec.events:
        span.add_event(event.name, event.attributes, timestamp=event.time_ns)
    child_ctx = trace_api.set_span_in_context(span)
    for child in spec.children:
        _emit(tracer, child, child_ctx, ids)
    if spec.error is not None:
        span.set_status(Status(StatusCode.ERROR, spec.error))
    span.end(end_time=spec.end_ns)
    return span.get_span_context()
