"""A transcript followed as it grows (:func:`regista.importers.memory.follow`): appended
line by line it ends as the same run as converted whole, and any bytes appended give steps
or one clear error."""

from __future__ import annotations

import random
import warnings
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import orjson
import pytest

import regista.importers.memory as memory
from regista.errors import RegistaError
from regista.importers import convert
from regista.importers._builder import events_bytes
from regista.importers.memory import InMemoryRuns, follow
from regista.subagents import subagent_link
from regista.trace.index import TraceIndex

from .cc_fixtures import CCSession, basic_session, text, tool_use
from .codex_fixtures import basic_rollout, rollout_name
from .fuzzing import CASES, mutate, rng_for


@pytest.fixture(autouse=True)
def fresh_store(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(memory, "RUNS", InMemoryRuns())
    yield


def _seed(fmt: str) -> bytes:
    if fmt == "codex":
        return basic_rollout().data()
    s = basic_session()
    s.prompt("and the docs?")
    s.answer(tool_use("toolu_D", "Read", file_path="README.md"), stop_reason="tool_use")
    s.tool_result("toolu_D", [text("# shop")])
    s.answer(text("The docs are fine."), stop_reason="end_turn")
    return s.data()


def _name(fmt: str) -> str:
    return rollout_name("019b64e5-7a2c-7d31-9f0e-5c8a1b2d3e4f") if fmt == "codex" else "s.jsonl"


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_appended_line_by_line_it_ends_as_the_whole_conversion(fmt: str, tmp_path: Path) -> None:
    data = _seed(fmt)
    lines = data.splitlines(keepends=True)
    path = tmp_path / _name(fmt)
    path.write_bytes(b"".join(lines[:3]))
    index = follow(path, path.read_bytes(), fmt)
    assert index is not None and index.follows
    index.scan()
    seen = len(index)
    for line in lines[3:]:
        with open(path, "ab") as f:
            f.write(line)
        index.scan()
        assert len(index) >= seen  # a step once shown stays
        seen = len(index)
    assert index.end is None  # the session goes on
    whole = convert(fmt, path, data).main.events
    expected = events_bytes(whole[:-1]).splitlines()  # all but its session.end
    got = [index.raw_line(n) for n in range(len(index.offsets))]
    assert got[1:] == expected[1:]  # the same events, byte for byte (the start is the first's)
    index.close()


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_fuzzed_growth_gives_steps_or_one_clear_error(fmt: str, tmp_path: Path) -> None:
    rng = rng_for(f"followed-{fmt}")
    seed = _seed(fmt)
    path = tmp_path / _name(fmt)
    for case in range(CASES // 5):
        data = mutate(rng, seed)
        cuts = sorted(rng.sample(range(1, max(2, len(data))), k=min(4, max(1, len(data) - 1))))
        pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        path.write_bytes(pieces[0])
        index = None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                index = follow(path, pieces[0], fmt)
                if index is None:
                    continue
                index.scan()
                for piece in pieces[1:]:
                    with open(path, "ab") as f:
                        f.write(piece)
                    index.scan()
                for n in range(len(index)):
                    index.step(n)
        except RegistaError:
            continue
        except Exception as exc:  # pragma: no cover - the failure report
            raise AssertionError(f"case {case}: {type(exc).__name__}: {exc}") from exc
        finally:
            if index is not None:
                index.close()


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
def test_a_growing_transcript_converts_only_what_was_appended(fmt: str, tmp_path: Path) -> None:
    """Grown in pieces cut anywhere (in the middle of a line too), the transcript's run
    ends as the whole file's; each growth reads the lines it completed, and no others."""
    if fmt == "codex":
        from .test_codex_bounded import _realistic
    else:
        from .test_cc_bounded import _realistic

    data = _realistic(3)
    rng = rng_for(f"followed-appended-{fmt}" if fmt == "codex" else "followed-appended")
    cuts = sorted(rng.sample(range(1, len(data)), 12))
    path = tmp_path / _name(fmt)
    path.write_bytes(data[: cuts[0]])
    index = follow(path, path.read_bytes(), fmt)
    assert index is not None
    index.scan()
    job = index.streaming.job
    assert job.parsed == data[: cuts[0]].count(b"\n")
    for a, b in zip(cuts, [*cuts[1:], len(data)], strict=True):
        parsed = job.parsed
        with open(path, "ab") as f:
            f.write(data[a:b])
        index.scan()
        assert job.parsed - parsed == data[:b].count(b"\n") - data[:a].count(b"\n")
    whole = convert(fmt, path, data).main.events
    expected = events_bytes(whole[:-1]).splitlines()  # all but its session.end
    got = [index.raw_line(n) for n in range(len(index.offsets))]
    assert len(got) == len(expected) and got[1:] == expected[1:]
    index.close()


# -- subagents that start while the session is followed ------------------------------------

#: (file, line) writes in the order a CLI makes them: a subagent's transcript is complete
#: before its call's result is written.
Writes = list[tuple[str, bytes]]


def _dump(line: dict[str, object]) -> bytes:
    return orjson.dumps(line) + b"\n"


def _subagent(agent: str, prompt: str, n: int, start: datetime) -> CCSession:
    c = CCSession(agent_id=agent, sidechain=True, model="claude-haiku-4-5-20251001", start=start)
    c.prompt(prompt)
    for k in range(n):
        c.answer(tool_use(f"toolu_{agent}{k}", "Grep", pattern=f"p{k}"), stop_reason="tool_use")
        c.tool_result(f"toolu_{agent}{k}", f"hit {k}")
    c.answer(text(f"{agent} found it."), stop_reason="end_turn")
    return c


def _live_session(rng: random.Random) -> tuple[CCSession, Writes]:
    """A session that starts three subagents (one, then two at once, one of them named by
    its ``.meta.json``) and compacts its context between them, written line by line in an
    order the CLI could write them, the subagents' lines interleaved with each other and
    with the session's progress lines."""
    s = CCSession()
    writes: Writes = []
    name = f"{s.session_id}.jsonl"
    sub = f"{s.session_id}/subagents/agent-"

    def main(upto: int) -> None:
        while main.done < upto:  # type: ignore[attr-defined]
            writes.append((name, _dump(s.lines[main.done])))  # type: ignore[attr-defined]
            main.done += 1  # type: ignore[attr-defined]

    main.done = 0  # type: ignore[attr-defined]

    def task(tid: str, agent: str, prompt: str) -> dict[str, object]:
        return tool_use(tid, "Task", description=agent, prompt=prompt, subagent_type="Explore")

    def result(tid: str, agent: str) -> None:
        s.tool_result(
            tid,
            [text(f"{agent} found it.")],
            result={"status": "completed", "agentId": agent, "content": [text("found")]},
        )

    def interleave(subs: dict[str, CCSession], progress: list[str]) -> None:
        """The subagents' lines interleaved, each result once its subagent is complete."""
        queues = {a: [_dump(line) for line in c.lines] for a, c in subs.items()}
        while queues or progress:
            agents = sorted(queues)
            pick = rng.choice([*agents, *(["progress"] if progress else [])])
            if pick == "progress":
                s.progress(progress[0])
                main(len(s.lines))
                continue
            writes.append((f"{sub}{pick}.jsonl", queues[pick].pop(0)))
            if pick == "c3" and len(queues[pick]) == len(subs[pick].lines) - 1:
                writes.append((f"{sub}c3.meta.json", orjson.dumps({"toolUseId": "toolu_T3"})))
            if not queues[pick]:
                del queues[pick]
                tid = {"c1": "toolu_T1", "c2": "toolu_T2", "c3": "toolu_T3"}[pick]
                progress = [p for p in progress if p != tid]
                result(tid, pick)
                main(len(s.lines))

    at = s.start
    s.prompt("Find where refunds are computed, then where they are tested")
    s.answer(text("Searching."), task("toolu_T1", "c1", "Find refunds"), stop_reason="tool_use")
    main(len(s.lines))
    c1 = _subagent("c1", "Find refunds", 2, at + timedelta(seconds=30))
    interleave({"c1": c1}, ["toolu_T1"])
    # the context is compacted: the compaction agent's transcript, then the boundary
    summary = CCSession(agent_id="acompact-5e6f", sidechain=True, start=at + timedelta(seconds=45))
    summary.prompt("Summarise the conversation")
    summary.answer(text("<summary>refunds</summary>"), stop_reason="end_turn")
    for line in summary.lines:
        writes.append((f"{sub}acompact-5e6f.jsonl", _dump(line)))
    s.compact("Refunds are computed in refund.py.")
    main(len(s.lines))
    s.answer(
        task("toolu_T2", "c2", "Find the tests"),
        task("toolu_T3", "c3", "Find the fixtures"),
        stop_reason="tool_use",
    )
    main(len(s.lines))
    c2 = _subagent("c2", "Find the tests", 1, at + timedelta(seconds=60))
    c3 = _subagent("c3", "Find the fixtures", 3, at + timedelta(seconds=61))
    interleave({"c2": c2, "c3": c3}, ["toolu_T2", "toolu_T3"])
    s.answer(text("Refunds are in refund.py, tested in test_refund.py."), stop_reason="end_turn")
    main(len(s.lines))
    return s, writes


def test_subagents_started_while_followed_end_as_the_whole_conversion(tmp_path: Path) -> None:
    """A session followed while it starts subagents (their transcripts appear in
    ``subagents/`` and grow, interleaved with the session's, appended in pieces cut
    anywhere): each call is linked to its subagent, and every run ends as the conversion
    of the finished files makes it, the links and the parents' steps too."""
    rng = rng_for("followed-subagents")
    for case in range(30):
        folder = tmp_path / f"case{case}"
        s, writes = _live_session(rng)
        path = folder / f"{s.session_id}.jsonl"
        path.parent.mkdir(parents=True)
        # opened after any number of the writes (a subagent may be running, or done); the
        # rest comes in pieces cut anywhere
        opened = rng.randrange(1, len(writes))
        lines = sum(1 for file, _ in writes if "/agent-" in file and file.endswith(".jsonl"))
        before = any("/agent-" in file for file, _ in writes[:opened])
        for file, data in writes[:opened]:
            (folder / file).parent.mkdir(parents=True, exist_ok=True)
            with open(folder / file, "ab") as f:
                f.write(data)
        del writes[:opened]
        index = follow(path, path.read_bytes(), "claude-code")
        assert index is not None
        index.scan()
        seen, shown = len(index), len(index.offsets)
        for file, data in writes:
            target = folder / file
            target.parent.mkdir(parents=True, exist_ok=True)
            cut = rng.randrange(len(data) + 1) if file.endswith(".jsonl") else len(data)
            for piece in (data[:cut], data[cut:]):
                with open(target, "ab") as f:
                    f.write(piece)
                if rng.random() < 0.4:
                    index.scan()
                    assert len(index) >= seen  # a step once shown stays
                    seen = len(index)
                    for n in range(shown, len(index.offsets)):  # a call shows with its link
                        line = index.raw_line(n)
                        if b'"type":"tool.call"' in line and b'"name":"Task"' in line:
                            assert b'"subagent"' in line, f"case {case}: {line!r}"
                    shown = len(index.offsets)
        index.scan()
        # each subagent line was read once (the ones the first conversion read, not again)
        parsed = index.streaming.job._follower.parsed
        assert parsed <= lines and (parsed == lines or before), f"case {case}"
        whole = convert("claude-code", path)
        expected = events_bytes(whole.main.events[:-1]).splitlines()
        got = [index.raw_line(n) for n in range(len(index.offsets))]
        assert got[1:] == expected[1:], f"case {case}"
        assert len(whole.runs) == 5
        for run in whole.runs[1:]:
            found = memory.RUNS.path_of(run.session_id, path)
            assert found is not None, f"case {case}: {run.session_id} not followed"
            lines = found.read_bytes().splitlines()
            want = events_bytes(run.events).splitlines()
            assert lines[1:] == want[1:], f"case {case}: {run.session_id}"
            start = orjson.loads(lines[0])
            assert start["metadata"]["parent"] == run.start["metadata"]["parent"]
        links = [
            orjson.loads(line)["subagent"]
            for line in got
            if b'"subagent"' in line and orjson.loads(line)["type"] == "tool.call"
        ]
        assert [link["agent_id"] for link in links] == ["c1", "c2", "c3"]
        index.close()


def test_fuzzed_subagents_while_followed_give_steps_or_one_clear_error(tmp_path: Path) -> None:
    """Subagent transcripts (and the session's lines) mutated, appended in pieces while the
    session is followed: steps, each subagent's run readable, or one clear error."""
    rng = rng_for("followed-subagents-fuzz")
    for case in range(CASES // 5):
        folder = tmp_path / f"case{case}"
        s, writes = _live_session(rng)
        path = folder / f"{s.session_id}.jsonl"
        path.parent.mkdir(parents=True)
        writes = [(f, mutate(rng, d) if rng.random() < 0.3 else d) for f, d in writes]
        path.write_bytes(writes.pop(0)[1])
        index = None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                index = follow(path, path.read_bytes(), "claude-code")
                assert index is not None
                index.scan()
                for file, data in writes:
                    target = folder / file
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with open(target, "ab") as f:
                        f.write(data)
                    if rng.random() < 0.3:
                        index.scan()
                index.scan()
                for n in range(len(index)):
                    link = subagent_link(index.step(n))
                    if link is not None:
                        found = memory.RUNS.path_of(link["session_id"], path)
                        assert found is not None, f"case {case}: {link}"
                        TraceIndex(found).scan()
        except RegistaError:
            continue
        except Exception as exc:  # pragma: no cover - the failure report
            raise AssertionError(f"case {case}: {type(exc).__name__}: {exc}") from exc
        finally:
            if index is not None:
                index.close()


def test_a_call_whose_subagent_never_writes_waits_only_until_the_model_goes_on(
    tmp_path: Path,
) -> None:
    """A ``Task`` call whose subagent writes no transcript holds the steps after it until
    its result comes, or the model answers again (a background call's steps go on)."""
    s = CCSession()
    s.prompt("Start the search in the background, then read the module")
    s.answer(
        tool_use("toolu_T", "Task", prompt="search", description="s", run_in_background=True),
        stop_reason="tool_use",
    )
    path = tmp_path / f"{s.session_id}.jsonl"
    s.write(path)
    index = follow(path, path.read_bytes(), "claude-code")
    assert index is not None
    index.scan()
    assert [e.kind for e in index.steps] == ["model"]  # the call waits for its subagent
    s.answer(tool_use("toolu_R", "Read", file_path="refund.py"), stop_reason="tool_use")
    with open(path, "ab") as f:
        f.write(b"".join(orjson.dumps(line) + b"\n" for line in s.lines[-1:]))
    index.scan()
    assert [e.kind for e in index.steps] == ["model", "tool", "model", "tool"]
    assert subagent_link(index.step(1)) is None
    index.close()
