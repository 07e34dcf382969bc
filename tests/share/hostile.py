"""A run whose every field is hostile HTML: the share page must show it and run none of it."""

from __future__ import annotations

from pathlib import Path

from builders import answer, tool_use

from regista import Agent, tool
from regista.loop import FakeClock
from regista.providers import ScriptedProvider

XSS = [
    "<script>window.__pwned = 1</script>",
    "</script><script>window.__pwned = 2</script>",
    '<img src=x onerror="window.__pwned = 3">',
    "<!-- <script>window.__pwned = 4</script> -->",
    '"><svg onload="window.__pwned=5">',
    "\u2028\u2029 & &amp; &lt; ]]> {{x}} ${x}",
]
HOSTILE = " ".join(XSS)


def hostile_trace(folder: Path) -> Path:
    @tool
    def lookup(query: str) -> str:
        """Looks something up."""
        return f"result for {query}: {HOSTILE}"

    script = [
        answer(tool_use("toolu_x1", "lookup", query=XSS[0]), text=XSS[1]),
        answer(tool_use("toolu_x2", "lookup", query=XSS[2])),
        answer(text=f"Done. {HOSTILE}"),
    ]
    agent = Agent(
        model="claude-sonnet-4-6",
        instructions=f"System {XSS[3]}",
        tools=[lookup],
        provider=ScriptedProvider(script),
        trace_dir=folder,
        clock=FakeClock(),
    )
    return agent.run_sync(f"Task {XSS[4]} {XSS[5]}").trace_path
