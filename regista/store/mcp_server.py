"""``regista mcp [DIR]``: a Model Context Protocol server over a traces folder (stdio).

A coding agent can look at its own runs: list them, read a run's summary and one step, diff
two runs and recall earlier runs by their words. Built on the official ``mcp`` SDK (imported
only when the server starts). A run is named by its session id (or a unique start of it) or by
the path of its trace among the folder's runs; nothing else is read. The runs are those
``regista runs`` lists for the same folder (:func:`regista.store.runs.run_files`): given a
project's ``.regista/traces``, its imports and the forks of its sweeps too.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from regista.errors import RegistaError, UserError
from regista.store.runs import filter_runs, list_runs, parse_since, run_files

__all__ = ["RunsTools", "build_server", "serve"]

_MAX_STRING = 20_000
_MAX_ITEMS = 200


def _clip_dict(value: dict[str, Any], limit: int = _MAX_STRING) -> dict[str, Any]:
    return {k: _clip(v, limit) for k, v in value.items()}


def _clip(value: Any, limit: int = _MAX_STRING) -> Any:
    """``value`` with long strings cut (a tool result is read by a model: keep it small)."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return value[:limit] + f"… [{len(value) - limit:,} more characters]"
    if isinstance(value, list):
        return [_clip(v, limit) for v in value]
    if isinstance(value, dict):
        return {k: _clip(v, limit) for k, v in value.items()}
    return value


def _bounded(found: dict[str, Any] | None) -> dict[str, Any] | None:
    """A run's repeats (:func:`regista.loops.waste`) as a model reads them: the first
    :data:`_MAX_ITEMS` repeats and the most wasteful groups, with how many were left out
    (a loop of ten thousand turns would fill the model's context)."""
    if found is None:
        return None
    from regista.loops import GROUPS_SHOWN

    repeats, groups = found["repeats"], found["groups"]
    return {
        **found,
        "repeats": repeats[:_MAX_ITEMS],
        "repeats_left_out": max(0, len(repeats) - _MAX_ITEMS),
        "groups": [{**g, "steps": g["steps"][:_MAX_ITEMS]} for g in groups[:GROUPS_SHOWN]],
        "groups_left_out": max(0, len(groups) - GROUPS_SHOWN),
    }


def _named(run: str) -> str:
    """A run's name as given, quoted, cut short: an error message goes back to a model."""
    return repr(run) if len(run) <= 80 else repr(run[:80]) + f"… ({len(run):,} characters)"


class RunsTools:
    """The tools, as plain methods (the MCP server and the tests call the same code)."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).resolve()
        if not self.folder.is_dir():
            raise UserError(f"{folder}: no such folder; give the folder that holds the traces")

    def _path(self, run: str) -> Path:
        from regista.store.paths import OutsideStore, store_path

        candidate = Path(run)
        if not candidate.is_absolute():
            candidate = self.folder / candidate
        if candidate.suffix == ".jsonl" and candidate.is_file():
            try:
                return store_path(self.folder, candidate)
            except OutsideStore:
                # a run the folder's listing reads elsewhere (a fork of the project's sweeps)
                resolved = candidate.resolve()
                if any(p.resolve() == resolved for p in run_files(self.folder)):
                    return resolved
                raise UserError(f"{_named(run)}: not in the traces folder {self.folder}") from None
        hit = list_runs(self.folder).by_id(run)
        if hit is None:
            raise UserError(
                f"no single run {_named(run)} in {self.folder} (give an id or its start)"
            )
        return hit.path

    def list_runs(
        self,
        failed: bool = False,
        task: str | None = None,
        forks_of: str | None = None,
        since: str | None = None,
        limit: int = 50,
    ) -> list[dict[str, Any]]:
        listing = list_runs(self.folder)
        parent = None
        if forks_of:
            parent = listing.by_id(forks_of)
            if parent is None:
                raise UserError(f"no single run {_named(forks_of)} in the folder")
        runs = filter_runs(
            listing.runs,
            failed=failed,
            task=task,
            forks_of=parent,
            since=parse_since(since) if since else None,
        )
        return [_clip(r.to_dict(), 500) for r in runs[: max(1, min(limit, 1000))]]

    def run_summary(self, run: str, offset: int = 0) -> dict[str, Any]:
        from regista.breakdown import run_facts, step_numbers
        from regista.diff.steps import step_summary
        from regista.loops import find_repeats, waste
        from regista.pricing import round_cost
        from regista.trace.reader import Trace
        from regista.vocab import step_status

        trace = Trace.load(self._path(run))
        s = trace.summary()
        end = trace.end
        steps = trace.steps()
        offset = min(max(0, offset), len(steps))  # a model may send any number
        window = steps[offset : offset + _MAX_ITEMS]
        numbers = {st.index: step_numbers(st) for st in steps}
        repeats = find_repeats(steps)
        repeat_of = {r.step: r for r in reversed(repeats)}
        return _clip_dict(
            {
                **run_facts(trace, s),
                "path": str(trace.path),
                "error": end.error if end else None,
                "repeats": _bounded(waste(repeats, lambda n: (numbers[n].tokens, numbers[n].cost))),
                "step_list": [
                    {
                        "step": st.index,
                        "kind": st.kind,
                        "summary": step_summary(st, 100),
                        "status": step_status(st),
                        "tokens": numbers[st.index].tokens.total,
                        "cost_usd": round_cost(numbers[st.index].cost),
                        "duration_ms": numbers[st.index].ms,
                        **(
                            {"repeat": repeat_of[st.index].describe()}
                            if st.index in repeat_of
                            else {}
                        ),
                    }
                    for st in window
                ],
                "step_list_offset": offset,
                "more_steps": len(steps) - offset - len(window),
            }
        )

    def get_step(self, run: str, step: int) -> dict[str, Any]:
        from regista.trace.reader import Trace

        trace = Trace.load(self._path(run))
        steps = trace.steps()
        found = next((st for st in steps if st.index == step), None)
        if found is None:
            raise UserError(f"run {trace.session_id} has no step {step} (0–{len(steps) - 1})")
        return _clip_dict(step_facts(trace, found, steps))

    def diff_runs(self, run_a: str, run_b: str) -> dict[str, Any]:
        from regista.diff import diff_runs

        rd = diff_runs(self._path(run_a), self._path(run_b))
        data = rd.to_dict()
        pairs = [p for p in data["pairs"] if p["kind"] != "same"]
        data["pairs"] = pairs[:_MAX_ITEMS]
        data["differences_left_out"] = max(0, len(pairs) - _MAX_ITEMS)
        return _clip_dict(data, 2000)

    def recall(self, words: str, limit: int = 10) -> list[dict[str, Any]]:
        from regista.store.recall import RecallIndex

        with RecallIndex(self.folder) as index:
            index.update()
            return [_clip(h.to_dict(), 2000) for h in index.search(words, max(1, min(limit, 50)))]


def step_facts(trace: Any, step: Any, steps: list[Any]) -> dict[str, Any]:
    """What ``get_step`` answers: a step's facts (how it went, its tokens, cost and time,
    whether it repeats an earlier one) and its content as a model reads it (the answer's
    blocks, the tool's input and result, the summary), not the trace's envelopes. A part
    recorded without its content says so."""
    from regista.breakdown import step_numbers
    from regista.loops import find_repeats
    from regista.pricing import round_cost
    from regista.vocab import step_status

    numbers = step_numbers(step)
    out: dict[str, Any] = {
        "step": step.index,
        "kind": step.kind,
        "title": step.title,
        "status": step_status(step),
        "turn": step.turn,
        "source": step.source,
        "tokens": numbers.tokens.as_dict(),
        "cost_usd": round_cost(numbers.cost),
        "duration_ms": numbers.ms,
    }
    repeat = next((r for r in find_repeats(steps) if r.step == step.index), None)
    if repeat is not None:
        out["repeat"] = repeat.as_dict() | {"text": repeat.describe()}
    if step.kind == "model":
        req, resp = step.request_event, step.response_event
        if req is not None:
            out["model"] = req.model
            out["request"] = {
                "messages": len(trace.request_for(req).messages),
                "new_messages": req.messages,
            }
        if resp is None:
            out["answer"] = "no answer was recorded (the session stopped during this call)"
        elif resp.response.get("content_captured") is False:
            out["answer"] = "not captured: this answer was recorded without its content"
            out["stop_reason"] = resp.response.get("stop_reason")
        else:
            out["answer"] = resp.response.get("content")
            out["stop_reason"] = resp.response.get("stop_reason")
    elif step.kind == "tool":
        call, result, decision = step.tool_call, step.result, step.decision
        if call is not None:
            out["tool"] = call.name
            out["input"] = call.input
        if decision is not None:
            out["decision"] = {"allowed": decision.allowed, "reason": decision.reason}
        if result is None:
            out["result"] = "no result was recorded (the session stopped during this call)"
        else:
            out["result"] = result.content
            out["is_error"] = result.is_error
    elif step.compaction is not None:
        ev = step.compaction
        out["summary"] = ev.summary
        out["replaced_messages"] = len(ev.replaced)
        out["tokens_before"] = ev.tokens_before
    errors = step.errors
    if errors:
        out["errors"] = [
            {"where": e.where, "type": e.error_type, "message": e.message} for e in errors
        ]
    return out


def build_server(folder: str | Path) -> Any:
    """The MCP server (the ``mcp`` SDK's ``MCPServer``, or ``FastMCP`` before 2.0)."""
    server_cls: Any = None
    tool_error: Any = ValueError
    for package, name in (("mcp.server.mcpserver", "MCPServer"), ("mcp.server.fastmcp", "FastMCP")):
        try:
            server_cls = getattr(importlib.import_module(package), name)
            tool_error = importlib.import_module(f"{package}.exceptions").ToolError
            break
        except (ImportError, AttributeError):
            continue
    if server_cls is None:
        raise UserError("regista mcp needs the MCP SDK: pip install 'regista-harness[mcp]'")
    tools = RunsTools(folder)
    server = server_cls(
        name="regista",
        instructions=f"Runs recorded by regista in {tools.folder}: list them, read a run's "
        "summary and its steps, diff two runs, and recall earlier runs by their words.",
    )

    def call(fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except RegistaError as exc:  # one clear line for the model, never a traceback
            raise tool_error(str(exc)) from None

    @server.tool()  # type: ignore[untyped-decorator]
    def list_runs(
        failed: bool = False,
        task: str | None = None,
        forks_of: str | None = None,
        since: str | None = None,
        limit: int = 50,
    ) -> list[dict[str, Any]]:
        """The folder's runs, newest first: id, task, outcome, steps, cost, links to other
        runs (replay of, fork of at step N, resumed from) and savings. Filters: failed only,
        task words, a run and its forks (forks_of), started since (2h, 3d, 2026-07-02)."""
        return call(tools.list_runs, failed, task, forks_of, since, limit)  # type: ignore[no-any-return]

    @server.tool()  # type: ignore[untyped-decorator]
    def run_summary(run: str, offset: int = 0) -> dict[str, Any]:
        """One run (session id, its start, or trace path): task, outcome, output, error,
        counts, cost, links, and its steps one line each (200 from offset)."""
        return call(tools.run_summary, run, offset)  # type: ignore[no-any-return]

    @server.tool()  # type: ignore[untyped-decorator]
    def get_step(run: str, step: int) -> dict[str, Any]:
        """One step of a run with all its events (request, response, tool call, decision,
        result, errors); long texts are cut at 20,000 characters."""
        return call(tools.get_step, run, step)  # type: ignore[no-any-return]

    @server.tool()  # type: ignore[untyped-decorator]
    def diff_runs(run_a: str, run_b: str) -> dict[str, Any]:
        """Two runs aligned step by step: the first divergence, counts, and the pairs that
        differ with what changed (A is the old side)."""
        return call(tools.diff_runs, run_a, run_b)  # type: ignore[no-any-return]

    @server.tool()  # type: ignore[untyped-decorator]
    def recall(words: str, limit: int = 10) -> list[dict[str, Any]]:
        """Earlier runs that dealt with these words, successful ones first, each with the
        path its steps took (tool names, ! for errors, outcome) and the steps where the
        words occur."""
        return call(tools.recall, words, limit)  # type: ignore[no-any-return]

    return server


def serve(folder: str | Path) -> None:
    """Serve ``folder`` over stdio until the client goes away."""
    build_server(folder).run("stdio")
