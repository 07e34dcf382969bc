"""``regista show``: what it prints for good traces, and one clear line for bad ones."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from builders import SIMPLE_SCRIPT, answer, simple_agent
from hypothesis import given
from hypothesis import strategies as st

from regista.cli.cmd_show import _cut_long, _short
from regista.cli.main import main
from regista.errors import ProviderError
from regista.providers import ScriptedProvider

SAMPLES = Path(__file__).parents[2] / "sample_traces"


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")


def _show(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["show", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_header_and_steps_of_a_sample(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _show(capsys, str(SAMPLES / "refund_denied_compaction.jsonl"))
    assert code == 0 and err == ""
    for text in (
        "Session",
        "refund_denied_compaction.jsonl",
        "synthetic",
        "Sam Okafor",
        "claude-sonnet-4-6 · provider scripted",
        "end_turn · 1 turn · 14 steps · 7 tool calls · 1 error · 1 denied · 1 compaction",
        "$0.0000",
        "regista.samples.refund:refund_agent_small_context",
    ):
        assert text in out, text
    rows = [line for line in out.splitlines() if line.strip()[:2].strip().isdigit()]
    assert len(rows) == 14
    assert "denied" in rows[8] and "issue_refund" in rows[8]
    assert "error" in rows[2] and "get_order" in rows[2]
    assert "compaction" in rows[10] and "343/115" in rows[10]
    assert "552/69" in rows[0]


def test_full_keeps_long_texts(capsys: pytest.CaptureFixture[str]) -> None:
    _, short, _ = _show(capsys, str(SAMPLES / "refund_happy.jsonl"))
    _, full, _ = _show(capsys, "--full", str(SAMPLES / "refund_happy.jsonl"))
    assert "Best regards" not in short
    assert "Best" in full and "regards" in full


def test_a_truncated_trace_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_bytes((SAMPLES / "refund_happy.jsonl").read_bytes()[:-30])
    code, out, err = _show(capsys, str(path))
    assert code == 0
    assert "half-written" in out and "unfinished" in out
    assert err == ""


def _newer(tmp_path: Path) -> Path:
    lines = (SAMPLES / "refund_happy.jsonl").read_bytes().splitlines()
    event = orjson.loads(lines[0])
    event["schema_version"] = 7
    path = tmp_path / "newer.jsonl"
    path.write_bytes(orjson.dumps(event) + b"\n")
    return path


def _empty(tmp_path: Path) -> Path:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    return path


def _corrupt(tmp_path: Path) -> Path:
    lines = (SAMPLES / "refund_happy.jsonl").read_bytes().splitlines(keepends=True)
    lines[2] = b"{nope\n"
    path = tmp_path / "corrupt.jsonl"
    path.write_bytes(b"".join(lines))
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing.jsonl", "no such trace file"),
        (lambda d: d, "is a directory"),
        (_empty, "empty trace"),
        (_corrupt, "corrupt.jsonl:3: not valid JSON"),
        (_newer, "trace schema version 7"),
    ],
)
def test_bad_input_is_one_line_and_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: object, message: str
) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    code, out, err = _show(capsys, str(path))
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and err.startswith("regista: ") and message in err


@given(st.text(alphabet=" \n\tab→é", max_size=400), st.integers(min_value=2, max_value=40))
def test_short_of_long_texts_says_the_same(text: str, width: int) -> None:
    """Long texts too (cut from a collapsed prefix, or word by word when white space
    makes the prefix short)."""
    whole = " ".join(text.split())
    expected = whole if len(whole) <= width else whole[: width - 1] + "…"
    assert _short(text, width) == expected


# every kind of white space str.split knows, and characters that are none
_SPACES = " \n\t\r\x0b\x0c\x1c\x1f\x85\xa0\u1680\u2000\u2028\u2029\u202f\u3000"


@given(st.text(alphabet=_SPACES + "ab→é\x00\u200b", max_size=120), st.integers(2, 40))
def test_a_long_gist_is_cut_as_short_cuts_it(text: str, width: int) -> None:
    """The table's cut of a gist whose start is already too long (taken as it is when
    collapsing white space would not change it) is _short's, and it leaves to _short
    only the texts that collapse to at most the width."""
    whole = " ".join(text.split())
    cut = _cut_long(text, width)
    if cut is None:
        assert len(" ".join(text[: 2 * width + 16].split())) <= width
    else:
        assert cut == whole[: width - 1] + "…" == _short(text, width)


@given(st.text(alphabet=" \n\tab→é", max_size=60), st.integers(min_value=2, max_value=40))
def test_short_reads_only_what_it_shows_and_says_the_same(text: str, width: int) -> None:
    """_short stops reading a long text once it has enough: same result as collapsing
    every run of white space first and cutting after."""
    whole = " ".join(text.split())
    expected = whole if len(whole) <= width else whole[: width - 1] + "…"
    assert _short(text, width) == expected
    assert _short(text, None) == whole


def test_a_failed_model_call_is_an_error_not_unfinished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failing = simple_agent(tmp_path, provider=ScriptedProvider(SIMPLE_SCRIPT[:1]))
    with pytest.raises(ProviderError):
        failing.run_sync("Weather?")
    (trace,) = tmp_path.glob("*.jsonl")
    code, out, _ = _show(capsys, str(trace))
    assert code == 0
    last = [line for line in out.splitlines() if line.strip().startswith("2 ")][-1]
    assert last.rstrip().endswith("error") and "unfinished" not in last
    assert "(failed: Scripted" in last


def test_full_keeps_each_step_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = simple_agent(tmp_path, provider=ScriptedProvider([answer(text="Line one.\n\nTwo.")]))
    agent.run_sync("Hi")
    (trace,) = tmp_path.glob("*.jsonl")
    _, out, _ = _show(capsys, "--full", str(trace))
    (row,) = [line for line in out.splitlines() if line.startswith("0  model")]
    assert "Line one. Two." in row


@pytest.mark.parametrize("full", [False, True])
def test_control_characters_of_a_trace_never_reach_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], full: bool
) -> None:
    text = "Red \x1b[31malert\x1b[0m, bell\x07, back\x08space, \x9bcsi."
    agent = simple_agent(tmp_path, provider=ScriptedProvider([answer(text=text)]))
    agent.run_sync("Hi")
    (trace,) = tmp_path.glob("*.jsonl")
    _, out, _ = _show(capsys, *(["--full"] if full else []), str(trace))
    (row,) = [line for line in out.splitlines() if line.startswith("0  model")]
    assert "Red [31malert[0m, bell, backspace, csi." in row
    assert not any(c in out for c in "\x1b\x07\x08\x9b")


def test_the_command_in_its_own_process_prints_everything_and_exits_with_its_code(
    tmp_path: Path,
) -> None:
    """``regista show`` leaves without freeing the trace: its output must still be whole."""
    import subprocess
    import sys

    exe = [sys.executable, "-c", "from regista.cli.main import run; run()", "show"]
    sample = SAMPLES / "refund_denied_compaction.jsonl"
    done = subprocess.run([*exe, str(sample)], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.rstrip().splitlines()[-1].lstrip().startswith("13  model")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    done = subprocess.run([*exe, str(bad)], capture_output=True, text=True, check=False)
    assert done.returncode != 0 and done.stdout == "" and done.stderr.count("\n") == 1


@given(
    st.one_of(
        st.floats(min_value=0.0, max_value=2000.0, allow_nan=False),
        st.sampled_from([0.0005, 2.4995, 2.5, 3.5, 998.9999, 999.0, 999.4996, 999.5, 1e-9]),
        st.integers(0, 2000),
    )
)
def test_a_rows_time_is_took_ms_as_ms_text_says_it(recorded: float) -> None:
    """The table's duration of a step is ``ms_text(took_ms(...))``: its usual case (a
    short duration its closing event recorded) made in line says the same."""
    from types import SimpleNamespace

    from regista.breakdown import took_ms
    from regista.cli.show_pass import Row, ms_text
    from regista.trace.grouping import COMPLETE

    call = SimpleNamespace(type="tool.call", ts="2026-01-01T00:00:00Z", name="t", input={})
    result = SimpleNamespace(type="tool.result", ts="2026-01-01T00:00:01.25Z", duration_ms=recorded)
    row = Row(1, "tool", call)
    row.call, row.result, row.gist, row.flags = call, result, "", COMPLETE
    took = took_ms(call, result, call)
    assert row.columns(False, None)[2] == ("" if took is None else ms_text(took))
