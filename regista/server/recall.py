"""``GET /v1/recall?q=WORDS[&limit=N]``: earlier runs that dealt with the same words.

The answer is ``regista recall --json``'s objects (successful runs first, each with the path
its steps took and the steps where the words occur), without the file paths: where the store
lives is the server's business. The store's index is brought up to date first, in a worker
thread (it reads only what changed since the last look).
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from regista.errors import RegistaError
from regista.server.context import ServerContext
from regista.wire.errors import HttpError

__all__ = ["routes"]


def routes(ctx: ServerContext) -> list[BaseRoute]:
    def search(words: str, limit: int) -> list[dict[str, Any]]:
        from regista.store.recall import RecallIndex

        if not ctx.store.is_dir():
            return []
        with RecallIndex(ctx.store) as index:
            index.update()
            hits = [h.to_dict() for h in index.search(words, limit)]
        for hit in hits:
            hit["id"] = hit["session_id"]
            hit.pop("path", None)
        return hits

    async def recall(request: Request) -> Response:
        words = request.query_params.get("q", "")
        raw_limit = request.query_params.get("limit", "10")
        if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= 100:
            raise HttpError(400, "limit must be a whole number from 1 to 100")
        try:
            hits = await run_in_threadpool(search, words, int(raw_limit))
        except RegistaError as exc:
            raise HttpError(400, str(exc)) from None
        return JSONResponse({"runs": hits})

    return [Route("/v1/recall", recall, methods=["GET"])]
