"""Values nested deeper than MAX_DEPTH: a clear error everywhere, never a RecursionError."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import answer, tool_use
from tui.waits import settle

from regista import Agent, TraceWriteError, diff_runs, tool
from regista.cli.main import main
from regista.errors import TraceFormatError
from regista.providers import ScriptedProvider
from regista.trace.index import TraceIndex
from regista.trace.reader import Trace
from regista.trace.validate import MAX_DEPTH
from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp

SAMPLE = Path(__file__).parents[2] / "sample_traces" / "refund_happy.jsonl"


def _deep_json(levels: int) -> bytes:
    return b'{"k":' * levels + b"1" + b"}" * levels


def _deep_value(levels: int) -> Any:
    value: Any = "leaf"
    for i in range(levels):
        value = {"k": value} if i % 2 else [value]
    return value


def _deep_trace(tmp_path: Path, levels: int) -> tuple[Path, int]:
    lines = SAMPLE.read_bytes().split(b"\n")[:-1]
    k = next(i for i, ln in enumerate(lines) if b'"type":"tool.call"' in ln)
    head, _, _ = lines[k].partition(b'"input":')
    lines[k] = head + b'"input":{"x":' + _deep_json(levels) + b"}}"
    path = tmp_path / f"deep{levels}.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path, k + 1


@pytest.mark.parametrize("levels", [300, 1000, 5000])
def test_load_index_show_and_diff_say_too_deep(
    tmp_path: Path, levels: int, capsys: pytest.CaptureFixture[str]
) -> None:
    path, line = _deep_trace(tmp_path, levels)
    message = rf"deep{levels}\.jsonl:{line}: a value nested more than {MAX_DEPTH} levels deep"
    with pytest.raises(TraceFormatError, match=message):
        Trace.load(path)
    index = TraceIndex(path)
    while not index.scan():
        pass
    with pytest.raises(TraceFormatError, match=message):
        for pos in range(len(index.steps)):
            index.step(pos)
    index.close()
    with pytest.raises(TraceFormatError, match=message):
        diff_runs(SAMPLE, path)
    for argv in (["show", str(path)], ["diff", str(SAMPLE), str(path)]):
        assert main(argv) != 0
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "levels deep" in err


def test_the_deepest_allowed_value_works_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = _deep_trace(tmp_path, MAX_DEPTH - 6)  # the event, input and x hold it
    trace = Trace.load(path)
    assert main(["show", "--full", str(path)]) == 0
    assert main(["diff", str(SAMPLE), str(path)]) == 1
    assert main(["export", str(path), "--console", "--include-content"]) == 0
    capsys.readouterr()
    assert diff_runs(SAMPLE, path).first_divergence is not None
    assert trace.steps()


async def test_the_debugger_shows_it_in_place(tmp_path: Path) -> None:
    path, _ = _deep_trace(tmp_path, 300)
    index, notice = open_index(path)
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        for key in ["j", "j", "j", "end", "home", "slash", "x", "enter"]:
            await pilot.press(key)
        await settle(pilot)
        assert app.is_running


async def test_a_live_answer_too_deep_ends_the_session_with_a_recorded_error(
    tmp_path: Path,
) -> None:
    @tool
    def store(data: dict[str, Any]) -> str:
        """Stores data."""
        return "stored"

    script = [answer(tool_use("toolu_1", "store", data=_deep_value(260))), answer(text="ok")]
    agent = Agent(tools=[store], provider=ScriptedProvider(script), trace_dir=tmp_path)
    with pytest.raises(TraceWriteError, match=f"nested more than {MAX_DEPTH} levels deep"):
        await agent.run("store it")
    (path,) = tmp_path.glob("*.jsonl")
    trace = Trace.load(path)
    assert trace.complete
    assert trace.end is not None and "levels deep" in (trace.end.error or "")
    assert any(ev.type == "error" and "levels deep" in ev.message for ev in trace.events)


def _depth(value: Any) -> int:
    """How many objects and lists nest in a decoded value, the plain recursive way."""
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def test_too_deep_agrees_with_a_plain_recursive_depth() -> None:
    """Random shapes around the limit, wide and deep, with brackets inside strings too."""
    import random

    import orjson

    from regista.trace.validate import too_deep

    rng = random.Random(1729)

    def make(levels: int) -> Any:
        value: Any = rng.choice(["x", 1, None, "[{[{" * rng.randint(0, 40), [], {}])
        for _ in range(levels - 1):
            siblings = [rng.choice(["s", 2, [], {}, [[1]]]) for _ in range(rng.randint(0, 3))]
            if rng.random() < 0.5:
                value = [*siblings[:1], value, *siblings[1:]]
            else:
                value = {f"k{i}": s for i, s in enumerate(siblings)} | {"v": value}
        return value

    for _ in range(400):
        data = {"type": "tool.call", "input": make(rng.randint(1, MAX_DEPTH + 3))}
        if rng.random() < 0.3:
            data["pad"] = "{" * rng.choice([0, 100, 3000, 20000])  # counted, or walked
        raw = orjson.dumps(data)
        assert too_deep(raw, data) == (_depth(data) > MAX_DEPTH), raw[:200]
        for limit in (1, 2, 5):
            assert too_deep(raw, data, limit) == (_depth(data) > limit)


def test_more_brackets_counts_both_kinds_up_to_the_limit() -> None:
    import random

    from regista.trace.validate import more_brackets

    rng = random.Random(99)
    for _ in range(500):
        raw = bytes(rng.choice(b'[]{}"ab') for _ in range(rng.randint(0, 60)))
        limit = rng.randint(0, 30)
        assert more_brackets(raw, limit) == (raw.count(b"[") + raw.count(b"{") > limit), raw
