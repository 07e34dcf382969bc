"""``regista runs``: a folder's runs read from first and last lines, linked and filtered."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from library import Library

from regista.cli.main import main
from regista.errors import UserError
from regista.store.runs import filter_runs, list_runs, parse_since, read_run
from regista.trace.reader import Trace


def _sid(path: Path) -> str:
    return Trace.load(path).session_id


async def test_every_run_is_listed_with_its_links(lib: Library) -> None:
    listing = list_runs(lib.folder)
    assert not listing.skipped
    by = {r.path: r for r in listing.runs}
    assert len(by) == 7
    orig = by[lib.original]
    assert orig.kind == "run" and orig.outcome == "end_turn" and not orig.failed
    assert orig.steps == Trace.load(lib.original).end.steps  # type: ignore[union-attr]
    assert by[lib.replayed].kind == "replay"
    assert by[lib.replayed].link == f"replay of {orig.session_id}"
    assert by[lib.forked].kind == "fork" and by[lib.forked].fork_step == 1
    assert by[lib.forked].link == f"fork of {orig.session_id} at step 1"
    assert by[lib.forked].parent is orig
    assert by[lib.rewound].kind == "rewind" and by[lib.rewound].fork_step == 2
    assert by[lib.resumed].kind == "resume"
    assert by[lib.resumed].link == f"resumed from {_sid(lib.unfinished)}"
    unfinished = by[lib.unfinished]
    # a run without a session.end is in progress (or was cut short): not a failure
    assert unfinished.outcome == "unfinished" and unfinished.steps == 2
    assert unfinished.status == "in_progress" and not unfinished.failed
    assert by[lib.failed].outcome == "max_turns" and by[lib.failed].failed
    # savings are there for every run that reused a recording
    for path in (lib.replayed, lib.forked, lib.rewound, lib.resumed):
        assert by[path].savings is not None and by[path].savings.calls >= 1  # type: ignore[union-attr]
    assert orig.savings is None
    # newest first
    assert [r.started for r in listing.runs] == sorted(
        (r.started for r in listing.runs), reverse=True
    )


async def test_filters(lib: Library) -> None:
    runs = list_runs(lib.folder).runs
    failed = {r.path for r in filter_runs(runs, failed=True)}
    assert failed == {lib.failed}
    assert {r.path for r in filter_runs(runs, task="invoices RECONCILE")} == {lib.failed}
    assert {r.path for r in filter_runs(runs, task="paris picnic")} == {
        lib.original,
        lib.replayed,
        lib.forked,
        lib.rewound,
    }
    orig = next(r for r in runs if r.path == lib.original)
    assert {r.path for r in filter_runs(runs, forks_of=orig)} == {
        lib.original,
        lib.forked,
        lib.rewound,
    }
    assert filter_runs(runs, since="2999-01-01T00:00:00.000Z") == []
    assert len(filter_runs(runs, since=parse_since("2000-01-01"))) == 7


def test_parse_since() -> None:
    assert parse_since("2026-07-02") == "2026-07-02T00:00:00.000Z"
    assert parse_since("2026-07-02T09:30+02:00") == "2026-07-02T07:30:00.000Z"
    assert parse_since("3d") < parse_since("2h")
    with pytest.raises(UserError, match="--since 'yesterday'"):
        parse_since("yesterday")
    # past the calendar's ends: every run, or none, never an overflow
    assert parse_since("99999999999d") == "0001-01-01T00:00:00.000Z"
    assert parse_since("0001-01-01T00:00+01:00") == "0001-01-01T00:00:00.000Z"
    assert parse_since("0001-01-02") == "0001-01-02T00:00:00.000Z"  # four digits of year
    assert parse_since("9999-12-31T23:59-05:00") == "9999-12-31T23:59:59.999Z"


async def test_cli_table_and_json(lib: Library, capsys: pytest.CaptureFixture[str]) -> None:
    orig = _sid(lib.original)
    assert main(["runs", str(lib.folder)]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].startswith("ID")
    assert f"fork of {orig} at step 1 (parent: end_turn, $0.0000)" in table
    assert "saved " in table
    assert main(["runs", str(lib.folder), "--json", "--forks-of", orig[:12]]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["session_id"] == orig  # the parent first, its forks under it
    assert {r["kind"] for r in rows[1:]} == {"fork", "rewind"}
    assert all(r["parent_outcome"] == "end_turn" for r in rows[1:])
    assert main(["runs", str(lib.folder), "--failed", "--json"]) == 0
    failed = json.loads(capsys.readouterr().out)
    assert {(r["outcome"], r["status"], r["failed"]) for r in failed} == {
        ("max_turns", "failed", True)
    }


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err.strip() == f"regista: {tmp_path / 'nope'}: no such folder"
    (tmp_path / "f.jsonl").write_text("{}\n")
    assert main(["runs", str(tmp_path / "f.jsonl")]) == 2
    assert main(["runs", str(tmp_path), "--since", "soon"]) == 2
    assert main(["runs", str(tmp_path), "--forks-of", "01X"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(e.startswith("regista: ") for e in err)


async def test_other_files_are_skipped_not_fatal(
    lib: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    (lib.folder / "notes.jsonl").write_text('{"hello": "world"}\n')
    (lib.folder / "empty.jsonl").write_bytes(b"")
    (lib.folder / "binary.jsonl").write_bytes(os.urandom(300))
    sub = lib.folder / "imported"
    sub.mkdir()
    (sub / "copy.jsonl").write_bytes(lib.original.read_bytes())
    listing = list_runs(lib.folder)
    assert len(listing.runs) == 8  # the copy in the sub-folder is listed too
    assert len(listing.skipped) == 3
    assert main(["runs", str(lib.folder)]) == 0
    assert "3 files skipped" in capsys.readouterr().err


async def test_a_half_written_last_line_reads_as_unfinished(lib: Library) -> None:
    data = lib.original.read_bytes()
    lib.original.write_bytes(data + b'{"schema_version":1,"session_id":"x","seq":99,"ty')
    run = read_run(lib.original)
    assert run.complete  # the session.end before the half-written line still counts
    body = data.rstrip(b"\n").rsplit(b"\n", 1)[0] + b"\n"  # drop session.end
    lib.original.write_bytes(body + b'{"schema_version":1,"ty')
    run = read_run(lib.original)
    assert not run.complete and run.outcome == "unfinished" and run.steps is not None


async def test_fuzz_read_run_never_raises_anything_else(lib: Library, tmp_path: Path) -> None:
    """Seeded: damaged traces either read as a run or are refused with ValueError."""
    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "1616")))
    n = int(os.environ.get("REGISTA_FUZZ_CASES", "300"))
    sources = [p.read_bytes() for p in (lib.original, lib.forked, lib.unfinished)]
    target = tmp_path / "fuzz.jsonl"
    for _ in range(n):
        data = bytearray(rng.choice(sources))
        for _ in range(rng.randint(1, 6)):
            op = rng.randrange(4)
            i = rng.randrange(len(data) + 1)
            if op == 0:
                data[i:i] = rng.choice([b"\n", b"{", b'"', b"\xff", b"\x00", b"}"])
            elif op == 1 and data:
                del data[i : i + rng.randint(1, 200)]
            elif op == 2:
                data = data[:i]
            else:
                data[i:i] = b'"session.end"' if rng.random() < 0.5 else b'"step":9'
        target.write_bytes(bytes(data))
        try:
            run = read_run(target)
        except ValueError:
            continue
        assert isinstance(run.task, str) and isinstance(run.outcome, str)
        run.to_dict()


def test_an_unfinished_run_with_parallel_tool_calls_counts_every_step_begun(
    tmp_path: Path,
) -> None:
    """Parallel tool calls write every call before the first decision: the last line of a
    run cut there belongs to an earlier step than the last one begun."""
    import asyncio

    from builders import rich_agent

    path = asyncio.run(rich_agent(tmp_path).run("weather")).trace_path
    lines = path.read_bytes().split(b"\n")
    calls = [i for i, line in enumerate(lines) if b'"type":"tool.call"' in line[:200]]
    decisions = [i for i, line in enumerate(lines) if b'"type":"permission.decision"' in line]
    assert len(calls) >= 3 and calls[2] < decisions[0]  # three calls, then their decisions
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"\n".join(lines[: decisions[0] + 1]) + b"\n")
    run = read_run(cut)
    assert not run.complete
    assert run.steps == Trace.load(cut).summary().steps == 4  # the model call and 3 tools


def test_the_step_count_of_an_unfinished_run_reads_back_past_long_lines(tmp_path: Path) -> None:
    """The last step's opener may sit behind long tool results: it is read back to in
    growing blocks, lines that straddle two blocks included."""
    import asyncio

    import orjson
    from builders import rich_agent

    path = asyncio.run(rich_agent(tmp_path).run("weather")).trace_path
    lines = path.read_bytes().split(b"\n")
    results = [i for i, line in enumerate(lines) if b'"type":"tool.result"' in line[:200]]
    at = results[0]  # the first of three parallel calls' results: the third call is earlier
    event = orjson.loads(lines[at])
    for size in (70_000, 300_000, 1_500_000):
        event["content"] = "x" * size
        lines[at] = orjson.dumps(event)
        cut = tmp_path / f"cut-{size}.jsonl"
        cut.write_bytes(b"\n".join(lines[: at + 1]) + b"\n")
        assert read_run(cut).steps == Trace.load(cut).summary().steps == 4
