"""``regista mcp``: the MCP server, driven by the ``mcp`` SDK's own client over stdio."""

from __future__ import annotations

import sys
from pathlib import Path

from library import Library
from mcp import ClientSession, StdioServerParameters
from mcp_results import is_error, payload, stdio

from regista.trace.reader import Trace

ROOT = Path(__file__).resolve().parents[2]


async def test_tools_over_stdio(lib: Library) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "regista", "mcp", str(lib.folder)], cwd=str(ROOT)
    )
    orig = Trace.load(lib.original).session_id
    fork = Trace.load(lib.forked).session_id
    async with stdio(params) as streams, ClientSession(*streams) as session:
        await session.initialize()
        names = {t.name for t in (await session.list_tools()).tools}
        assert names == {"list_runs", "run_summary", "get_step", "diff_runs", "recall"}

        runs = payload(await session.call_tool("list_runs", {}))
        assert len(runs) == 7
        forks = payload(await session.call_tool("list_runs", {"forks_of": orig[:10]}))
        assert {r["session_id"] for r in forks} >= {orig, fork}
        failed = payload(await session.call_tool("list_runs", {"failed": True}))
        assert {(r["outcome"], r["status"]) for r in failed} == {("max_turns", "failed")}

        summary = payload(await session.call_tool("run_summary", {"run": orig[:12]}))
        assert summary["outcome"] == "end_turn" and summary["step_list"][1]["kind"] == "tool"

        step = payload(await session.call_tool("get_step", {"run": orig, "step": 1}))
        assert (step["kind"], step["status"], step["tool"]) == ("tool", "ok", "get_weather")
        assert step["input"] == {"city": "Paris"} and "Sunny" in str(step["result"])
        # facts and content, not the trace's envelopes
        assert not {"events", "schema_version", "seq", "request_hash"} & set(step)
        model = payload(await session.call_tool("get_step", {"run": orig, "step": 0}))
        assert model["tokens"]["total"] > 0 and "duration_ms" in model and "cost_usd" in model
        assert model["answer"][0]["type"] in ("text", "tool_use")

        diff = payload(await session.call_tool("diff_runs", {"run_a": orig, "run_b": fork}))
        assert diff["first_divergence"]["a_step"] == 1

        hits = payload(await session.call_tool("recall", {"words": "Thunderstorms"}))
        assert [h["session_id"] for h in hits] == [fork]

        bad = await session.call_tool("get_step", {"run": orig, "step": 99})
        assert is_error(bad) and "has no step 99" in bad.content[0].text
        outside = await session.call_tool("run_summary", {"run": "/etc/passwd"})
        assert is_error(outside)
