"""Masks learned from two recordings of an SDK agent whose tool answers a fresh id and time:
its strict replay goes from diverged to masked, and a changed prompt still diverges."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_server import FakeAnthropicServer

from regista.cli.main import main

HERE = Path(__file__).parent
AGENT = [sys.executable, str(HERE / "agent_main.py"), "anthropic-fresh"]


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    last = body["messages"][-1]
    if isinstance(last["content"], str):
        return {"content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                             "input": {"city": "Paris"}}]}  # fmt: skip
    return {"content": [{"type": "text", "text": "Booked."}]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    with FakeAnthropicServer() as fake, pytest.MonkeyPatch.context() as mp:
        fake.answer_with(_answer)
        mp.setenv("PYTHONPATH", str(HERE))
        mp.setenv("ANTHROPIC_API_KEY", "sk-ant-masks-secret")
        mp.setenv("ANTHROPIC_BASE_URL", fake.url)
        made = []
        for name in ("a", "b"):
            folder = tmp_path_factory.mktemp(name)
            assert main(["record", "--trace-dir", str(folder), "--", *AGENT]) == 0
            (path,) = folder.glob("*.jsonl")
            made.append(path)
        yield made[0], made[1]


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(HERE))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-masks-secret")
    monkeypatch.delenv("AGENT_SYSTEM", raising=False)


def test_learned_masks_turn_a_strict_replay_from_diverged_into_masked(
    runs: tuple[Path, Path], env: None, tmp_path: Path, capfd: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    a, b = runs
    assert main(["replay", str(a), "--no-masks", "--", *AGENT]) == 3
    out = capfd.readouterr().out
    assert "steps: 1 exact, 1 diverged" in out, out

    masks = tmp_path / "masks.toml"
    assert main(["masks", "learn", str(a), str(b), "-o", str(masks)]) == 0
    learned = capfd.readouterr().out
    assert "learned 2 masks" in learned and "uuid" in learned and "timestamp" in learned

    assert main(["replay", str(a), "--masks", str(masks), "--", *AGENT]) == 0
    out = capfd.readouterr().out
    assert "steps: 1 exact, 1 masked" in out, out

    # a real change of prompt is still a divergence
    monkeypatch.setenv("AGENT_SYSTEM", "You are a poet.")
    assert main(["replay", str(a), "--masks", str(masks), "--", *AGENT]) == 3
    out = capfd.readouterr().out
    assert "steps: 1 diverged" in out and "first divergence at step 0" in out, out
