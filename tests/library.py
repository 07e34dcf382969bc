"""A small traces folder with every kind of run, made by code (the store and server tests')."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from builders import answer, simple_agent, tool_use

from regista import ToolResultEdit, fork, replay, rewind
from regista.providers import ScriptedProvider


@dataclass
class Library:
    folder: Path
    original: Path
    replayed: Path
    forked: Path
    rewound: Path
    unfinished: Path
    resumed: Path
    failed: Path


async def build_library(folder: Path) -> Library:
    """An original run, its replay, a fork and a rewind of it, an interrupted run and its
    resume, and a run that ran out of turns (failed) about something else."""
    folder.mkdir(parents=True, exist_ok=True)
    original = (await simple_agent(folder).run("Weather in Paris for the picnic?")).trace_path
    replayed = (await replay(original, trace_dir=folder)).trace_path
    forked = (
        await fork(
            original,
            1,
            ToolResultEdit("Thunderstorms over Paris all day."),
            live_after=1,
            agent=simple_agent(folder),
            trace_dir=folder,
        )
    ).trace_path
    rewound = (await rewind(original, 2, agent=simple_agent(folder), trace_dir=folder)).trace_path
    cut = await simple_agent(folder).run("Weather in Lisbon tomorrow?")
    lines = cut.trace_path.read_text().splitlines()
    first_result = next(i for i, ln in enumerate(lines) if '"tool.result"' in ln)
    cut.trace_path.write_text("\n".join(lines[: first_result + 1]) + "\n")
    resumed = (await simple_agent(folder).resume(cut.trace_path)).trace_path
    looping = ScriptedProvider(
        lambda req: answer(tool_use(f"toolu_{len(req.messages)}", "flaky", reason="database down"))
    )
    agent = simple_agent(folder, provider=looping)
    agent.max_turns = 2
    failed = (await agent.run("Reconcile the invoices database")).trace_path
    return Library(folder, original, replayed, forked, rewound, cut.trace_path, resumed, failed)
