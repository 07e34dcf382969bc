"""Savings: a replay, resume or fork reports what the recorded prefix did not spend again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders import SIMPLE_SCRIPT, by_turn, simple_agent

from regista import ToolResultEdit, fork, replay
from regista.cli.main import main
from regista.loop import FakeClock
from regista.providers import ScriptedProvider
from regista.providers.base import set_meta
from regista.savings import Savings
from regista.trace.events import LlmResponseEvent
from regista.trace.reader import Trace
from regista.types import LlmRequest, LlmResponse, Usage


class PricedModel:
    """The scripted model answering as a priced model, taking 1.5 s of (fake) time a call."""

    name = "priced"

    def __init__(self) -> None:
        self.inner = ScriptedProvider(by_turn(SIMPLE_SCRIPT))
        self.clock: FakeClock | None = None

    async def complete(self, request: LlmRequest, *, on_text: Any = None) -> LlmResponse:
        response = await self.inner.complete(request, on_text=on_text)
        if self.clock is not None:
            self.clock._t += 1.5
        return set_meta(response.model_copy(update={"model": "claude-sonnet-4-6"}), self.name)


def _recorded(tmp_path: Path) -> Path:
    model = PricedModel()
    agent = simple_agent(tmp_path / "orig", provider=model)
    model.clock = agent.clock
    return agent.run_sync("Weather in Paris?").trace_path


async def test_replay_saves_what_the_recording_spent(tmp_path: Path) -> None:
    path = _recorded(tmp_path)
    original = Trace.load(path)
    responses = original.of_type(LlmResponseEvent)
    result = await replay(path, trace_dir=tmp_path / "replays")
    assert result.cost_usd == 0.0
    saved = result.savings
    assert saved is not None
    assert saved.calls == len(responses) == 3
    tokens = sum(Usage.model_validate(r.response["usage"]).total_tokens for r in responses)
    assert saved.tokens == tokens
    assert saved.cost_usd is not None
    assert abs(saved.cost_usd - (original.end.cost_usd or 0)) < 1e-9
    assert saved.cost_usd > 0
    assert saved.model_ms == sum(r.duration_ms for r in responses) >= 4500
    # the same figures are in the replay's session.end
    end = Trace.load(result.trace_path).end
    assert end is not None and end.replay is not None
    assert Savings.from_dict(end.replay["saved"]) == saved


async def test_fork_saves_only_the_recorded_prefix(tmp_path: Path) -> None:
    path = _recorded(tmp_path)
    agent = simple_agent(tmp_path / "x", provider=PricedModel())
    result = await fork(
        path,
        1,
        ToolResultEdit("Raining in Paris."),
        live_after=1,
        agent=agent,
        trace_dir=tmp_path / "forks",
    )
    assert result.savings is not None
    assert result.savings.calls == 1  # step 0 from the recording; the rest went live
    assert result.live_steps > 0


async def test_scripted_recordings_save_tokens_but_no_dollars(tmp_path: Path) -> None:
    path = simple_agent(tmp_path / "orig").run_sync("Weather?").trace_path
    result = await replay(path, trace_dir=tmp_path / "replays")
    assert result.savings is not None
    assert result.savings.tokens > 0 and result.savings.cost_usd == 0.0


def test_cli_replay_and_show_report_savings(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = _recorded(tmp_path)
    assert main(["replay", str(path), "--trace-dir", str(tmp_path / "r")]) == 0
    printed = capsys.readouterr().out
    assert "saved " in printed and "3 calls from the recording" in printed
    replayed = next((tmp_path / "r").glob("*.jsonl"))
    assert main(["show", str(replayed)]) == 0
    assert "Savings" in capsys.readouterr().out


def test_savings_from_dict_tolerates_garbage() -> None:
    assert Savings.from_dict(None) is None
    assert Savings.from_dict("x") is None
    s = Savings.from_dict({"calls": "3", "tokens": True, "cost_usd": "1", "model_ms": None})
    assert s == Savings(calls=0, tokens=0, cost_usd=None, model_ms=0.0)
    assert "cost unknown" in s.describe()
