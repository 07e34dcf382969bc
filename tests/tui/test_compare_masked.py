"""The two-run view marks each pair that differs only in masked values (its verdict is
``masked``), and the pair's detail says so, as ``regista diff --masks`` does."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from builders import simple_agent
from shown import text_of
from waits import settle, until

from regista.cli.main import main
from regista_tui.app import RegistaApp
from regista_tui.screens.compare import CompareScreen
from regista_tui.widgets.diff.pair_list import MASKED_MARK, PairList

PROMPT = "You are a greeter. Build {build}, started {when}."


async def _record(folder: Path, build: str, when: str) -> Path:
    agent = simple_agent(folder, instructions=PROMPT.format(build=build, when=when))
    return (await agent.run("Weather?")).trace_path


async def test_pairs_that_differ_only_in_masked_values_are_marked(tmp_path: Path) -> None:
    a = await _record(tmp_path / "a", "8f3a91c2", "2026-11-30T09:12:44Z")
    b = await _record(tmp_path / "b", "77b2c0de", "2026-12-01T17:03:09Z")
    learned = tmp_path / "learned.toml"
    assert (
        await asyncio.to_thread(main, ["masks", "learn", str(a), str(b), "-o", str(learned)]) == 0
    )
    shutil.copy(learned, a.parent / "masks.toml")  # the masks beside run A are read

    app = RegistaApp(compare=(a, b))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.diff
                    is not None, "the runs aligned")  # fmt: skip
        pairs = app.screen.query_one(PairList)
        assert [pairs.verdict(i) for i in range(pairs.row_count())] == [
            "masked", "exact", "masked", "exact", "masked"
        ]  # fmt: skip
        assert str(pairs.row_text(0, 100)).startswith(MASKED_MARK)
        pairs.move_to(0)
        await until(pilot, lambda: "masked" in text_of(app, "#pair-detail"), "the detail shown")
        detail = text_of(app, "#pair-detail")
        assert "only masked values differ" in detail and "'8f3a91c2'" in detail
