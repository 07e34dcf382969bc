"""``regista share``: the page's data is escaped, complete and self-contained."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import pytest
from builders import simple_agent
from hostile import HOSTILE, hostile_trace

from regista.cli.main import main
from regista.share import share_html
from regista.trace.reader import Trace


def _data(page: str) -> dict:  # type: ignore[type-arg]
    m = re.search(r'<script type="application/json" id="regista-data">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))  # type: ignore[no-any-return]


def test_hostile_content_stays_data(tmp_path: Path) -> None:
    page = share_html(hostile_trace(tmp_path))
    # exactly two script elements: the data block and the page's own script
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert "onerror=" not in page.split('id="regista-data">')[0]
    data = _data(page)
    assert HOSTILE in json.dumps(data, ensure_ascii=False) or "window.__pwned" in str(data)
    assert data["a"]["header"]["task"].startswith('Task "><svg')
    # nothing loads from anywhere
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", page)
    assert "default-src 'none'" in page


def test_every_step_is_there_with_its_request_diff(tmp_path: Path) -> None:
    path = simple_agent(tmp_path).run_sync("Weather in Paris?").trace_path
    trace = Trace.load(path)
    data = _data(share_html(path))["a"]
    assert [s["i"] for s in data["steps"]] == [st.index for st in trace.steps()]
    details = [json.loads(d) for d in data["details"]]
    first = details[0]["request"]
    assert first["first"] and first["system"] == "You are a greeter."
    second = next(d["request"] for d in details[1:] if d["request"])
    assert not second["first"] and second["kept"] >= 1 and second["new_messages"]
    assert data["header"]["outcome"] == "end_turn"


def test_two_runs_are_aligned(tmp_path: Path) -> None:
    a = simple_agent(tmp_path).run_sync("Weather in Paris?").trace_path
    b = simple_agent(tmp_path, instructions="You are terse.").run_sync("Weather in Paris?")
    data = _data(share_html(a, b.trace_path))
    assert data["pairs"] and {"a", "b", "kind", "label"} <= set(data["pairs"][0])
    assert data["pairs"][0]["kind"] != "same"  # the system prompt changed


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = simple_agent(tmp_path).run_sync("Weather?").trace_path
    assert main(["share", str(path)]) == 0
    assert path.with_suffix(".html").exists()
    out = tmp_path / "x.html"
    assert main(["share", str(path), str(path), "-o", str(out)]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert main(["share", str(tmp_path / "missing.jsonl")]) == 2
    assert main(["share", str(path), "-o", str(tmp_path / "no" / "dir" / "x.html")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(e.startswith("regista: ") for e in err)


def test_fuzz_hostile_strings_never_escape_the_data_block(tmp_path: Path) -> None:
    """Seeded: random mixes of markup in the task never make a third script tag."""
    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "1616")))
    pieces = ["<", ">", "</script", "<!--", "-->", "<script", "&", "\u2028", '"', "'", "\\", "/"]
    for n in range(int(os.environ.get("REGISTA_FUZZ_CASES", "25"))):
        task = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))
        agent = simple_agent(tmp_path / str(n))
        path = agent.run_sync(task).trace_path
        page = share_html(path)
        assert page.count("<script") == 2, task
        assert _data(page)["a"]["header"]["task"] == task
