"""Loops and waste: repeated tool calls, retries after the same error, repeated answers."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from importers.cc_fixtures import CCSession, text, tool_use

from regista.importers import convert_file
from regista.loops import RepeatFinder, find_repeats
from regista.trace.reader import Trace
from regista.trace.steps import build_steps

SAMPLES = Path(__file__).parents[2] / "sample_traces"


def test_the_search_loop_sample_is_flagged_at_its_repeated_searches() -> None:
    repeats = find_repeats(Trace.load(SAMPLES / "refund_search_loop.jsonl").steps())
    calls = [(r.step, r.first) for r in repeats if r.kind == "repeated_call"]
    assert calls == [(11, 1), (13, 3), (15, 5), (17, 7), (19, 9)]
    assert repeats[0].describe().startswith("same tool call as step 1: search_orders")
    assert {r.kind for r in repeats} == {"repeated_call", "repeated_answer"}


@pytest.mark.parametrize("name", ["refund_happy.jsonl", "refund_denied_compaction.jsonl"])
def test_a_clean_sample_flags_nothing(name: str) -> None:
    assert find_repeats(Trace.load(SAMPLES / name).steps()) == []


def test_retries_after_the_same_error_in_an_imported_session(tmp_path: Path) -> None:
    s = CCSession()
    s.prompt("Run the tests")
    for i, command in enumerate(["pytest -q", "pytest -q -x", "pytest -q -x -k refund"]):
        s.answer(tool_use(f"toolu_0{i}", "Bash", command=command))
        s.tool_result(f"toolu_0{i}", "Exit code 4\nERROR: file not found: tests", is_error=True)
    s.answer(tool_use("toolu_09", "Bash", command="ls"))
    s.tool_result("toolu_09", "src\n")
    s.answer(tool_use("toolu_10", "Bash", command="ls"))  # the same call again
    s.tool_result("toolu_10", "src\n")
    s.answer(text("There is no tests folder."), stop_reason="end_turn")
    conv = convert_file(s.write(tmp_path / "s.jsonl"))
    assert conv is not None
    path = tmp_path / "run.jsonl"
    path.write_bytes(conv.main.to_bytes())
    trace = Trace.load(path)
    repeats = find_repeats(trace.steps())
    tool_steps = [st.index for st in trace.steps() if st.kind == "tool"]
    retries = [(r.step, r.first) for r in repeats if r.kind == "retry"]
    assert retries == [(tool_steps[1], tool_steps[0]), (tool_steps[2], tool_steps[0])]
    calls = [(r.step, r.first) for r in repeats if r.kind == "repeated_call"]
    assert calls == [(tool_steps[4], tool_steps[3])]
    assert "file not found" in repeats[0].what


def test_the_finder_reads_a_growing_run_step_by_step() -> None:
    steps = Trace.load(SAMPLES / "refund_search_loop.jsonl").steps()
    finder = RepeatFinder()
    seen = [r for st in steps for r in finder.add(st)]
    assert seen == find_repeats(steps) == finder.repeats


def test_seeded_fuzz_of_odd_steps_never_raises() -> None:
    """Steps as a transcript may make them: inputs of any JSON shape, results of any
    content, errors, missing halves."""
    import os

    from regista.trace.events import (
        ErrorEvent,
        LlmRequestEvent,
        LlmResponseEvent,
        ToolCall,
        ToolResult,
    )

    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "1212")))
    values: list[object] = [
        None,
        0,
        -1,
        1.5,
        "",
        "x" * 300,
        "é\u0000",
        [],
        {},
        [1, [2]],
        {"a": {"b": []}},
    ]
    for _ in range(200):
        events: list[object] = []
        for step in range(rng.randint(1, 12)):
            if rng.random() < 0.5:
                events.append(
                    ToolCall.model_construct(
                        step=step,
                        turn=0,
                        tool_use_id=f"t{step}",
                        name=rng.choice(["a", "b", ""]),
                        input={"v": rng.choice(values)},
                    )
                )
                if rng.random() < 0.8:
                    events.append(
                        ToolResult.model_construct(
                            step=step,
                            turn=0,
                            tool_use_id=f"t{step}",
                            name="a",
                            content=rng.choice(
                                [
                                    "",
                                    "boom",
                                    [{"type": "text", "text": "boom"}],
                                    [{"type": "image"}],
                                ]
                            ),
                            is_error=rng.random() < 0.5,
                        )
                    )
            else:
                events.append(LlmRequestEvent.model_construct(step=step, turn=0))
                if rng.random() < 0.3:
                    events.append(
                        ErrorEvent.model_construct(
                            step=step,
                            where="provider",
                            error_type="E",
                            message=rng.choice(["x", "y"]),
                        )
                    )
                elif rng.random() < 0.8:
                    content = rng.choice(
                        [
                            [],
                            [{"type": "text", "text": "again"}],
                            [
                                {
                                    "type": "tool_use",
                                    "id": f"x{step}",
                                    "name": "a",
                                    "input": {"v": 1},
                                }
                            ],
                            "odd",
                            None,
                        ]
                    )
                    events.append(
                        LlmResponseEvent.model_construct(
                            step=step, turn=0, response={"content": content}, provider="p"
                        )
                    )
        for r in find_repeats(build_steps(events)):
            assert r.first < r.step and r.describe()


def test_show_finds_the_repeats_the_reference_finds(tmp_path: Path) -> None:
    """show reads its rows without the event models: its repeats must be the reference's."""
    from show_odd import odd_trace

    from regista.breakdown import step_numbers
    from regista.cli.cmd_show import repeats_of
    from regista.cli.show_pass import StepsPass
    from regista.loops import waste
    from regista.trace.listing import Listing

    s = CCSession()
    s.prompt("Run the tests")
    for i in range(3):
        s.answer(tool_use(f"toolu_0{i}", "Bash", command="pytest"))
        s.tool_result(f"toolu_0{i}", "Exit code 4", is_error=True)
    s.answer(text("No tests."), stop_reason="end_turn")
    conv = convert_file(s.write(tmp_path / "cc.jsonl"))
    assert conv is not None
    imported = tmp_path / "imported.jsonl"
    imported.write_bytes(conv.main.to_bytes())
    paths = [*sorted(SAMPLES.glob("*.jsonl")), imported, odd_trace(tmp_path / "odd.jsonl")]
    for path in paths:
        trace = Trace.load(path)
        by_index = {st.index: step_numbers(st) for st in trace.steps()}
        expected = waste(
            find_repeats(trace.steps()), lambda n, b=by_index: (b[n].tokens, b[n].cost)
        )
        assert repeats_of(StepsPass(Listing.load(path), 0)) == expected, path
