"""Seeded fuzz: the ``--variants`` file of ``regista sweep`` and the sweep file.

Whatever a variants file holds, reading it gives variants or one clear
:class:`InvalidEditError` line; whatever a sweep file holds, reading it gives a sweep or
one :class:`TraceError` line (never a traceback), and a fork's paths never leave the
sweep's folder.
"""

from __future__ import annotations

import random
import traceback
from pathlib import Path
from typing import Any

import orjson
from mutate import base_seed, iterations

from regista.errors import InvalidEditError, TraceError
from regista.sweep import load_sweep, parse_variants_file

_GOOD_VARIANTS: list[Any] = [
    {"kind": "tool_result", "content": '{"matches": []}', "label": "empty"},
    {"kind": "tool_result", "content": "timeout", "is_error": True},
    {"kind": "tool_result", "content": [{"type": "text", "text": "x"}], "at_step": 3},
    {"kind": "model_answer", "content": "I could not find it."},
    {"kind": "model_answer", "content": [{"type": "tool_use", "name": "t", "input": {}}]},
    {"kind": "model", "model": "claude-haiku-4-5"},
]

_ODD: list[Any] = [
    None,
    True,
    0,
    -1,
    2**70,
    1.5,
    "",
    " ",
    "x",
    "💥\u0000",
    [],
    {},
    [1, None],
    {"type": "text"},
    [{"type": 3}],
    [{"type": "tool_use", "input": "{"}],
    "tool_result",
    "model_answer",
    "model",
    "../../etc/passwd",
    "/abs",
]
_KEYS = ["kind", "content", "is_error", "label", "at_step", "model", "stop_reason", "edit"]


def _mutate(rng: random.Random, value: Any, depth: int = 0) -> Any:
    """``value`` with a few parts replaced, removed or added."""
    if isinstance(value, dict) and value and rng.random() < 0.7:
        out = dict(value)
        key = rng.choice([*out, *_KEYS])
        roll = rng.random()
        if roll < 0.3:
            out.pop(key, None)
        elif roll < 0.8 or depth > 3:
            out[key] = rng.choice(_ODD)
        else:
            out[key] = _mutate(rng, out.get(key), depth + 1)
        return out
    if isinstance(value, list) and value and rng.random() < 0.7:
        out_list = list(value)
        i = rng.randrange(len(out_list))
        roll = rng.random()
        if roll < 0.3:
            del out_list[i]
        elif roll < 0.6:
            out_list[i] = _mutate(rng, out_list[i], depth + 1)
        else:
            out_list.insert(i, rng.choice(_ODD))
        return out_list
    return rng.choice(_ODD) if rng.random() < 0.5 else value


def _bytes(rng: random.Random, data: Any) -> bytes:
    import json

    raw = json.dumps(data).encode()  # big integers too, as a person's file may hold
    roll = rng.random()
    if roll < 0.1 and raw:
        i = rng.randrange(len(raw))
        raw = raw[:i]  # cut
    elif roll < 0.2 and raw:
        i = rng.randrange(len(raw))
        raw = raw[:i] + bytes([rng.randrange(256)]) + raw[i + 1 :]
    return raw


def test_any_variants_file_reads_as_variants_or_one_clear_error() -> None:
    rng = random.Random(base_seed())
    failures: list[str] = []
    read = refused = 0
    for n in range(iterations(400)):
        items = [rng.choice(_GOOD_VARIANTS) for _ in range(rng.randint(0, 4))]
        data: Any = items
        for _ in range(rng.randint(0, 3)):
            data = _mutate(rng, data)
        if rng.random() < 0.1:
            data = {"variants": data}
        raw = _bytes(rng, data)
        at = rng.choice([None, 0, 1, 5])
        try:
            variants = parse_variants_file(raw, "v.json", at)
            for v in variants:
                assert (
                    v.label
                    and v.at_step >= 0
                    and v.kind in ("tool_result", "model_answer", "model")
                )
                orjson.dumps(v.to_dict())
            read += 1
        except InvalidEditError as exc:
            assert str(exc).startswith("v.json") and "\n" not in str(exc), str(exc)
            refused += 1
        except Exception:
            failures.append(
                f"seed {base_seed()} variant {n}: {raw[:300]!r}\n{traceback.format_exc()}"
            )
    assert not failures, "\n".join(failures[:3])
    assert read and refused  # both kinds of file were tried


def _sweep_doc() -> dict[str, Any]:
    return {
        "schema": "regista.sweep/1",
        "id": "01K0000000000000000000000",
        "parent": "/tmp/parent.jsonl",
        "parent_session_id": "01J0000000000000000000000",
        "at_step": 1,
        "created": "2026-07-02T09:30:00Z",
        "ended": "2026-07-02T09:31:00Z",
        "cancelled": False,
        "pid": 1,
        "agent": None,
        "command": ["python", "agent.py"],
        "verify": "true",
        "forks": [
            {
                "n": 1,
                "variant": {"label": "empty", "at_step": 1, **_GOOD_VARIANTS[0]},
                "status": "done",
                "dir": "fork-1",
                "trace": "fork-1/a.jsonl",
                "traces": ["fork-1/a.jsonl"],
                "exit_code": 0,
                "error": None,
                "verify": {"exit_code": 0, "passed": True, "log": "fork-1/verify.log"},
                "log": "fork-1/fork.log",
                "started": "x",
                "ended": "y",
            }
        ],
    }


def test_any_sweep_file_reads_as_a_sweep_or_one_clear_error(tmp_path: Path) -> None:
    rng = random.Random(base_seed() + 1)
    target = tmp_path / "sweep.json"
    failures: list[str] = []
    read = refused = 0
    for n in range(iterations(300)):
        data: Any = _sweep_doc()
        for _ in range(rng.randint(0, 4)):
            if (
                rng.random() < 0.5
                and isinstance(data, dict)
                and isinstance(data.get("forks"), list)
            ):
                data["forks"] = _mutate(rng, data["forks"])
            else:
                data = _mutate(rng, data)
        raw = _bytes(rng, data)
        target.write_bytes(raw)
        try:
            sweep = load_sweep(target)
            for fork in sweep.forks:
                for rel in (fork.trace, fork.log, *fork.traces, fork.dir):
                    if rel is not None:
                        assert (tmp_path / rel).resolve().is_relative_to(tmp_path.resolve())
                sweep.to_dict()
            read += 1
        except TraceError as exc:
            assert str(exc) and "\n" not in str(exc), str(exc)
            refused += 1
        except Exception:
            failures.append(
                f"seed {base_seed()} variant {n}: {raw[:300]!r}\n{traceback.format_exc()}"
            )
    assert not failures, "\n".join(failures[:3])
    assert read and refused
