"""``GET /v1/runs``, ``GET /v1/runs/{id}`` and ``GET /v1/diff?a=…&b=…``: the store, read.

The runs list is ``regista runs --json``'s objects (id, task, outcome, steps, cost, start,
links), newest first; a run is its summary and its steps; a diff is
``regista diff --json`` (its paths: the runs' file names in the store).
Ids resolve only inside the store.
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from regista.breakdown import run_facts
from regista.errors import RegistaError
from regista.server.context import ServerContext
from regista.wire.errors import HttpError

__all__ = ["routes"]


def _summary(trace: Any) -> dict[str, Any]:
    s = trace.summary()
    return {**run_facts(trace, s), "complete": s.complete, "started": trace.start.ts}


def routes(ctx: ServerContext) -> list[BaseRoute]:
    async def runs(request: Request) -> Response:
        from regista.store.runs import list_runs

        listed = list_runs(ctx.store) if ctx.store.is_dir() else None
        items = [r.to_dict() for r in listed.runs] if listed is not None else []
        for item in items:
            item["id"] = run_id = item["session_id"]
            item.pop("path", None)  # where the store lives is the server's business
            links = {"self": f"/v1/runs/{run_id}"}
            if parent := item.get("parent_id"):
                links["parent"] = f"/v1/runs/{parent}"
                links["diff_with_parent"] = f"/v1/diff?a={parent}&b={run_id}"
            item["links"] = links
        return JSONResponse({"runs": items})

    async def run(request: Request) -> Response:
        from regista.trace.reader import Trace

        path = ctx.run_path(request.path_params["run_id"])
        try:
            trace = Trace.load(path)
        except RegistaError as exc:
            raise HttpError(400, f"run cannot be read: {exc}") from None
        steps = [{"step": st.index, "kind": st.kind} for st in trace.steps()]
        return JSONResponse({**_summary(trace), "step_kinds": steps})

    async def diff(request: Request) -> Response:
        from regista.diff import diff_runs

        a, b = request.query_params.get("a"), request.query_params.get("b")
        if not a or not b:
            raise HttpError(400, "give the two runs: /v1/diff?a=RUN_ID&b=RUN_ID")
        path_a, path_b = ctx.run_path(a), ctx.run_path(b)
        try:
            result = diff_runs(path_a, path_b).to_dict()
        except RegistaError as exc:
            raise HttpError(400, f"cannot diff: {exc}") from None
        # The runs by their names in the store: where the store lives is the server's business.
        result["a"]["path"], result["b"]["path"] = path_a.name, path_b.name
        body = orjson.dumps(result, option=orjson.OPT_INDENT_2)
        return Response(body, media_type="application/json")

    return [
        Route("/v1/runs", runs, methods=["GET"]),
        Route("/v1/runs/{run_id}", run, methods=["GET"]),
        Route("/v1/diff", diff, methods=["GET"]),
    ]
