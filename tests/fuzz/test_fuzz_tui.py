"""Seeded fuzz: the debugger on corrupt traces, driven by Pilot.

A trace that cannot be opened at all is one ``RegistaError`` (the command prints it); one
that opens is browsed and compared with keys, and must never crash the app.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from mutate import Failures, Variant, base_seed, iterations, mutations
from tui.waits import settle

from regista_tui.__main__ import open_index
from regista_tui.app import RegistaApp

_BROWSE = ["j", "j", "j", "end", "x", "x", "k", "home", "pagedown", "colon", "3", "enter"]
_SEARCH = ["slash", "e", "r", "r", "enter", "n", "N", "escape"]
_COMPARE = ["j", "n", "n", "N", "end", "home"]


async def _browse(path: Path) -> None:
    index, notice = open_index(path)
    app = RegistaApp(index, notice=notice, settle_s=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for key in _BROWSE + _SEARCH:
            await pilot.press(key)
        await settle(pilot)


async def _compare(a: Path, b: Path) -> None:
    app = RegistaApp(compare=(a, b))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for key in _COMPARE:
            await pilot.press(key)
        await settle(pilot)


async def _run(failures: Failures, where: str, variant: Variant, coro: Any) -> None:
    async def call() -> None:
        await coro

    from regista import RegistaError

    try:
        await call()
    except RegistaError:
        pass
    except Exception as exc:
        failures.found.setdefault((where, type(exc).__name__), []).append(
            f"{variant.how}: {str(exc)[:200]}"
        )


async def test_pilot_sessions_never_crash(seed_traces: dict[str, bytes], tmp_path: Path) -> None:
    failures = Failures()
    # a variant's Pilot sessions take about as long as 30 of the CLI fuzz's variants
    for i, variant in enumerate(mutations(seed_traces, iterations(2, cost=30), base_seed() + 3)):
        original = tmp_path / f"o{i}.jsonl"
        original.write_bytes(seed_traces[variant.name])
        path = tmp_path / f"v{i}.jsonl"
        path.write_bytes(variant.data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await _run(failures, "browser", variant, _browse(path))
            await _run(failures, "compare", variant, _compare(original, path))
        original.unlink()
        path.unlink()
    assert not failures.found, failures.report()
