"""A transcript followed as it grows (:func:`regista.importers.memory.follow`): appended
line by line it ends as the same run as converted whole, and any bytes appended give steps
or one clear error."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import regista.importers.memory as memory
from regista.errors import RegistaError
from regista.importers import convert
from regista.importers._builder import events_bytes
from regista.importers.memory import InMemoryRuns, follow

from .cc_fixtures import basic_session, text, tool_use
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
