"""`regista fork|rewind TRACE … -- CMD` with a plain SDK agent: one fork, one trace.

Every case, for both providers, streaming and not: exactly one fork trace, its steps
numbered on from the recorded prefix, the edit written as an edit (as the harness's fork
writes it), ``regista verify`` passes, and the upstream got the edit.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_server import FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer

from regista.cli.main import main
from regista.trace.reader import Trace

HERE = Path(__file__).parent
AGENT = [sys.executable, str(HERE / "agent_main.py")]
CLIENTS = ["anthropic", "anthropic-stream", "openai", "openai-stream"]
CITIES = ["Paris", "Oslo"]
#: Each provider once, one of them streaming (the first case runs on all four).
SOME = pytest.mark.parametrize("recorded", ["anthropic-stream", "openai"], indirect=True)


def _anthropic_answer(body: dict[str, Any]) -> dict[str, Any]:
    """Asks for the weather of two cities, one at a time; then says what the tool said."""
    results = [
        b
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    if len(results) < len(CITIES):
        n = len(results)
        use = {"type": "tool_use", "id": f"toolu_{n}", "name": "get_weather",
               "input": {"city": CITIES[n]}}  # fmt: skip
        return {"content": [use]}
    said = " / ".join(str(r["content"]) for r in results)
    return {"content": [{"type": "text", "text": f"Said: {said}"}]}


def _openai_answer(body: dict[str, Any]) -> dict[str, Any]:
    results = [m for m in body["messages"] if m["role"] == "tool"]
    if len(results) < len(CITIES):
        n = len(results)
        args = json.dumps({"city": CITIES[n]})
        return {"tool_calls": [{"id": f"call_{n}", "name": "get_weather", "arguments": args}]}
    return {"content": "Said: " + " / ".join(str(r["content"]) for r in results)}


@pytest.fixture(scope="module")
def fakes() -> Iterator[dict[str, Any]]:
    with FakeAnthropicServer() as a, FakeOpenAIServer() as o:
        a.answer_with(_anthropic_answer)
        o.answer_with(_openai_answer)
        yield {"anthropic": a, "openai": o}


def _env(mp: pytest.MonkeyPatch, fakes: dict[str, Any]) -> None:
    mp.setenv("PYTHONPATH", str(HERE))
    mp.setenv("ANTHROPIC_API_KEY", "sk-ant-fork-secret")
    mp.setenv("OPENAI_API_KEY", "sk-openai-fork-secret")
    mp.setenv("ANTHROPIC_BASE_URL", fakes["anthropic"].url)  # the upstream of live calls
    mp.setenv("OPENAI_BASE_URL", fakes["openai"].url)


@pytest.fixture(scope="module", params=CLIENTS)
def recorded(
    request: pytest.FixtureRequest, fakes: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    """One recording per client: model, tool, model, tool, model."""
    client: str = request.param
    folder = tmp_path_factory.mktemp(client)
    with pytest.MonkeyPatch.context() as mp:
        _env(mp, fakes)
        assert main(["record", "--trace-dir", str(folder), "--", *AGENT, client]) == 0
    (path,) = folder.glob("*.jsonl")
    assert [s.kind for s in Trace.load(path).steps()] == ["model", "tool"] * 2 + ["model"]
    return client, path


def _fork(
    argv: list[str],
    recorded: tuple[str, Path],
    fakes: dict[str, Any],
    tmp_path: Path,
    capfd: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Trace, str, list[dict[str, Any]]]:
    """Run ``regista ARGV…`` on the recording; the one fork, what was printed, and the
    bodies the upstream received."""
    client, path = recorded
    fake = fakes[client.split("-")[0]]
    _env(monkeypatch, fakes)
    before = len(fake.requests)
    capfd.readouterr()
    forks = tmp_path / "forks"
    code = main([argv[0], str(path), *argv[1:], "--trace-dir", str(forks), "--", *AGENT, client])
    out = capfd.readouterr().out
    assert code == 0, out
    traces = list(forks.glob("*.jsonl"))
    assert len(traces) == 1, out  # one fork, never two
    fork = Trace.load(traces[0])
    steps = fork.steps()
    assert [s.index for s in steps] == list(range(len(steps)))  # numbered on, no restart
    assert [s.kind for s in steps] == ["model", "tool"] * 2 + ["model"]
    assert fork.start.forked_from is not None
    assert fork.start.forked_from["session_id"] == Trace.load(path).session_id
    text = traces[0].read_text()
    assert "sk-ant-fork-secret" not in text and "sk-openai-fork-secret" not in text
    assert main(["verify", str(traces[0])]) == 0
    # the summary names the one fork, once
    printed = capfd.readouterr().out + out
    assert printed.count("trace: ") == 1 and f"trace: {traces[0]}" in printed
    assert f"compare: regista-tui {path} {traces[0]}" in printed
    return fork, out, [r.body for r in fake.requests[before:]]


def _sources(fork: Trace) -> list[str]:
    return [s.source for s in fork.steps()]


def _text(content: Any) -> Any:
    """A tool result as text (OpenAI's are text blocks once normalised)."""
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content)
    return content


def _results(fork: Trace) -> list[Any]:
    return [_text(s.result.content) for s in fork.steps() if s.result is not None]


def _tool_results_sent(body: dict[str, Any]) -> list[Any]:
    """The tool results in a request body, in order (either provider)."""
    found = []
    for m in body["messages"]:
        if m["role"] == "tool":
            found.append(m["content"])
        elif isinstance(m.get("content"), list):
            found += [b["content"] for b in m["content"] if b.get("type") == "tool_result"]
    return found


def test_an_edited_tool_result_with_a_later_live_point_is_one_fork(
    recorded: tuple[str, Path], fakes: dict[str, Any], tmp_path: Path, capfd: Any,
    monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    """The recorded prefix, the edit, the recording played loosely up to the live point,
    then live: one trace of five steps, its step 1 the edit."""
    argv = ["fork", "--at", "1", "--tool-result", "rainy", "--live-after", "2"]
    fork, out, sent = _fork(argv, recorded, fakes, tmp_path, capfd, monkeypatch)
    assert "Said: rainy / sunny in Oslo" in out
    assert _sources(fork) == ["recorded", "edit", "recorded", "live", "live"]
    assert _results(fork) == ["rainy", "sunny in Oslo"]
    (body,) = sent  # only the last call went live, and it carried the edit
    assert _tool_results_sent(body) == ["rainy", "sunny in Oslo"]
    forked_from = fork.start.forked_from
    assert forked_from is not None
    assert forked_from["at_step"] == 1 and forked_from["live_after"] == 2
    assert forked_from["edit"] == {"kind": "tool_result", "content": "rainy", "is_error": False}
    assert fork.end is not None and fork.end.replay is not None
    assert fork.end.replay["edit"] == 1
    assert "fork at step 1: end_turn after 5 steps (1 recorded, 1 edited, " in out
    assert "1 played loosely from the recording, 2 live)" in out
    assert "parent " in out


@SOME
def test_an_edited_tool_result_goes_live_right_after_it(
    recorded: tuple[str, Path], fakes: dict[str, Any], tmp_path: Path, capfd: Any,
    monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    argv = ["fork", "--at", "1", "--tool-result", "rainy", "--error"]
    fork, _, sent = _fork(argv, recorded, fakes, tmp_path, capfd, monkeypatch)
    assert _sources(fork) == ["recorded", "edit", "live", "live", "live"]
    assert len(sent) == 2 and all(_tool_results_sent(b)[0] == "rainy" for b in sent)
    edited = fork.steps()[1].result
    assert edited is not None and _text(edited.content) == "rainy" and edited.is_error


@SOME
def test_an_edited_answer_is_one_fork(
    recorded: tuple[str, Path], fakes: dict[str, Any], tmp_path: Path, capfd: Any,
    monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    """Step 2 asks for Rome instead of Oslo; the live call after it carries that answer."""
    answer = '[{"type": "tool_use", "name": "get_weather", "input": {"city": "Rome"}}]'
    argv = ["fork", "--at", "2", "--answer", answer]
    fork, out, sent = _fork(argv, recorded, fakes, tmp_path, capfd, monkeypatch)
    assert "Said: sunny in Paris / sunny in Rome" in out
    assert _sources(fork) == ["recorded", "recorded", "edit", "live", "live"]
    edited = fork.steps()[2].response
    assert edited is not None and edited.tool_uses[0]["input"] == {"city": "Rome"}
    (body,) = sent
    assert "Rome" in json.dumps(body["messages"])
    assert fork.start.forked_from is not None
    assert fork.start.forked_from["edit"]["kind"] == "model_answer"


@SOME
def test_several_edits_are_one_fork(
    recorded: tuple[str, Path], fakes: dict[str, Any], tmp_path: Path, capfd: Any,
    monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    argv = ["fork", "--at", "1", "--tool-result", "rainy", "--at", "3", "--tool-result", "snowy"]
    fork, out, sent = _fork(argv, recorded, fakes, tmp_path, capfd, monkeypatch)
    assert "Said: rainy / snowy" in out
    assert _sources(fork) == ["recorded", "edit", "recorded", "edit", "live"]
    (body,) = sent
    assert _tool_results_sent(body) == ["rainy", "snowy"]
    forked_from = fork.start.forked_from
    assert forked_from is not None and forked_from["at_step"] == 1
    assert [e["at_step"] for e in forked_from["edits"]] == [1, 3]
    assert "fork at steps 1, 3: end_turn after 5 steps" in out


@SOME
def test_a_rewind_is_one_trace_live_from_its_step(
    recorded: tuple[str, Path], fakes: dict[str, Any], tmp_path: Path, capfd: Any,
    monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    fork, out, sent = _fork(["rewind", "--at", "2"], recorded, fakes, tmp_path, capfd, monkeypatch)
    assert "Said: sunny in Paris / sunny in Oslo" in out
    assert _sources(fork) == ["recorded", "recorded", "live", "live", "live"]
    assert len(sent) == 2
    assert fork.start.forked_from is not None
    assert fork.start.forked_from["at_step"] == 2 and fork.start.forked_from["edit"] is None
    assert "rewind to step 2: end_turn after 5 steps" in out


@pytest.mark.parametrize("recorded", CLIENTS, indirect=True)
def test_a_rewind_with_another_model_sends_it_from_its_step(
    recorded: tuple[str, Path], fakes: dict[str, Any], tmp_path: Path, capfd: Any,
    monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    """``rewind --at 2 --model NAME -- CMD``: the program names its own model; the prefix
    is served as recorded, and each call from step 2 reaches the provider asking for NAME
    (Anthropic Messages and OpenAI chat completions, streamed or not), written so."""
    argv = ["rewind", "--at", "2", "--model", "other-model-1"]
    fork, out, sent = _fork(argv, recorded, fakes, tmp_path, capfd, monkeypatch)
    assert "rewind to step 2 with other-model-1: end_turn after 5 steps" in out
    assert _sources(fork) == ["recorded", "recorded", "live", "live", "live"]
    assert [b["model"] for b in sent] == ["other-model-1"] * 2
    parent = Trace.load(recorded[1])
    asked = [s.request_event.model for s in fork.steps() if s.kind == "model"]  # type: ignore[union-attr]
    recorded_model = parent.steps()[0].request_event.model  # type: ignore[union-attr]
    assert asked == [recorded_model, "other-model-1", "other-model-1"]
    assert recorded_model != "other-model-1"
    assert fork.start.forked_from is not None
    assert fork.start.forked_from["model"] == "other-model-1"
