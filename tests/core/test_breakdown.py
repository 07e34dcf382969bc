"""Where the time and the money went: ``regista show --by``; the groups add up to the run."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from builders import Effects, simple_agent, tool_use
from importers.cc_fixtures import basic_session

from regista.breakdown import BY, breakdown, step_numbers
from regista.cli.main import main
from regista.importers import convert_file
from regista.providers import ScriptedProvider
from regista.tokens import Tokens
from regista.trace.reader import Trace

SAMPLES = Path(__file__).parents[2] / "sample_traces"


class _Priced(ScriptedProvider):
    """A scripted model that is priced as the model it names (an offline model is free)."""

    name = "anthropic"

    async def complete(self, request: Any, **kwargs: Any) -> Any:
        response = await super().complete(request, **kwargs)
        response.model = request.model
        return response


def _random_run(rng: random.Random, folder: Path) -> Path:
    """A run of regista's own loop whose model asks for random tools, with random usage
    (cache reads and writes at both durations) on a priced model."""
    turns = rng.randint(1, 6)

    def model(request: Any) -> dict[str, Any]:
        done = sum(1 for m in request.messages if m["role"] == "assistant")
        usage = {
            "input_tokens": rng.randint(0, 5000),
            "output_tokens": rng.randint(0, 900),
            "cache_read_input_tokens": rng.choice([0, rng.randint(0, 90_000)]),
            "cache_creation": {
                "ephemeral_5m_input_tokens": rng.choice([0, rng.randint(0, 9000)]),
                "ephemeral_1h_input_tokens": rng.choice([0, rng.randint(0, 9000)]),
            },
        }
        if done >= turns:
            return {"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
                    "usage": usage}  # fmt: skip
        calls = [
            tool_use(f"toolu_{done}_{i}", rng.choice(["get_weather", "get_forecast"]), city="Oslo")
            for i in range(rng.randint(1, 3))
        ]
        return {"content": calls, "stop_reason": "tool_use", "usage": usage}

    agent = simple_agent(folder, Effects(), provider=_Priced(model))
    agent.model = rng.choice(["claude-sonnet-4-6", "claude-opus-4-5", "claude-haiku-4-5"])
    return agent.run_sync("Weather?").trace_path


def _totals(trace: Trace) -> tuple[Tokens, float | None]:
    s = trace.summary()
    return s.tokens, s.cost_usd


@pytest.mark.parametrize("by", ["tool", "model", "turn", "subagent"])
def test_the_groups_add_up_to_the_run(by: str, tmp_path: Path) -> None:
    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "1212")) + BY.index(by))
    for i in range(8):
        trace = Trace.load(_random_run(rng, tmp_path / str(i)))
        groups = breakdown(trace.steps(), by)
        tokens, cost = _totals(trace)
        assert sum((g.tokens for g in groups), Tokens()) == tokens
        assert cost is not None and cost > 0
        assert sum(g.cost or 0.0 for g in groups) == pytest.approx(cost, rel=1e-9, abs=1e-12)
        assert sum(g.steps for g in groups) == len(trace.steps())
        ms = [step_numbers(s).ms or 0.0 for s in trace.steps()]
        assert sum(g.ms for g in groups) == pytest.approx(sum(ms))


def test_an_imported_session_by_tool(tmp_path: Path) -> None:
    conv = convert_file(basic_session().write(tmp_path / "s.jsonl"))
    assert conv is not None
    path = tmp_path / "run.jsonl"
    path.write_bytes(conv.main.to_bytes())
    trace = Trace.load(path)
    groups = {g.key: g for g in breakdown(trace.steps(), "tool")}
    # the call that asked for Bash and Read goes to Bash (its first tool)
    assert set(groups) == {"Bash", "Read", "Edit", "(answer)"}
    assert groups["Read"].tokens == Tokens() and groups["Read"].steps == 1
    tokens, cost = _totals(trace)
    assert sum((g.tokens for g in groups.values()), Tokens()) == tokens
    assert sum(g.cost or 0 for g in groups.values()) == pytest.approx(cost)


def test_show_by_prints_the_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    sample = str(SAMPLES / "refund_search_loop.jsonl")
    assert main(["show", sample, "--by", "model"]) == 0
    out = capsys.readouterr().out
    # a tool step takes the 250 ms its result recorded, a scripted answer its 250 ms span
    assert "(tools)" in out and "scripted" in out and "(run)" in out and "50%" in out
    assert main(["show", sample, "--by", "tool", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["by"] == "tool" and data["total"]["steps"] == 20
    assert data["groups"][0]["key"] == "search_orders"
    with pytest.raises(SystemExit) as info:
        main(["show", sample, "--by", "nothing"])
    assert info.value.code == 2


def test_by_subagent_adds_each_subagents_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from importers.cc_fixtures import session_with_subagent

    from regista.importers import write_runs

    conv = convert_file(session_with_subagent(tmp_path / "project"))
    assert conv is not None
    main_run, child = write_runs(conv, tmp_path / "traces")[:2]
    assert main(["show", str(main_run), "--by", "subagent", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    groups = {g["key"]: g for g in data["groups"]}
    assert set(groups) == {"(main)", "subagent search"}
    sub = Trace.load(child)
    sub_tokens = sum((step_numbers(s).tokens for s in sub.steps()), Tokens())
    task_step = Trace.load(main_run).steps()[1]
    assert (
        groups["subagent search"]["tokens"]["total"]
        == (sub_tokens + step_numbers(task_step).tokens).total
    )
    assert groups["subagent search"]["steps"] == 1  # the Task call; its run's steps apart
    # the run's own totals plus the subagent's
    run_tokens, _ = _totals(Trace.load(main_run))
    assert data["total"]["tokens"]["total"] == (run_tokens + sub_tokens).total
