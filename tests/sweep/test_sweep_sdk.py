"""``regista sweep … -- CMD``: the same sweep for a plain SDK program.

The program is the sample refund agent written with the Anthropic SDK; its model is the
sample's demo model behind a fake Anthropic API on 127.0.0.1. Its search-loop recording is
swept at its first search with the three results: each fork's program runs for real, its
model sees the edited result, and it carries on live against the fake.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_server import FakeAnthropicServer
from sweeps import RESULTS

from regista.cli.main import main
from regista.samples.demo_model import refund_model
from regista.sweep import load_sweep
from regista.trace.reader import Trace
from regista.types import LlmRequest

HERE = Path(__file__).parent
AGENT = [sys.executable, str(HERE / "sdk_refund_agent.py")]


def _demo(body: dict[str, Any]) -> dict[str, Any]:
    request = LlmRequest(
        model=body["model"],
        system=body.get("system"),
        messages=body["messages"],
        tools=body.get("tools", []),
        max_tokens=body["max_tokens"],
    )
    return refund_model(request)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        server.answer_with(_demo)
        yield server


def _env(mp: pytest.MonkeyPatch, fake: FakeAnthropicServer) -> None:
    mp.setenv("ANTHROPIC_BASE_URL", fake.url)  # the upstream of the live calls
    mp.setenv("ANTHROPIC_API_KEY", "sk-ant-sweep-secret")
    mp.delenv("REGISTA_SAMPLE_DB", raising=False)


@pytest.fixture(scope="module")
def recorded(fake: FakeAnthropicServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The program's search loop, recorded: model, search, model, search, …"""
    folder = tmp_path_factory.mktemp("recorded")
    with pytest.MonkeyPatch.context() as mp:
        _env(mp, fake)
        assert main(["record", "--trace-dir", str(folder), "--", *AGENT]) == 0
    (path,) = folder.glob("*.jsonl")
    steps = Trace.load(path).steps()
    assert [s.kind for s in steps[:4]] == ["model", "tool", "model", "tool"]
    assert steps[1].tool_call is not None and steps[1].tool_call.name == "search_orders"
    return path


def test_the_sweep_of_a_program_at_its_first_search(
    recorded: Path,
    fake: FakeAnthropicServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:
    _env(monkeypatch, fake)
    monkeypatch.chdir(tmp_path)
    argv = ["sweep", str(recorded), "--at", "1", "--out", "sw", "-j", "2", "--json"]
    for result in RESULTS:
        argv += ["--tool-result", result]
    code = main([*argv, "--", *AGENT])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert code == 0, rows
    sweep = load_sweep(tmp_path / "sw")
    assert sweep.command == AGENT
    assert [f.status for f in sweep.forks] == ["done"] * 3
    parent = Trace.load(recorded)
    for fork, result in zip(sweep.forks, RESULTS, strict=True):
        trace = Trace.load(sweep.fork_trace(fork))
        assert trace.start.forked_from["session_id"] == parent.session_id
        steps = trace.steps()
        assert steps[1].source == "edit" and steps[1].result.content == result
        assert "sk-ant-sweep-secret" not in sweep.fork_trace(fork).read_text()
    # the found order ends the task; nothing found or an outage loops as the parent did
    assert rows[1]["stop_reason"] == "end_turn"
    assert rows[1]["first_divergence"] == "step 2: changed · decision"
    assert [r["first_divergence"] for r in rows[2:]] == ["none", "none"]
    assert [r["steps"] for r in rows[2:]] == [rows[0]["steps"]] * 2


OTHER = "claude-opus-4-1"


def test_a_rewind_of_a_program_carries_on_with_another_model(
    recorded: Path,
    fake: FakeAnthropicServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:
    """``rewind --at 2 --model NAME -- CMD``: the program asks for its own model; the
    recorded prefix is served as it was, and every call from step 2 on reaches the
    provider asking for NAME, and is written so."""
    _env(monkeypatch, fake)
    before = len(fake.requests)
    argv = ["rewind", str(recorded), "--at", "2", "--model", OTHER, "--trace-dir", "out"]
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "--", *AGENT]) == 0
    assert f"rewind to step 2 with {OTHER}" in capsys.readouterr().out
    sent = fake.bodies[before:]
    assert sent and {b["model"] for b in sent} == {OTHER}
    (path,) = (tmp_path / "out").glob("*.jsonl")
    fork = Trace.load(path)
    assert fork.start.forked_from["model"] == OTHER
    assert fork.start.forked_from["at_step"] == 2
    models = [(s.index, s.source, s.request_event.model) for s in fork.steps() if s.kind == "model"]
    parent = Trace.load(recorded)
    assert models[0] == (0, "recorded", parent.steps()[0].request_event.model)
    assert models[0][2] == "claude-sonnet-4-6"
    assert [m[1:] for m in models[1:]] == [("live", OTHER)] * (len(models) - 1)
    assert len(models) - 1 == len(sent)
    # the recorded step 0 is the parent's, byte for byte as the model saw it
    assert fork.steps()[0].response_event.response == parent.steps()[0].response_event.response
    # diff shows the model the live half asked for
    capsys.readouterr()
    main(["diff", str(recorded), str(path)])
    assert OTHER in capsys.readouterr().out


def test_a_sweep_of_a_program_with_two_models(
    recorded: Path,
    fake: FakeAnthropicServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
) -> None:
    _env(monkeypatch, fake)
    monkeypatch.chdir(tmp_path)
    models = ["claude-haiku-4-5", OTHER]
    argv = ["sweep", str(recorded), "--at", "2", "--out", "sw", "-j", "2", "--json"]
    for model in models:
        argv += ["--model", model]
    code = main([*argv, "--", *AGENT])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert code == 0, rows
    sweep = load_sweep(tmp_path / "sw")
    assert [f.status for f in sweep.forks] == ["done", "done"]
    for fork, model in zip(sweep.forks, models, strict=True):
        trace = Trace.load(sweep.fork_trace(fork))
        assert trace.start.forked_from["model"] == model
        asked = [(s.source, s.request_event.model) for s in trace.steps() if s.kind == "model"]
        assert asked[0] == ("recorded", "claude-sonnet-4-6")
        assert set(asked[1:]) == {("live", model)}
