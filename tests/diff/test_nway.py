"""The N-way alignment of a parent and its forks, and where each fork first diverged.

The forks are made in this process with :func:`regista.fork` (the sample search loop's
first search answered three ways), so the engine is tested without the CLI.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sweeps import LOOP, RESULTS

from regista import ToolResultEdit, fork
from regista.diff import diff_runs
from regista.diff.nway import align_many, divergence_text, fork_divergence
from regista.trace.reader import Trace


@pytest.fixture(scope="module")
def forks(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("forks")
    out = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REGISTA_SAMPLE_DB", str(folder / "shop.sqlite"))
        for result in [*RESULTS, Trace.load(LOOP).steps()[1].result.content]:
            made = asyncio.run(fork(LOOP, at_step=1, edit=ToolResultEdit(result), trace_dir=folder))
            out.append(Path(made.trace_path))
    return out


def test_the_first_divergence_leaves_out_the_edit_and_its_echo(forks: list[Path]) -> None:
    """The found order: the next answer differs. Nothing found, an outage, or the recorded
    result again: the next request holds the new result, the agent does the same."""
    texts = [divergence_text(fork_divergence(diff_runs(LOOP, f), {1})) for f in forks]
    assert texts == ["step 2: changed · decision", "none", "none", "none"]
    # without leaving the edit out, the edit is the first difference
    edited = fork_divergence(diff_runs(LOOP, forks[1]))
    assert edited is not None and edited.a_step == 1


def test_the_rows_are_the_parents_steps_with_the_forks_steps_aligned(forks: list[Path]) -> None:
    nway = align_many(LOOP, [*forks[:3], None], [{1}, {1}, {1}, set()])
    parent_steps = [r.parent_step for r in nway.rows if r.parent_step is not None]
    assert parent_steps == list(range(20))  # every parent step once, in order
    found = [r.cells[0] for r in nway.rows]
    fork_steps = [c.b_step for c in found if c is not None and c.b_step is not None]
    assert fork_steps == list(range(9))  # the fork's steps once each, in order
    inserted = [r for r in nway.rows if r.parent_step is None]
    assert [r.cells[0].b_step for r in inserted] == [3, 5, 7]  # get_order, refund, email
    assert all(r.cells[1] is None and r.cells[2] is None for r in inserted)
    assert all(r.cells[3] is None for r in nway.rows)  # no trace yet: an empty column
    assert nway.first == [2, None, None, None]  # the row of parent step 2
    same = [r.cells[1].kind for r in nway.rows if r.parent_step and r.parent_step > 2]
    assert set(same) == {"same"}


def _greeting(day: str, folder: Path) -> Path:
    from regista import Agent, ScriptedProvider

    answer = ScriptedProvider([{"content": [{"type": "text", "text": "hello"}]}])
    agent = Agent(instructions=f"You greet. Today is {day}.", provider=answer, trace_dir=folder)
    return Path(asyncio.run(agent.run("greet")).trace_path)


def test_a_difference_only_in_masked_values_is_no_divergence(tmp_path: Path) -> None:
    """Two runs whose system prompts differ only by the day: changed config, unless the
    masks beside the parent (here learned by ``regista masks learn``) cover the date."""
    from regista.cli.main import main
    from regista.sweep.sweepfile import Sweep
    from regista.sweep.table import sweep_masks

    a, b = _greeting("2026-12-01", tmp_path), _greeting("2026-12-02", tmp_path)
    diff = diff_runs(a, b)
    assert divergence_text(fork_divergence(diff)) == "step 0: changed · config"
    assert main(["masks", "learn", str(a), str(b), "-o", str(tmp_path / "masks.toml")]) == 0
    sweep = Sweep(tmp_path / "sweep.json", "id", str(a), "sid", 0, [])
    masks = sweep_masks(sweep)  # the built-in masks and masks.toml beside the parent
    assert fork_divergence(diff, masks=masks) is None
    nway = align_many(a, [b], masks=masks)
    assert nway.first == [None]


def test_a_fork_that_has_not_ended_is_not_missing_the_steps_it_has_not_reached(
    forks: list[Path], tmp_path: Path
) -> None:
    """A fork still running (or cut short) lacks the parent's last steps only because it
    has not got there: no divergence, until it ends without them."""
    lines = forks[1].read_bytes().splitlines(keepends=True)
    partial = tmp_path / "partial.jsonl"
    partial.write_bytes(b"".join(lines[: len(lines) // 2]))
    diff = diff_runs(LOOP, partial, settled=True)  # its step in progress left out
    assert divergence_text(fork_divergence(diff, {1})) == "none"
    found = fork_divergence(diff_runs(LOOP, forks[0]), {1})  # ended: what it lacks counts
    assert found is not None and found.a_step == 2
