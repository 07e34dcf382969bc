"""``regista export TRACE [--otlp URL | --console]``: send a trace to an OpenTelemetry backend.

The spans are built from the trace (``regista.trace.otel``), collected in memory, then
handed to the exporter in one call, so the command knows whether the backend accepted
them: an unreachable or refusing endpoint is one clear line and exit code 1.
OpenTelemetry is imported only when the command runs (it is the ``otel`` extra).
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from regista.errors import UserError

DEFAULT_ENDPOINT = "http://localhost:4318/v1/traces"
TRACES_PATH = "/v1/traces"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "export",
        help="send a trace to an OpenTelemetry backend (OTLP/HTTP) or print its spans",
        description="Turn a trace into OpenTelemetry GenAI spans with the recorded timestamps "
        "and send them over OTLP/HTTP (Jaeger, Tempo, Langfuse, Phoenix, an OpenTelemetry "
        "Collector, …) or print them. Without --otlp or --console the endpoint comes from "
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT, else "
        f"{DEFAULT_ENDPOINT}; headers (e.g. authorization) from OTEL_EXPORTER_OTLP_HEADERS.",
    )
    p.add_argument("trace", metavar="TRACE", help="the trace (.jsonl) to export")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--otlp", metavar="URL", help=f"OTLP/HTTP traces endpoint, e.g. {DEFAULT_ENDPOINT}"
    )
    where.add_argument("--console", action="store_true", help="print the spans instead")
    p.add_argument(
        "--include-content",
        action="store_true",
        help="also export prompts, answers, tool arguments and results (off by default)",
    )
    p.add_argument(
        "--max-value-chars",
        type=int,
        default=None,
        metavar="N",
        help="cut every attribute value to N characters (default: "
        "$OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT, else no limit); with --include-content every "
        "chat span carries the whole conversation so far",
    )
    p.add_argument(
        "--service-name",
        default=None,
        help="service.name of the spans (default: $OTEL_SERVICE_NAME or 'regista')",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="give up on the endpoint after this long (default 10)",
    )
    p.set_defaults(func=run)


def shown_url(url: str) -> str:
    """``url`` as it may be printed: a password in it (``user:pw@host``) becomes ``***``."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url
    if not password:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def resolve_endpoint(url: str | None) -> str:
    """The traces URL: ``url``, else the standard OTLP environment variables, else the default.

    A URL without a path gets ``/v1/traces`` (people often give the collector's base URL).
    """
    if url is None:
        url = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        if not url:
            base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
            url = base.rstrip("/") + TRACES_PATH if base else DEFAULT_ENDPOINT
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UserError(
            f"--otlp wants an http(s) URL such as {DEFAULT_ENDPOINT}, not {shown_url(url)!r}"
        )
    if parts.path in ("", "/"):
        url = url.rstrip("/") + TRACES_PATH
    return url


def run(args: argparse.Namespace) -> int:
    from regista.trace.otel import export_trace, require_otel
    from regista.trace.reader import Trace
    from regista.trace.verify import check_rebuilt

    require_otel(otlp=not args.console)
    if args.timeout <= 0:
        raise UserError("--timeout must be a positive number of seconds")
    if args.max_value_chars is not None and args.max_value_chars <= 0:
        raise UserError("--max-value-chars must be a positive number of characters")
    endpoint = None if args.console else resolve_endpoint(args.otlp)
    trace = Trace.load(args.trace)
    check_rebuilt(trace)

    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    service = args.service_name or os.environ.get("OTEL_SERVICE_NAME") or "regista"
    collected = InMemorySpanExporter()
    # SpanLimits() reads the OTEL_*_LENGTH_LIMIT variables; --max-value-chars is applied
    # before the SDK sees the values, at whole messages, so JSON values stay valid.
    limit = args.max_value_chars or _env_limit()
    unset = SpanLimits.UNSET
    provider = TracerProvider(
        resource=Resource.create({"service.name": service}),
        span_limits=SpanLimits(max_attribute_length=unset, max_span_attribute_length=unset),
    )
    provider.add_span_processor(SimpleSpanProcessor(collected))
    with _no_truncation_notes():
        summary = export_trace(
            trace,
            provider,
            include_content=args.include_content,
            max_value_chars=limit,
        )
    spans = collected.get_finished_spans()
    provider.shutdown()

    what = f"{summary.spans} spans of session {summary.session_id} (trace id {summary.trace_id})"
    if endpoint is None:
        _print_console(spans)
        print(f"printed {what}", file=sys.stderr)
        return 0
    problem = _send_otlp(spans, endpoint, args.timeout)
    if problem is not None:
        print(f"regista: could not export to {shown_url(endpoint)}: {problem}", file=sys.stderr)
        return 1
    print(f"exported {what} to {shown_url(endpoint)}")
    return 0


def _env_limit() -> int | None:
    """The standard ``OTEL_(SPAN_)ATTRIBUTE_VALUE_LENGTH_LIMIT``, applied like the option."""
    for name in ("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT"):
        raw = os.environ.get(name, "").strip()
        if raw.isdigit() and int(raw) > 0:
            return int(raw)
    return None


def _print_console(spans: Sequence[Any]) -> None:
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    exporter = ConsoleSpanExporter(out=sys.stdout)
    try:
        exporter.export(spans)
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. piped into `head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


class _NoTruncationNote(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "exceeds max length" not in str(record.msg)


@contextmanager
def _no_truncation_notes() -> Iterator[None]:
    """The SDK warns once per attribute value it cuts; cutting is what was asked for."""
    logger = logging.getLogger("opentelemetry.attributes")
    note = _NoTruncationNote()
    logger.addFilter(note)
    try:
        yield
    finally:
        logger.removeFilter(note)


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def _captured_exporter_logs() -> Iterator[_Capture]:
    """Keep the SDK's own warnings off the terminal; we report the failure ourselves."""
    logger = logging.getLogger("opentelemetry.exporter")
    capture = _Capture()
    saved = logger.propagate, logger.level
    logger.addHandler(capture)
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    try:
        yield capture
    finally:
        logger.removeHandler(capture)
        logger.propagate, logger.level = saved


def _send_otlp(spans: Sequence[Any], endpoint: str, timeout: float) -> str | None:
    """Send ``spans``; ``None`` on success, else why it failed (one line)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    exporter = OTLPSpanExporter(endpoint=endpoint, timeout=timeout)
    try:
        with _captured_exporter_logs() as capture:
            result = exporter.export(spans)
    finally:
        exporter.shutdown()  # type: ignore[no-untyped-call]
    if result == SpanExportResult.SUCCESS:
        return None
    return _failure_reason(capture.records, endpoint, timeout)


def _failure_reason(records: list[logging.LogRecord], endpoint: str, timeout: float) -> str:
    """A short reason: the HTTP status the exporter logged, else what a plain connect says."""
    for record in records:
        args = record.args if isinstance(record.args, tuple) else ()
        # "Failed to export %s batch code: %s, reason: %s"
        if len(args) == 3 and isinstance(args[1], int):
            return f"the endpoint answered HTTP {args[1]} {args[2] or ''}".rstrip()
    # The exporter does not say why a connection failed; ask the socket.
    parts = urlsplit(endpoint)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=min(timeout, 2.0)):
            pass
    except OSError as exc:
        why = (exc.strerror or type(exc).__name__).lower()
        return f"cannot connect ({why}); is an OTLP/HTTP collector listening there?"
    return "the endpoint did not accept the spans in time"
