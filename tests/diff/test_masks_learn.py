"""``regista masks learn``, masks in tape tests and harness replays, and each step's verdict."""

from __future__ import annotations

import asyncio
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from builders import simple_agent

from regista.cli.main import main
from regista.diff.learn import learn_masks
from regista.diff.masks import DIVERGED, EXACT, MASKED, MaskSet, load_mask_file, verdict_counts
from regista.testing import TapeMismatch, play_tape
from regista.trace.reader import Trace

PROMPT = "You are a greeter. Build {build}, started {when} in {tmp}."


async def _record(folder: Path, build: str, when: str, tmp: str) -> Path:
    agent = simple_agent(folder, instructions=PROMPT.format(build=build, when=when, tmp=tmp))
    result = await agent.run("Weather?")
    return result.trace_path


@pytest.fixture
async def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    a = await _record(tmp_path / "a", "8f3a91c2", "2026-11-30T09:12:44Z", "/tmp/run-a81x")
    b = await _record(tmp_path / "b", "77b2c0de", "2026-12-01T17:03:09Z", "/tmp/run-q02k")
    return a, b


async def test_learn_finds_the_varying_values_with_their_evidence(
    two_runs: tuple[Path, Path],
) -> None:
    learned = learn_masks([Trace.load(p) for p in two_runs])
    assert learned.paired == 3 and learned.parted is None and learned.real == []
    kinds = sorted(m.name for m in learned.masks)
    assert kinds == ["hex", "temp-path", "timestamp"], kinds
    for m in learned.masks:
        assert m.evidence.startswith("step 0, system: ") and " in " in m.evidence
    # the masks make the two runs' requests equal, and keep everything else
    masks = MaskSet(learned.masks)
    form = {
        "system": PROMPT.format(build="0badc0de", when="2027-01-01T00:00:00Z", tmp="/tmp/run-x9")
    }
    masked, hits = masks.apply({**form, "messages": []})
    assert len(hits) == 3
    assert masked["system"].startswith("You are a greeter. Build «masked:hex»")


async def test_a_real_change_is_reported_not_masked(tmp_path: Path) -> None:
    a = await _record(tmp_path / "a", "8f3a91c2", "2026-11-30T09:12:44Z", "/tmp/a")
    agent = simple_agent(tmp_path / "b", instructions="You are a poet. Build 77b2c0de.")
    b = (await agent.run("Weather?")).trace_path
    learned = learn_masks([Trace.load(a), Trace.load(b)])
    assert learned.real, "another prompt is a real difference"
    assert any("'greeter'" in r or "greeter" in r for r in learned.real), learned.real


async def test_masks_learn_writes_a_file_that_turns_diverged_into_masked(
    two_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_runs
    out = tmp_path / "masks.toml"
    assert main(["masks", "learn", str(a), str(b), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "learned 3 masks from 3 model calls of 2 runs" in printed
    text = out.read_text()
    assert text.count("[[mask]]") == 3 and "evidence = " in text
    masks = load_mask_file(out)  # a person can read and edit it: it reads back

    # today's run: another build, time and folder
    today = PROMPT.format(build="1234abcd", when="2026-12-02T05:00:00Z", tmp="/tmp/run-zz9")
    agent = simple_agent(tmp_path / "c", instructions=today)
    with pytest.raises(TapeMismatch) as info:
        await play_tape(a, agent)
    assert "diverged at step 0" in str(info.value)
    assert info.value.verdicts == {0: DIVERGED}

    result = await play_tape(a, simple_agent(tmp_path / "d", instructions=today), masks=out)
    assert result.verdicts == {0: MASKED, 1: EXACT, 2: MASKED, 3: EXACT, 4: MASKED}
    assert verdict_counts(result.verdicts) == "2 exact, 3 masked"

    # a real change of prompt still diverges, masks or not
    changed = today.replace("greeter", "poet")
    with pytest.raises(TapeMismatch) as info:
        await play_tape(a, simple_agent(tmp_path / "e", instructions=changed), masks=out)
    assert "greeter" in str(info.value) and "poet" in str(info.value)
    assert "«masked" not in str(info.value).split("request.system")[0]
    assert len(masks) == 3


def test_regista_test_reports_verdicts_in_its_lines_and_junit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a = asyncio.run(_record(tmp_path / "a", "8f3a91c2", "2026-11-30T09:12:44Z", "/tmp/run-a8"))
    b = asyncio.run(_record(tmp_path / "b", "77b2c0de", "2026-12-01T17:03:09Z", "/tmp/run-q0"))
    masks = tmp_path / "learned.toml"
    assert main(["masks", "learn", str(a), str(b), "-o", str(masks)]) == 0
    today = PROMPT.format(build="1234abcd", when="2026-12-02T05:00:00Z", tmp="/tmp/run-zz9")
    (tmp_path / "today_agent.py").write_text(
        "from builders import simple_agent\n"
        "from pathlib import Path\n"
        f"agent = simple_agent(Path({str(tmp_path / 'live')!r}), instructions={today!r})\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    capsys.readouterr()
    junit = tmp_path / "report.xml"
    code = main(["test", str(a), "--agent", "today_agent:agent", "--junit", str(junit)])
    assert code == 1
    assert "verdicts: 1 diverged" in capsys.readouterr().out
    code = main(
        ["test", str(a), "--agent", "today_agent:agent", "--masks", str(masks),
         "--junit", str(junit)]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "PASS" in printed and "2 exact, 3 masked" in printed
    case = ET.parse(junit).getroot().find("testsuite/testcase")
    assert case is not None
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["verdicts"] == "2 exact, 3 masked"
    assert props["step 0"] == "masked" and props["step 1"] == "exact"


async def test_runs_that_part_learn_only_before_they_part(tmp_path: Path) -> None:
    from builders import SIMPLE_SCRIPT, by_turn

    from regista.providers import ScriptedProvider

    a = await _record(tmp_path / "a", "8f3a91c2", "2026-11-30T09:12:44Z", "/tmp/a")
    short = [SIMPLE_SCRIPT[0], SIMPLE_SCRIPT[2]]  # no forecast: the path parts at step 3
    agent = simple_agent(
        tmp_path / "b",
        instructions=PROMPT.format(build="77b2c0de", when="2026-12-01T17:03:09Z", tmp="/tmp/b"),
        provider=ScriptedProvider(by_turn(short)),
    )
    b = (await agent.run("Weather?")).trace_path
    learned = learn_masks([Trace.load(a), Trace.load(b)])
    assert learned.parted == 3  # a: tool get_forecast at step 3, b: its final answer
    assert learned.paired == 2


def test_learn_needs_two_recordings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = Path(__file__).parents[2] / "sample_traces" / "refund_happy.jsonl"
    assert main(["masks", "learn", str(one)]) == 2
    assert "two or more recordings" in capsys.readouterr().err


def test_an_id_keeps_its_fixed_prefix_only() -> None:
    from regista.diff.learn import _spans

    a = "order ord_8f3a91 placed; see /tmp/run-a81x/out.json"
    b = "order ord_8a77c0 placed; see /tmp/run-a02k/out.json"
    from regista.diff.learn import Learned, _learn_span, _masks

    seen: dict = {}
    learned = Learned()
    for span in _spans(a, b):
        assert _learn_span(span, 0, "system", "a", "b", seen, learned)
    masks = MaskSet(_masks(seen))
    c = "order ord_3bbbbb placed; see /tmp/run-zz/out.json"
    masked, hits = masks.apply({"system": c, "messages": []})
    assert sorted(h.value for h in hits) == ["3bbbbb", "zz/out.json"], masked


async def test_regista_diff_gives_each_step_its_verdict(
    two_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import orjson

    a, b = two_runs
    masks = tmp_path / "m.toml"
    assert main(["masks", "learn", str(a), str(b), "-o", str(masks)]) == 0
    capsys.readouterr()
    main(["diff", str(a), str(b), "--no-masks", "--json"])
    data = orjson.loads(capsys.readouterr().out)
    assert data["verdicts"] == {"exact": 2, "masked": 0, "diverged": 3}
    main(["diff", str(a), str(b), "--masks", str(masks), "--json"])
    data = orjson.loads(capsys.readouterr().out)
    assert [p["verdict"] for p in data["pairs"]] == [
        "masked", "exact", "masked", "exact", "masked"
    ]  # fmt: skip
    main(["diff", str(a), str(b), "--masks", str(masks)])
    text = capsys.readouterr().out
    assert "Verdicts: 2 exact, 3 masked" in text
    assert text.count("masked") >= 3


def test_the_pytest_plugins_player_takes_masks(tmp_path: Path) -> None:
    from regista.testing.plugin import TapePlayer

    a = asyncio.run(_record(tmp_path / "a", "8f3a91c2", "2026-11-30T09:12:44Z", "/tmp/run-a8"))
    b = asyncio.run(_record(tmp_path / "b", "77b2c0de", "2026-12-01T17:03:09Z", "/tmp/run-q0"))
    assert main(["masks", "learn", str(a), str(b), "-o", str(tmp_path / "m.toml")]) == 0
    today = PROMPT.format(build="1234abcd", when="2026-12-02T05:00:00Z", tmp="/tmp/run-zz9")
    agent = simple_agent(tmp_path / "c", instructions=today)
    player = TapePlayer(tmp_path, masks="m.toml")  # as --regista-masks m.toml gives it
    result = player.play(a, agent)
    assert "masked" in result.verdicts.values()
    assert (
        TapePlayer(tmp_path).try_play(a, simple_agent(tmp_path / "d", instructions=today))[0]
        is None
    )
