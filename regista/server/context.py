"""What every route of the server shares: the store, the token, limits, and errors.

Routes raise :class:`~regista.wire.errors.HttpError` for anything a client did wrong; the
app turns it into a JSON answer in the shape the client expects (regista's own,
Anthropic's or OpenAI's), never a traceback.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from starlette.requests import Request

from regista.diff.masks import MaskSet
from regista.wire.errors import ErrorShape, HttpError

__all__ = [
    "DEFAULT_MAX_BODY",
    "DEFAULT_REPLAY_TTL",
    "DEFAULT_SESSION_IDLE",
    "ServerContext",
]

#: The largest request body accepted (bytes); a larger one is answered 413.
DEFAULT_MAX_BODY = 32 * 1024 * 1024
#: How long a replay lives in memory (seconds) when nothing asks for another time.
DEFAULT_REPLAY_TTL = 3600.0
#: ``regista serve`` ends a recorded session no call has continued for this long (seconds).
DEFAULT_SESSION_IDLE = 300.0

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")


@dataclass
class ServerContext:
    """Shared by every route.

    Attributes:
        store: The folder of traces (``<store>/<session_id>.jsonl``).
        token: When set, every request must carry it (see :mod:`regista.server.app`).
        max_body: The largest request body accepted, in bytes.
        replay_ttl: Seconds a replay lives in memory.
        upstreams: Base URLs of the real providers (``anthropic``, ``openai``) that the
            record proxy and live replays forward to (default: the public APIs).
        session_idle: Seconds after which a recorded session no call continued ends
            (``None``: sessions end only when the recording stops).
        masks: The volatile spans that SDK replays' strict match ignores
            (:mod:`regista.diff.masks`; ``None``: the built-in set).
        state: Per-module state (a module keeps its registry under its own name).
    """

    store: Path
    token: str | None = None
    max_body: int = DEFAULT_MAX_BODY
    replay_ttl: float = DEFAULT_REPLAY_TTL
    upstreams: dict[str, str] = field(default_factory=dict)
    session_idle: float | None = None
    masks: MaskSet | None = None
    state: dict[str, Any] = field(default_factory=dict)

    def run_path(self, run_id: str) -> Path:
        """The trace of ``run_id`` inside the store.

        Looked up by file name (``<run_id>.jsonl``) first; when that misses, by id among
        the runs ``/v1/runs`` lists (:func:`regista.store.runs.find_run_file`), so every link
        it hands out resolves. Either way the trace must be inside the store (or, for a
        project's traces folder, its ``.regista`` folder), symlinks resolved.

        Raises:
            HttpError: 404 when the id is not a plain name, leaves the store, or has no trace.
        """
        if not _RUN_ID.fullmatch(run_id) or ".." in run_id:
            raise HttpError(404, f"no run {run_id!r} in the store")
        from regista.store.paths import OutsideStore, store_path

        name = run_id if run_id.endswith(".jsonl") else f"{run_id}.jsonl"
        try:
            path = store_path(self.store, name)
        except OutsideStore:
            raise HttpError(404, f"no run {run_id!r} in the store") from None
        if path.is_file():
            return path
        # a run whose file has another name, or that the store's listing reads elsewhere (a
        # fork of the project's sweeps): found by its id as ``/v1/runs`` lists it
        from regista.errors import UserError
        from regista.store.runs import find_run_file, project_of

        try:
            found = find_run_file(self.store, run_id.removesuffix(".jsonl"))
        except UserError:  # no store folder (yet)
            found = None
        if found is not None:
            project = project_of(self.store)
            for root in (self.store, project) if project is not None else (self.store,):
                try:
                    return store_path(root, found)
                except OutsideStore:
                    continue
        raise HttpError(404, f"no run {run_id!r} in the store")


async def read_body(
    request: Request, ctx: ServerContext, *, shape: ErrorShape = "regista"
) -> bytes:
    """The request's body, read no further than ``ctx.max_body``.

    Raises:
        HttpError: 413 past ``ctx.max_body``.
    """
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > ctx.max_body:
            raise HttpError(413, _too_large(ctx), shape=shape)
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json(
    request: Request, ctx: ServerContext, *, shape: ErrorShape = "regista"
) -> dict[str, Any]:
    """The request's body as a JSON object.

    Raises:
        HttpError: 413 past ``ctx.max_body``; 400 when it is not a JSON object.
    """
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            too_big = int(declared) > ctx.max_body
        except ValueError:
            raise HttpError(400, "Content-Length is not a number", shape=shape) from None
        if too_big:
            raise HttpError(413, _too_large(ctx), shape=shape)
    raw = await read_body(request, ctx, shape=shape)
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise HttpError(400, f"the body is not valid JSON: {exc}", shape=shape) from None
    if not isinstance(body, dict):
        raise HttpError(
            400, f"the body must be a JSON object, not {type(body).__name__}", shape=shape
        )
    return body


def _too_large(ctx: ServerContext) -> str:
    return f"the body is larger than the server accepts ({ctx.max_body} bytes)"
