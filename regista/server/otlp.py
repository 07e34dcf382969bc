"""``POST /v1/traces``: OpenTelemetry traces in (OTLP/HTTP, protobuf or JSON).

Each conversation of GenAI spans becomes a regista run in the store
(``<store>/<session_id>.jsonl``): an OTel trace, or, for an agent that opens no span of its
own (one trace per model call), the traces whose calls continue one another (see
``regista.importers.otlp``). A trace sent again (or in several batches) is converted again
with the traces of its conversation from all their spans received so far, and replaces its
run (the last 1000 traces are remembered; a span received again counts once). A new trace
is put with the conversations of the last :data:`_RECENT` runs written, so that it can join
one of them or drop a duplicate of their calls. The answer is OTLP's
``ExportTraceServiceResponse`` in the request's encoding.

The receiver rewrites only the files it wrote. Spans that name a run already in the store
(a regista run exported and sent back, or spans that borrow a listed run's id) become a
run of their own, linked to it by ``imported_from.received_for`` in its ``session.start``
metadata, instead of replacing the recording. It is not refused (409): an OTLP exporter
drops a refused batch for good, and the spans are worth as much as any others.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from regista.errors import RegistaError
from regista.server.context import ServerContext, read_body
from regista.wire.errors import HttpError

if TYPE_CHECKING:
    from regista.importers._common import ImportedRun

__all__ = ["routes"]

_PROTOBUF = "application/x-protobuf"
#: How many OTel traces' spans are kept, so that a later batch of a trace joins the earlier.
_KEEP_TRACES = 1000
#: How many of the latest runs a newly received trace is converted with (to join one).
_RECENT = 8


async def _body(request: Request, ctx: ServerContext) -> bytes:
    data = await read_body(request, ctx)
    if request.headers.get("content-encoding", "").lower() == "gzip":
        import gzip

        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            raise HttpError(400, "the body is not valid gzip") from None
    return data


def routes(ctx: ServerContext) -> list[BaseRoute]:
    """The OTLP receiver route."""
    received: dict[str, list[dict[str, Any]]] = ctx.state.setdefault("otlp", {})
    paths: dict[str, list[Path]] = ctx.state.setdefault("otlp_paths", {})
    #: The traces of each run written, by each of its traces; the latest runs, last.
    groups: dict[str, tuple[str, ...]] = ctx.state.setdefault("otlp_groups", {})
    recent: dict[tuple[str, ...], None] = ctx.state.setdefault("otlp_recent", {})

    async def traces(request: Request) -> Response:
        from regista.importers.otlp import parse_protobuf

        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        data = await _body(request, ctx)
        try:
            if kind == _PROTOBUF:
                body = parse_protobuf(data)
            else:
                try:
                    body = orjson.loads(data)
                except orjson.JSONDecodeError as exc:
                    raise HttpError(400, f"the body is not valid JSON: {exc}") from None
                if not isinstance(body, dict) or not isinstance(
                    body.get("resourceSpans", []), list
                ):
                    raise HttpError(400, "the body must be an OTLP ExportTraceServiceRequest")
                body = {"resourceSpans": _well_formed(body.get("resourceSpans") or [])}
            # Keep every batch of a trace: spans of one trace often come in several.
            kept: list[tuple[str, dict[str, Any]]] = []
            for rs in body.get("resourceSpans") or []:
                ids = {
                    str(sp.get("traceId"))
                    for ss in (rs.get("scopeSpans") or [])
                    for sp in (ss.get("spans") or [])
                    if isinstance(sp, dict)
                }
                for trace_id in ids:
                    received.setdefault(trace_id, []).append(rs)
                    kept.append((trace_id, rs))
            while len(received) > _KEEP_TRACES:  # the oldest traces' spans are let go
                oldest = next(iter(received))
                received.pop(oldest)
                paths.pop(oldest, None)
                recent.pop(groups.pop(oldest, ()), None)
            touched = {
                str(sp.get("traceId"))
                for rs in body.get("resourceSpans") or []
                for ss in (rs.get("scopeSpans") or [])
                for sp in (ss.get("spans") or [])
                if isinstance(sp, dict)
            }
            if touched:
                try:
                    _convert(touched, received, paths, groups, recent, ctx.store)
                except RegistaError:
                    # A batch refused is not kept: it must not spoil the conversions of the
                    # traces it would be converted with later.
                    for trace_id, rs in kept:
                        batches = received.get(trace_id, [])
                        batches[:] = [b for b in batches if b is not rs]
                        if not batches:
                            received.pop(trace_id, None)
                    raise
        except RegistaError as exc:
            raise HttpError(400, str(exc)) from None
        if kind == _PROTOBUF:
            return Response(b"", media_type=_PROTOBUF)
        return Response(b"{}", media_type="application/json")

    return [Route("/v1/traces", traces, methods=["POST"])]


def _convert(
    touched: set[str],
    received: dict[str, list[dict[str, Any]]],
    paths: dict[str, list[Path]],
    groups: dict[str, tuple[str, ...]],
    recent: dict[tuple[str, ...], None],
    store: Path,
) -> None:
    """Convert the ``touched`` traces with their runs' traces and the latest runs' traces,
    write the runs, and remove what an earlier conversion of them wrote that is gone now."""
    from regista.importers import write_runs
    from regista.importers.otlp import convert_request, hex_id

    candidates = set(touched)
    for trace_id in touched:
        candidates.update(groups.get(trace_id, ()))
    for group in list(recent)[-_RECENT:]:
        candidates.update(group)
    candidates &= received.keys()
    order = [t for t in received if t in candidates]  # as received: stable conversions
    merged = {"resourceSpans": [rs for t in order for rs in _only(received[t], t)]}
    conv = convert_request(merged, "otlp")
    before = {p for t in candidates for p in paths.get(t, [])}
    conv.runs = [_own(run, store, before) for run in conv.runs]
    written = write_runs(conv, store) if conv.runs else []
    for stale in before - set(written):
        stale.unlink(missing_ok=True)  # an earlier conversion of these traces
    for trace_id in candidates:
        recent.pop(groups.pop(trace_id, ()), None)
        paths[trace_id] = []
    raw = {hex_id(t): t for t in candidates}  # the runs name traces by their hex ids
    for run, path in zip(conv.runs, written, strict=True):
        imported = run.events[0].get("metadata", {}).get("imported_from", {})
        found = imported.get("trace_ids") or [imported.get("trace_id")]
        ids = tuple(raw[t] for t in found if t in raw)
        for trace_id in ids:
            groups[trace_id] = ids
            paths[trace_id] = [path]
        recent[ids] = None
    while len(recent) > _KEEP_TRACES:
        recent.pop(next(iter(recent)))


def _own(run: ImportedRun, store: Path, ours: set[Path]) -> ImportedRun:
    """``run``, or the same run under an id of its own when its file in the store is not
    one the receiver wrote (a recorded run must never be replaced by what came back)."""
    from regista.importers._builder import derived_session_id
    from regista.importers._common import ImportedRun

    target = store / f"{run.session_id}.jsonl"
    if target in ours or not (target.exists() or target.is_symlink()) or _received(target):
        return run
    start = run.events[0]
    sid = derived_session_id(f"otlp-received:{run.session_id}", start.get("ts"))
    meta = dict(start.get("metadata") or {})
    meta["imported_from"] = {**meta.get("imported_from", {}), "received_for": run.session_id}
    events = [{**ev, "session_id": sid} for ev in run.events]
    events[0] = {**events[0], "metadata": meta}
    return ImportedRun(sid, events, run.parent)


def _received(path: Path) -> bool:
    """Whether ``path`` is a run this receiver wrote (its ``session.start`` says it was
    imported from OTLP spans received by the server)."""
    try:
        with open(path, "rb") as f:
            first = orjson.loads(f.readline(1 << 20))
    except (OSError, orjson.JSONDecodeError):
        return False
    imported = (first.get("metadata") or {}).get("imported_from") if isinstance(first, dict) else {}
    return (
        isinstance(imported, dict)
        and imported.get("format") == "otlp"
        and imported.get("source") == "otlp"
    )


def _well_formed(resource_spans: list[Any]) -> list[dict[str, Any]]:
    """The resource spans of a JSON body with what is not shaped as OTLP left out (a
    resource, scope or span that is not an object; a list that is not a list)."""
    out = []
    for rs in resource_spans:
        if not isinstance(rs, dict) or not isinstance(rs.get("scopeSpans"), list):
            continue
        scopes = [
            {**ss, "spans": [sp for sp in ss["spans"] if isinstance(sp, dict)]}
            for ss in rs["scopeSpans"]
            if isinstance(ss, dict) and isinstance(ss.get("spans"), list)
        ]
        if scopes:
            out.append({**rs, "scopeSpans": scopes})
    return out


def _only(batches: list[dict[str, Any]], trace_id: str) -> list[dict[str, Any]]:
    """The resource spans of ``batches`` cut down to the spans of one trace.

    A span received again (same span id: a re-export, a retried batch) counts once, as
    last received.
    """
    ours = [
        sp
        for rs in batches
        for ss in rs.get("scopeSpans") or []
        for sp in ss.get("spans") or []
        if isinstance(sp, dict) and str(sp.get("traceId")) == trace_id
    ]
    last = {str(sp["spanId"]): id(sp) for sp in ours if sp.get("spanId")}
    out = []
    for rs in batches:
        scopes = []
        for ss in rs.get("scopeSpans") or []:
            spans = [
                sp
                for sp in ss.get("spans") or []
                if isinstance(sp, dict)
                and str(sp.get("traceId")) == trace_id
                and last.get(str(sp.get("spanId")), id(sp)) == id(sp)
            ]
            if spans:
                scopes.append({**ss, "spans": spans})
        if scopes:
            out.append({**rs, "scopeSpans": scopes})
    return out
