"""The diff of two runs: alignment, classification, field-level changes, the CLI."""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from files import V1_TRACES
from fresh import fresh_python
from hypothesis import given, settings
from hypothesis import strategies as st

from regista import Agent, ContextConfig, tool
from regista.cli.cmd_diff import fold
from regista.cli.main import main
from regista.context import SUMMARY_SYSTEM
from regista.diff import KINDS, LABELS, diff_runs
from regista.diff.align import align, align_levels
from regista.providers import ScriptedProvider
from regista.trace.events import PermissionDecision, SessionEnd, ToolCall, ToolResult
from regista.trace.reader import Trace
from regista.types import LlmRequest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_traces"


# -- small runs ---------------------------------------------------------------------------


def lookup_tool(results: dict[str, str]) -> Any:
    @tool
    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: The key.
        """
        return results.get(key, f"value of {key}")

    return lookup


def turns(n: int, prefix: str = "toolu", texts: dict[int, str] | None = None) -> list[Any]:
    """``n`` model answers that each look one key up, then a final answer."""
    texts = texts or {}
    out: list[Any] = [
        {
            "content": [
                {"type": "text", "text": texts.get(i, f"Looking up k{i}.")},
                {
                    "type": "tool_use",
                    "id": f"{prefix}_{i}",
                    "name": "lookup",
                    "input": {"key": f"k{i}"},
                },
            ]
        }
        for i in range(n)
    ]
    return [*out, {"content": [{"type": "text", "text": texts.get(n, "All done.")}]}]


def run_agent(
    folder: Path,
    script: list[Any] | Callable[[LlmRequest], Any],
    *,
    results: dict[str, str] | None = None,
    instructions: str = "Look things up.",
    **kwargs: Any,
) -> Path:
    agent = Agent(
        model="claude-sonnet-4-6",
        instructions=instructions,
        tools=[lookup_tool(results or {})],
        provider=ScriptedProvider(script),
        trace_dir=folder,
        **kwargs,
    )
    return asyncio.run(agent.run("Look up the keys.")).trace_path


def kinds(a: Path | Trace, b: Path | Trace) -> list[tuple[int | None, int | None, str]]:
    return [(p.a_step, p.b_step, p.kind) for p in diff_runs(a, b).pairs]


def with_steps_inserted(trace: Trace, inserts: list[int]) -> Trace:
    """A copy of ``trace`` with an extra tool step before each step number in ``inserts``
    (numbers of the original trace, one past the last appends; repeats insert several),
    renumbering seq and step."""
    events: list[Any] = []
    shift = 0
    pending = sorted(inserts)

    def extra(at: int) -> None:
        nonlocal shift
        step = at + shift
        for cls, fields in (
            (
                ToolCall,
                {"turn": 0, "tool_use_id": f"x{step}", "name": "extra", "input": {"n": step}},
            ),
            (PermissionDecision, {"tool_use_id": f"x{step}", "allowed": True}),
            (ToolResult, {"tool_use_id": f"x{step}", "name": "extra", "content": "x"}),
        ):
            events.append(cls(session_id=trace.session_id, seq=len(events), step=step, **fields))
        shift += 1

    seen: set[int] = set()
    for ev in trace.events:
        number = getattr(ev, "step", None)
        if isinstance(ev, SessionEnd):
            while pending:
                extra(pending.pop(0))
        elif number is not None and number not in seen:
            seen.add(number)
            while pending and pending[0] == number:
                extra(pending.pop(0))
        update: dict[str, Any] = {"seq": len(events)}
        if number is not None:
            update["step"] = number + shift
        events.append(ev.model_copy(update=update))
    return Trace(events, trace.path)


def without_step(trace: Trace, number: int) -> Trace:
    events: list[Any] = []
    for ev in trace.events:
        step = getattr(ev, "step", None)
        if step == number:
            continue
        update: dict[str, Any] = {"seq": len(events)}
        if step is not None and step > number:
            update["step"] = step - 1
        events.append(ev.model_copy(update=update))
    return Trace(events, trace.path)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Trace:
    """A run of 7 steps: model, tool, model, tool, model, tool, model."""
    return Trace.load(run_agent(tmp_path_factory.mktemp("base"), turns(3)))


# -- classification -----------------------------------------------------------------------


def test_a_run_diffed_with_itself_is_all_same(base: Trace) -> None:
    d = diff_runs(base, base)
    assert d.identical and d.first_divergence is None
    assert [p.kind for p in d.pairs] == ["same"] * 7
    assert d.counts == {**dict.fromkeys(KINDS, 0), "same": 7}
    assert d.differences == []


def test_tool_use_ids_made_at_run_time_do_not_count(tmp_path: Path) -> None:
    a = run_agent(tmp_path / "a", turns(3, prefix="toolu_01AAA"))
    b = run_agent(tmp_path / "b", turns(3, prefix="toolu_01BBB"))
    assert diff_runs(a, b).identical


def test_paths_work_as_well_as_traces(tmp_path: Path) -> None:
    a = run_agent(tmp_path / "a", turns(1))
    d = diff_runs(str(a), a)
    assert d.identical and d.a.path == a


def test_changed_tool_result_is_a_changed_decision(tmp_path: Path) -> None:
    a = run_agent(tmp_path / "a", turns(3))
    b = run_agent(tmp_path / "b", turns(3), results={"k1": "something else"})
    assert kinds(a, b) == [
        (0, 0, "same"),
        (1, 1, "same"),
        (2, 2, "same"),
        (3, 3, "changed_decision"),  # lookup(k1) answered differently
        (4, 4, "changed_input"),  # the model saw the other result
        (5, 5, "same"),
        (6, 6, "same"),
    ]
    d = diff_runs(a, b)
    first = d.first_divergence
    assert first is not None
    assert (first.a_step, first.b_step, first.kind, first.label) == (
        3,
        3,
        "changed_decision",
        "changed · decision",
    )
    assert [c.path for c in first.changes] == ["result.content"]
    assert first.changes[0].old == "value of k1" and first.changes[0].new == "something else"
    (change,) = d.pairs[4].changes
    assert change.path == "request.messages[4].content[0].content"


def test_changed_model_answer_is_a_changed_decision_then_changed_inputs(tmp_path: Path) -> None:
    a = run_agent(tmp_path / "a", turns(3))
    b = run_agent(tmp_path / "b", turns(3, texts={1: "Hmm, k1 next."}))
    assert kinds(a, b) == [
        (0, 0, "same"),
        (1, 1, "same"),
        (2, 2, "changed_decision"),
        (3, 3, "same"),  # same call, same result
        (4, 4, "changed_input"),  # the history now holds the other answer
        (5, 5, "same"),
        (6, 6, "same"),
    ]
    d = diff_runs(a, b)
    assert [c.path for c in d.pairs[2].changes] == ["response.content[0].text"]
    assert [c.path for c in d.pairs[4].changes] == ["request.messages[3].content[0].text"]
    assert d.pairs[2].changes[0].describe("A", "B") == (
        "response.content[0].text: A 'Looking up k1.' != B 'Hmm, k1 next.'"
    )


def test_changed_tool_input_pairs_the_calls_as_changed_input(tmp_path: Path) -> None:
    script = turns(2)
    script[1]["content"][1]["input"] = {"key": "other"}
    a = run_agent(tmp_path / "a", turns(2))
    b = run_agent(tmp_path / "b", script)
    assert kinds(a, b) == [
        (0, 0, "same"),
        (1, 1, "same"),
        (2, 2, "changed_decision"),
        (3, 3, "changed_input"),
        (4, 4, "changed_input"),
    ]
    d = diff_runs(a, b)
    assert [c.path for c in d.pairs[3].changes] == ["tool.input.key", "result.content"]


def test_changed_system_prompt_is_a_changed_config(tmp_path: Path) -> None:
    a = run_agent(tmp_path / "a", turns(2))
    b = run_agent(tmp_path / "b", turns(2), instructions="Look things up, carefully.")
    assert kinds(a, b) == [
        (0, 0, "changed_config"),
        (1, 1, "same"),
        (2, 2, "changed_config"),
        (3, 3, "same"),
        (4, 4, "changed_config"),
    ]
    first = diff_runs(a, b).first_divergence
    assert first is not None and first.kind == "changed_config"
    assert [c.path for c in first.changes] == ["request.system"]


def test_changed_model_and_params_are_changed_config(tmp_path: Path) -> None:
    a = run_agent(tmp_path / "a", turns(0))
    b = run_agent(tmp_path / "b", turns(0), params={"temperature": 0.2}, max_tokens=100)
    d = diff_runs(a, b)
    assert [p.kind for p in d.pairs] == ["changed_config"]
    assert [c.path for c in d.pairs[0].changes] == [
        "request.max_tokens",
        "request.params.temperature",
    ]


def test_denied_call_is_a_changed_decision(tmp_path: Path) -> None:
    a = run_agent(tmp_path / "a", turns(1))
    b = run_agent(tmp_path / "b", turns(1), policy=lambda call: False)
    d = diff_runs(a, b)
    assert [p.kind for p in d.pairs] == ["same", "changed_decision", "changed_input"]
    paths = [c.path for c in d.pairs[1].changes]
    assert paths[:2] == ["decision.allowed", "result.content"]
    assert "result.is_error" in paths


def test_an_extra_step_is_one_insert_and_the_rest_stays_same(base: Trace) -> None:
    d = diff_runs(base, with_steps_inserted(base, [3]))
    assert [(p.a_step, p.b_step, p.kind) for p in d.pairs] == [
        (0, 0, "same"),
        (1, 1, "same"),
        (2, 2, "same"),
        (None, 3, "insert"),
        (3, 4, "same"),
        (4, 5, "same"),
        (5, 6, "same"),
        (6, 7, "same"),
    ]
    first = d.first_divergence
    assert first is not None and first.kind == "insert" and first.a_step is None
    assert first.describe() == "step 3 in B: insert (only B has it)"
    assert first.changes[0].describe("A", "B") == "step: only B has 'extra {\"n\":3}'"


def test_a_missing_step_is_one_delete(base: Trace) -> None:
    d = diff_runs(base, without_step(base, 5))
    assert [p.kind for p in d.pairs] == ["same"] * 5 + ["delete", "same"]
    assert d.pairs[5].a_step == 5 and d.pairs[5].b is None


def test_compaction_steps_align_and_compare_their_summaries(tmp_path: Path) -> None:
    def model(summary: str) -> Callable[[LlmRequest], Any]:
        answers = iter(turns(3))

        def answer(request: LlmRequest) -> Any:
            if request.system == SUMMARY_SYSTEM:
                return {"content": [{"type": "text", "text": summary}]}
            return next(answers)

        return answer

    ctx = ContextConfig(max_tokens=1, keep_last=1)
    a = run_agent(tmp_path / "a", model("k0 looked up."), context=ctx)
    b = run_agent(tmp_path / "b", model("k0 was looked up."), context=ctx)
    d = diff_runs(a, b)
    compactions = [p for p in d.pairs if p.step_kind == "compaction"]
    assert compactions and compactions[0].kind == "changed_decision"
    assert [c.path for c in compactions[0].changes] == ["compaction.summary"]
    assert diff_runs(a, a).identical


def test_an_unfinished_run_differs_where_it_stopped(base: Trace) -> None:
    last_request = max(i for i, ev in enumerate(base.events) if getattr(ev, "step", None) == 6)
    cut = Trace(base.events[:last_request], base.path)  # died waiting for the last answer
    d = diff_runs(base, cut)
    assert [p.kind for p in d.pairs] == ["same"] * 6 + ["changed_decision"]
    assert d.pairs[6].changes[0].path == "response.content"
    assert d.to_dict()["b"]["stop_reason"] is None


def test_navigation_and_json(tmp_path: Path) -> None:
    a = run_agent(tmp_path / "a", turns(3))
    b = run_agent(tmp_path / "b", turns(3), results={"k0": "x", "k2": "y"})
    d = diff_runs(a, b)
    assert d.differences == [1, 2, 5, 6]
    assert d.next_difference(2) == 5 and d.next_difference(6) is None
    assert d.previous_difference(5) == 2 and d.previous_difference(1) is None
    data = json.loads(d.to_json())
    assert data == json.loads(json.dumps(d.to_dict()))
    assert data["identical"] is False
    assert data["first_divergence"]["a_step"] == 1
    assert data["first_divergence"]["changes"][0]["path"] == "result.content"
    assert [p["kind"] for p in data["pairs"]] == [p.kind for p in d.pairs]
    assert "changes" not in data["pairs"][0]
    assert {p.label for p in d.pairs} <= set(LABELS.values())


# -- the golden pair ----------------------------------------------------------------------


def test_golden_pair_refund_success_against_search_loop() -> None:
    d = diff_runs(SAMPLES / "refund_happy.jsonl", SAMPLES / "refund_search_loop.jsonl")
    first = d.first_divergence
    assert first is not None
    # The same first search; the stale index of the loop's shop answers it with no match.
    assert (first.a_step, first.b_step, first.kind) == (1, 1, "changed_decision")
    assert [c.path for c in first.changes] == ["result.content"]
    # From there the runs take different paths: A checks the order where B searches again.
    structural = d.first("insert", "delete")
    assert structural is not None
    assert (structural.a_step, structural.b_step, structural.kind) == (3, None, "delete")
    assert structural.pair.a is not None and structural.pair.a.title == "get_order"
    after = d.pairs[structural.index + 1]
    assert after.kind == "insert" and after.b is not None and after.b.title == "search_orders"
    assert d.counts["insert"] - d.counts["delete"] == 20 - 9


# -- the alignment ------------------------------------------------------------------------


def lcs_length(a: list[int], b: list[int]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b):
            cur = row[j + 1]
            row[j + 1] = prev + 1 if x == y else max(row[j + 1], row[j])
            prev = cur
    return row[-1]


def check_alignment(a: list[Any], b: list[Any], pairs: list[tuple[int | None, int | None]]) -> None:
    assert [i for i, _ in pairs if i is not None] == list(range(len(a)))
    assert [j for _, j in pairs if j is not None] == list(range(len(b)))
    assert all(a[i] == b[j] for i, j in pairs if i is not None and j is not None)


small = st.lists(st.integers(0, 3), max_size=14)


@settings(max_examples=150, deadline=None)
@given(small, small)
def test_align_is_a_longest_common_subsequence(a: list[int], b: list[int]) -> None:
    pairs = align(a, b)
    check_alignment(a, b, pairs)
    assert sum(1 for i, j in pairs if i is not None and j is not None) == lcs_length(a, b)


@settings(max_examples=100, deadline=None)
@given(small, small)
def test_align_falls_back_to_a_valid_alignment_past_its_cost_limit(
    a: list[int], b: list[int]
) -> None:
    check_alignment(a, b, align(a, b, max_cost=1))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=40))
def test_align_with_itself_matches_everything(a: list[int]) -> None:
    assert align(a, a) == [(i, i) for i in range(len(a))]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_inserting_k_items_yields_exactly_k_inserts(data: st.DataObject) -> None:
    a = data.draw(st.lists(st.tuples(st.integers(0, 6), st.sampled_from("mt")), max_size=30))
    b = list(a)
    k = data.draw(st.integers(0, 6))
    for _ in range(k):
        at = data.draw(st.integers(0, len(b)))
        b.insert(at, data.draw(st.tuples(st.integers(0, 9), st.sampled_from("mt"))))
    rows = align_levels(a, b)
    assert sum(1 for i, _, _ in rows if i is None) == k
    assert all(j is not None for _, j, _ in rows)
    assert sum(1 for i, j, lvl in rows if i is not None and j is not None and lvl == 0) == len(a)


def test_align_levels_pairs_leftovers_on_the_coarser_key() -> None:
    a = [("a", "m"), ("x", "t"), ("c", "m")]
    b = [("a", "m"), ("y", "t"), ("z", "t"), ("c", "m")]
    assert align_levels(a, b) == [(0, 0, 0), (1, 1, 1), (None, 2, -1), (2, 3, 0)]


def test_align_is_fast_on_long_sequences_with_few_differences() -> None:
    a = list(range(20_000))
    b = [*a[:5000], -1, *a[5000:15_000], *a[15_001:]]
    pairs = align(a, b)
    assert sum(1 for i, _ in pairs if i is None) == 1
    assert sum(1 for _, j in pairs if j is None) == 1


def test_align_stays_valid_when_long_sequences_have_little_in_common() -> None:
    a = [i % 3 for i in range(6000)]
    b = [(i * 7) % 5 for i in range(5000)] + list(range(100, 1100))
    check_alignment(a, b, align(a, b))


# -- end to end properties ----------------------------------------------------------------


@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=0, max_size=4))
def test_any_scripted_run_diffed_with_itself_is_all_same(calls_per_turn: list[int]) -> None:
    script: list[Any] = [
        {
            "content": [
                {"type": "tool_use", "name": "lookup", "input": {"key": f"k{t}.{c}"}}
                for c in range(n)
            ]
        }
        for t, n in enumerate(calls_per_turn)
    ]
    script.append({"content": [{"type": "text", "text": "done"}]})
    with tempfile.TemporaryDirectory() as tmp:
        path = run_agent(Path(tmp), script)
        d = diff_runs(path, Trace.load(path))
        assert d.identical
        assert len(d.pairs) == len(calls_per_turn) + 1 + sum(calls_per_turn)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 7), max_size=4))
def test_inserting_k_steps_into_a_run_yields_exactly_k_inserts(base: Trace, at: list[int]) -> None:
    d = diff_runs(base, with_steps_inserted(base, at))
    assert d.counts["insert"] == len(at)
    assert d.counts["same"] == len(base.steps())


# -- the CLI ------------------------------------------------------------------------------


def test_cli_table_shows_the_first_divergence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = run_agent(tmp_path / "a", turns(3))
    b = run_agent(tmp_path / "b", turns(3), results={"k1": "something else"})
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "First divergence: step 3 in A, step 3 in B: changed · decision" in out
    assert "result.content: A 'value of k1' != B 'something else'" in out
    assert "changed · input" in out
    assert "2 of 7 steps differ" in out


def test_cli_folds_long_stretches_of_same_steps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = run_agent(tmp_path / "a", turns(8))
    b = run_agent(tmp_path / "b", turns(8), results={"k7": "x"})
    assert main(["diff", str(a), str(b), "--context", "1"]) == 1
    assert "… 14 same steps …" in capsys.readouterr().out
    assert main(["diff", str(a), str(b), "--all"]) == 1
    assert "same steps" not in capsys.readouterr().out


def test_cli_negative_changes_lists_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = run_agent(tmp_path / "a", turns(3))
    b = run_agent(tmp_path / "b", turns(3), results={"k1": "something else"})
    assert main(["diff", str(a), str(b), "--changes", "0"]) == 1
    none = capsys.readouterr().out
    assert "… and 1 more difference\n" in none and "result.content" not in none
    assert main(["diff", str(a), str(b), "--changes", "-5"]) == 1
    assert capsys.readouterr().out == none


def test_fold_rows() -> None:
    assert fold(10, [4], 1) == [("fold", 3), ("pair", 3), ("pair", 4), ("pair", 5), ("fold", 4)]
    assert fold(3, [], None) == [("pair", 0), ("pair", 1), ("pair", 2)]
    assert fold(3, [0, 2], 0) == [("pair", 0), ("fold", 1), ("pair", 2)]


def test_cli_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = run_agent(tmp_path / "a", turns(2))
    b = run_agent(tmp_path / "b", turns(2), instructions="Other instructions.")
    assert main(["diff", "--json", str(a), str(b)]) == 1
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"a", "b", "identical", "counts", "first_divergence", "pairs", "verdicts"}
    assert data["a"]["path"] == str(a) and data["b"]["stop_reason"] == "end_turn"
    assert data["counts"]["changed_config"] == 3
    first = data["first_divergence"]
    assert (first["pair"], first["a_step"], first["b_step"]) == (0, 0, 0)
    assert first["label"] == "changed · config"
    assert first["changes"] == [
        {
            "path": "request.system",
            "op": "changed",
            "old": "Look things up.",
            "new": "Other instructions.",
        }
    ]


def test_cli_same_runs_exit_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = run_agent(tmp_path / "a", turns(1))
    assert main(["diff", str(a), str(a)]) == 0
    assert "The runs are the same (3 steps)." in capsys.readouterr().out
    assert main(["diff", "--json", str(a), str(a)]) == 0
    assert json.loads(capsys.readouterr().out)["first_divergence"] is None


def test_cli_bad_input_is_one_line_and_exit_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = run_agent(tmp_path / "a", turns(1))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n{}\n")
    for args in ([str(a), str(tmp_path / "missing.jsonl")], [str(bad), str(a)]):
        assert main(["diff", *args]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.count("\n") == 1 and captured.err.startswith("regista: ")


def test_the_diff_engine_imports_no_ui() -> None:
    code = "import sys, regista.diff; print('rich' in sys.modules, 'textual' in sys.modules)"
    out = fresh_python(code)
    assert out.split() == ["False", "False"]


def test_a_schema_1_trace_diffs_same_as_its_schema_2_copy(tmp_path: Path) -> None:
    """Schema 1 hashed a compaction's request over the plain JSON and schema 2 over the
    redacted JSON: where the history held a secret shape the hashes differ for the same
    request, and that alone is not a change."""
    v1 = V1_TRACES / "refund_denied_compaction.jsonl"
    lines = []
    for line in v1.read_text().splitlines():
        event = json.loads(line)
        event["schema_version"] = 2
        if event["type"] == "context.compaction":
            event["request_hash"] = "0" * 64  # the same request, hashed the other way
        lines.append(json.dumps(event))
    v2 = tmp_path / "v2.jsonl"
    v2.write_text("\n".join(lines) + "\n")
    result = diff_runs(Trace.load(v1), Trace.load(v2))
    assert {pair.kind for pair in result.pairs} == {"same"}
