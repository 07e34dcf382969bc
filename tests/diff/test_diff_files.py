"""A diff of two files (read once, per-step digests) equals the diff of the two loaded traces."""

from __future__ import annotations

import asyncio
import itertools
import random
import warnings
from pathlib import Path
from typing import Any

import orjson
import pytest
from files import SAMPLES, V1_TRACES, found
from hypothesis import given, settings
from hypothesis import strategies as st

from regista import Agent, ContextConfig, tool
from regista.diff import diff_runs
from regista.diff.runfile import RunFile, _digest, _keyed
from regista.diff.runs import RunDiff, diff_files
from regista.diff.steps import _ordinals
from regista.errors import TraceError, TraceFormatError
from regista.providers import ScriptedProvider
from regista.trace.canonical import canonical_json
from regista.trace.reader import Trace
from regista.types import LlmRequest

SAMPLE_PATHS = found(SAMPLES)
V1 = found(V1_TRACES)


def rows(d: RunDiff) -> list[tuple[int | None, int | None, str]]:
    return [(p.a_step, p.b_step, p.kind) for p in d.pairs]


def assert_same_diff(a: Path, b: Path) -> None:
    """The file diff and the loaded diff agree on every pair, and on what a person reads."""
    files = diff_runs(a, b)
    assert isinstance(files.a, RunFile)
    loaded = diff_runs(Trace.load(a), Trace.load(b))
    assert rows(files) == rows(loaded)
    first, expected = files.first_divergence, loaded.first_divergence
    assert (first and first.to_dict()) == (expected and expected.to_dict())
    assert files.to_dict() == loaded.to_dict()


@pytest.mark.parametrize(("a", "b"), list(itertools.product(SAMPLE_PATHS + V1, repeat=2)))
def test_sample_traces_diff_from_their_files_as_when_loaded(a: Path, b: Path) -> None:
    assert_same_diff(a, b)


# -- generated runs -------------------------------------------------------------------------


def _tools(rng: random.Random) -> list[Any]:
    @tool
    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: The key.
        """
        if key == "boom":
            raise RuntimeError("lookup failed")
        return rng.choice(["alpha", "beta", "alpha beta " * 40])

    @tool
    def note(text: str) -> str:
        """Write a note.

        Args:
            text: The note.
        """
        return "noted"

    return [lookup, note]


def run(folder: Path, seed: int, changes: dict[int, str], **kwargs: Any) -> Path:
    """A scripted run whose choices come from ``seed``; ``changes`` makes answer ``n``
    different (``text``, ``call`` for another call, ``extra`` for one more call)."""
    turn = 0

    def model(request: LlmRequest) -> dict[str, Any]:
        nonlocal turn
        turn += 1
        if request.system and request.system.startswith("You summarise"):
            return {"content": [{"type": "text", "text": "Summary."}], "stop_reason": "end_turn"}
        rng = random.Random(seed * 1000 + turn)
        if turn > 9:
            return {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}
        change = changes.get(turn)
        calls = []
        for i in range(rng.choice([1, 1, 2]) + (change == "extra")):
            name = rng.choice(["lookup", "lookup", "note"])
            key = rng.choice(["a", "b", "c", "boom", "secret"])
            if change == "call" and i == 0:
                key = "changed"
            args = {"key": key} if name == "lookup" else {"text": key}
            calls.append(
                {"type": "tool_use", "id": f"t{seed}_{turn}_{i}", "name": name, "input": args}
            )
        text = "Other words." if change == "text" else rng.choice(["Looking.", "Next."])
        return {"content": [{"type": "text", "text": text}, *calls], "stop_reason": "tool_use"}

    def policy(call: Any) -> bool:
        return call.input.get("key") != "secret"

    agent = Agent(
        model="claude-sonnet-4-6",
        instructions=kwargs.pop("instructions", "Look things up."),
        tools=_tools(random.Random(seed)),
        provider=ScriptedProvider(model),
        policy=policy,
        trace_dir=folder,
        **kwargs,
    )
    return asyncio.run(agent.run("Look up the keys.")).trace_path


_CHANGES = ["text", "call", "extra"]


@pytest.mark.parametrize("seed", range(8))
def test_generated_runs_diff_from_their_files_as_when_loaded(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    compact = ContextConfig(max_tokens=rng.choice([300, 100_000]), keep_last=2)
    a = run(tmp_path / "a", seed, {}, context=compact)
    changes = {rng.randrange(1, 10): rng.choice(_CHANGES) for _ in range(rng.randrange(3))}
    other = {"max_tokens": 999} if seed % 4 == 3 else {}
    b = run(tmp_path / "b", seed + (seed % 3 == 2), changes, context=compact, **other)
    assert_same_diff(a, b)
    assert_same_diff(b, a)
    assert_same_diff(a, a)


def _write(trace: Trace, path: Path) -> Path:
    """``trace`` written back whole (every request with its system, tools and results)."""
    path.write_bytes(b"".join(orjson.dumps(ev.model_dump()) + b"\n" for ev in trace.events))
    return path


def test_whole_requests_and_older_schemas_diff_as_when_loaded(tmp_path: Path) -> None:
    a = run(tmp_path / "a", 5, {}, context=ContextConfig(max_tokens=300, keep_last=2))
    whole = _write(Trace.load(a), tmp_path / "whole.jsonl")
    assert_same_diff(a, whole)
    for old in V1:
        assert_same_diff(old, whole)


def test_an_unfinished_run_and_a_half_written_line(tmp_path: Path) -> None:
    a = run(tmp_path / "a", 1, {})
    lines = a.read_bytes().split(b"\n")[:-1]
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"\n".join(lines[:-4]) + b"\n" + lines[-4][:30])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_diff(a, cut)
        assert_same_diff(cut, a)


def test_settled_leaves_out_the_steps_in_progress(tmp_path: Path) -> None:
    a = run(tmp_path / "a", 2, {})
    lines = a.read_bytes().split(b"\n")[:-1]
    # Up to a tool call whose result is not written yet.
    upto = max(i for i, line in enumerate(lines) if b'"type":"tool.call"' in line)
    growing = tmp_path / "growing.jsonl"
    growing.write_bytes(b"\n".join(lines[: upto + 1]) + b"\n")
    ra, rb = RunFile(a), RunFile(growing)
    ra.read(final=True)
    rb.read()
    settled = diff_files(ra, rb, settled=True)
    assert all(p.b is None or p.b.complete for p in settled.pairs)
    assert rows(settled)[: len(rb.steps(settled=True))] == [
        (n, n, "same") for n in range(len(rb.steps(settled=True)))
    ]
    # It grows: the same reader takes the rest and the diff becomes the loaded one's.
    growing.write_bytes(a.read_bytes())
    rb.read(final=True)
    assert rows(diff_files(ra, rb)) == rows(diff_runs(Trace.load(a), Trace.load(a)))


def test_a_missing_or_empty_file_is_a_trace_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    for bad in (empty, tmp_path / "missing.jsonl", tmp_path):
        with pytest.raises(TraceError):
            diff_runs(bad, SAMPLE_PATHS[0])


_ids = st.sampled_from(["toolu_a", "toolu_b", "x", 7])
_content = st.one_of(st.sampled_from(["r1", "r2", ""]), st.just([{"type": "text", "text": "r1"}]))
_block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.sampled_from(["hi", "yo"])}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": _ids, "name": st.just("f")}),
    st.fixed_dictionaries(
        {"type": st.just("tool_result"), "tool_use_id": _ids},
        optional={"content": _content, "is_error": st.booleans()},
    ),
)
_messages = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant"]),
            "content": st.one_of(st.just("plain"), st.lists(_block, max_size=3)),
        }
    ),
    max_size=3,
)


@settings(max_examples=400, deadline=None)
@given(_messages, _messages)
def test_keyed_messages_agree_exactly_when_their_ordinals_do(a: list[Any], b: list[Any]) -> None:
    """A signature over digests of tool outputs tells two message lists apart exactly when
    the signature over the outputs themselves does."""
    same = canonical_json(_ordinals(a)) == canonical_json(_ordinals(b))
    assert (_keyed(a, {}) == _keyed(b, {})) == same


@settings(max_examples=200, deadline=None)
@given(_messages, _content)
def test_a_referred_result_keys_as_the_result_written_out(
    messages: list[Any], content: Any
) -> None:
    """A compact request's block that refers to a tool result keys as the block with it."""
    written = [
        {
            **m,
            "content": [
                {**b, "content": content}
                if isinstance(b, dict)
                and b.get("type") == "tool_result"
                and "content" not in b
                and isinstance(b.get("tool_use_id"), str)
                else b
                for b in m["content"]
            ]
            if isinstance(m["content"], list)
            else m["content"],
        }
        for m in messages
    ]
    refs = {uid: _digest(content) for uid in ("toolu_a", "toolu_b", "x")}
    assert _keyed(messages, refs) == _keyed(written, {})


def test_steps_decode_while_another_thread_reads_on(tmp_path: Path) -> None:
    """A viewer decodes steps in its own thread while a worker reads what is appended."""
    import threading

    source = run(tmp_path / "a", 4, {}, context=ContextConfig(max_tokens=300, keep_last=2))
    lines = source.read_bytes().split(b"\n")[:-1]
    growing = tmp_path / "growing.jsonl"
    growing.write_bytes(lines[0] + b"\n")
    reader = RunFile(growing)
    reader.read()
    done = threading.Event()
    errors: list[BaseException] = []

    def write_and_read() -> None:
        try:
            with open(growing, "ab") as f:
                for line in lines[1:]:
                    f.write(line + b"\n")
                    f.flush()
                    reader.read()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            done.set()

    worker = threading.Thread(target=write_and_read)
    worker.start()
    while not done.is_set():
        for facts in list(reader.steps()):
            reader.step(facts)
    worker.join()
    assert not errors
    reader.read(final=True)
    loaded = Trace.load(source).step_groups()
    decoded = [reader.step(f) for f in reader.steps()]
    assert [s.events for s in decoded] == [s.events for s in loaded]


@pytest.mark.parametrize("etype", ["llm.request", "tool.call", "tool.result"])
@pytest.mark.parametrize("step", [None, "drop"])
def test_an_event_without_its_step_is_refused_as_when_loaded(
    tmp_path: Path, etype: str, step: str | None
) -> None:
    """Only an error may have no step number; the reader took any other such line for an
    event of no step (and its step lost it) where ``Trace.load`` refuses it."""
    lines = SAMPLE_PATHS[0].read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(lines) if f'"type":"{etype}"'.encode() in line)
    event = orjson.loads(lines[at])
    if step is None:
        event["step"] = None
    else:
        del event["step"]
    lines[at] = orjson.dumps(event)
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(TraceFormatError) as loaded:
        Trace.load(path)
    run = RunFile(path)
    try:
        with pytest.raises(TraceFormatError) as read:
            run.read(final=True)
    finally:
        run.close()
    assert str(read.value) == str(loaded.value)
