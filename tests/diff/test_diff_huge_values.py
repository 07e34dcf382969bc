"""A huge value (a 5 MB tool name) is compared, and shown cut to a terminal line."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from regista import diff_runs
from regista.cli.main import main

SAMPLE = Path(__file__).parents[2] / "sample_traces" / "refund_happy.jsonl"


def _huge_name(tmp_path: Path) -> Path:
    out = []
    for raw in SAMPLE.read_bytes().split(b"\n")[:-1]:
        event = orjson.loads(raw)
        if event["type"] == "tool.call" and event["step"] == 1:
            event["name"] = "n" * 5_000_000
        out.append(orjson.dumps(event))
    path = tmp_path / "huge.jsonl"
    path.write_bytes(b"\n".join(out) + b"\n")
    return path


def test_the_diff_names_the_change_and_lays_out_no_huge_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Laying a 5 MB value out for the terminal (markup escaping, cell widths) cost
    seconds; the command hands rich at most a terminal line of any value."""
    import rich.markup

    longest = [0]
    real_escape = rich.markup.escape

    def escape(text: str, *args: object) -> str:
        longest[0] = max(longest[0], len(text))
        return real_escape(text)

    monkeypatch.setattr(rich.markup, "escape", escape)
    path = _huge_name(tmp_path)
    d = diff_runs(SAMPLE, path)
    assert d.first_divergence is not None and d.first_divergence.a_step == 1
    assert main(["diff", str(SAMPLE), str(path)]) == 1
    out = capsys.readouterr().out
    assert "nnnnnnnn" in out and "only A has 'search_orders" in out
    assert len(out) < 20_000
    assert 0 < longest[0] <= 1_000
    assert main(["diff", "--json", str(SAMPLE), str(path)]) == 1
    assert len(capsys.readouterr().out) > 5_000_000  # JSON carries the values whole
