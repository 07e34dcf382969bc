"""The helpers and defaults that several parts of regista share, each written once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import regista
from regista.aio import await_maybe, run_sync
from regista.defaults import DEFAULT_TRACE_DIR, trace_path
from regista.errors import UserError
from regista.loading import resolve_agent


def test_the_public_names_are_the_engine_s_own() -> None:
    from regista.clock import FakeClock
    from regista.errors import TraceWarning
    from regista.providers.scripted import ScriptedProvider
    from regista.trace.reader import Trace

    assert regista.Trace is Trace and regista.FakeClock is FakeClock
    assert regista.TraceWarning is TraceWarning and regista.ScriptedProvider is ScriptedProvider
    assert {"Trace", "FakeClock", "TraceWarning", "ScriptedProvider"} <= set(regista.__all__)


def test_await_maybe_takes_values_and_awaitables() -> None:
    async def three() -> int:
        return 3

    async def both() -> tuple[int, int]:
        return await await_maybe(2), await await_maybe(three())

    assert asyncio.run(both()) == (2, 3)


def test_run_sync_works_with_and_without_a_running_loop() -> None:
    async def answer() -> str:
        return "ok"

    assert run_sync(answer()) == "ok"

    async def inside() -> str:
        return run_sync(answer())  # a loop runs here: a helper thread runs its own

    assert asyncio.run(inside()) == "ok"


def test_trace_paths() -> None:
    assert Path(".regista/traces") == DEFAULT_TRACE_DIR
    assert trace_path("runs", "01ABC") == Path("runs/01ABC.jsonl")


def test_resolve_agent_prefers_the_given_agent_then_the_trace_s() -> None:
    marker = object()
    assert resolve_agent(marker, "nowhere:nothing", "unused") is marker  # type: ignore[arg-type]
    agent = resolve_agent(None, "regista.samples.refund:refund_agent", "unused")
    assert agent.agent_ref == "regista.samples.refund:refund_agent"
    with pytest.raises(UserError, match="no agent here"):
        resolve_agent(None, None, "no agent here")


def test_a_diff_groups_steps_without_rebuilding_requests() -> None:
    from files import HAPPY

    from regista import Trace

    trace = Trace.load(HAPPY)  # not a path from the folder pytest runs in
    groups = trace.step_groups()
    assert [s.index for s in groups] == [s.index for s in trace.steps()]
    assert trace.step_groups() is trace.steps()  # once built, the steps are shared
