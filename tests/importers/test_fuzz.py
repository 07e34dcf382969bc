"""Seeded fuzzing of the importers: any input gives runs that load, or one clear error."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from regista.errors import RegistaError
from regista.importers import convert
from regista.trace.reader import Trace

from .cc_fixtures import basic_session, inline_subagent, text, tool_use
from .codex_fixtures import basic_rollout, codex_0171_rollout, spawning_rollout
from .fuzzing import CASES, mutate, rng_for


def _claude_code_seed() -> bytes:
    s = basic_session()
    s.compact("Summary so far.")
    s.prompt("Now explore", isMeta=False)
    s.answer(tool_use("toolu_T9", "Task", prompt="look around", description="d"))
    inline_subagent(s, "look around", "nothing here", start=50)
    s.tool_result("toolu_T9", [text("nothing here")])
    return s.data()


def _codex_seed() -> bytes:
    r = basic_rollout()
    r.line("compacted", {"message": "S", "replacement_history": [{"type": "message"}]})
    r.line("response_item", {"type": "web_search_call", "action": {"query": "q"}})
    r.line("event_msg", {"type": "exec_command_end", "call_id": "call_A", "exit_code": 2})
    r.lines.extend(spawning_rollout().lines[1:])  # a spawn_agent call and its subagent's id
    r.lines.extend(codex_0171_rollout().lines[1:])  # token_usage_record, additional_tools
    return r.data()


def _otlp_seed() -> bytes:
    """A plain agent's spans (OpenLLMetry, OpenInference, the SDK's own), one export
    request per line, as `regista import otlp` reads a file of them."""
    import orjson

    from .test_otlp import _plain_agent_body

    body = _plain_agent_body()
    return b"\n".join(orjson.dumps({"resourceSpans": [rs]}) for rs in body["resourceSpans"])


SEEDS = {"claude-code": _claude_code_seed, "codex": _codex_seed, "otlp": _otlp_seed}


@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_fuzzed_transcripts_convert_to_valid_traces(fmt: str, tmp_path: Path) -> None:
    seed = SEEDS[fmt]()
    rng = rng_for(fmt)
    path = tmp_path / "t.jsonl"
    for case in range(CASES):
        data = mutate(rng, seed)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                conv = convert(fmt, path, data)
        except RegistaError:
            continue
        except Exception as exc:  # pragma: no cover - the failure report
            raise AssertionError(
                f"case {case}: {type(exc).__name__}: {exc}\n{data[:3000]!r}"
            ) from exc
        for run in conv.runs:
            try:
                Trace.from_bytes(run.to_bytes(), path).steps()
            except RegistaError as exc:
                raise AssertionError(
                    f"case {case}: an invalid trace: {exc}\n{data[:3000]!r}"
                ) from exc


SAMPLE = Path(__file__).resolve().parents[2] / "sample_traces" / "refund_happy.jsonl"


def test_fuzzed_files_open_as_a_run_or_say_one_clear_error(tmp_path: Path) -> None:
    """``regista.open_run`` on any bytes (a changed transcript of each format, or trace):
    it tells a format, and the run it opens reads whole and lazily, or says one error
    (whether the readers agree on what they read is the readers' own test)."""
    from regista import open_run

    seeds = [SEEDS[fmt]() for fmt in sorted(SEEDS)] + [SAMPLE.read_bytes()]
    rng = rng_for("open_run")
    path = tmp_path / "t.jsonl"
    for case in range(CASES):
        data = mutate(rng, rng.choice(seeds))
        path.write_bytes(data)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                opened = open_run(path)
                opened.trace(messages=False).step_groups()
                index = opened.index()
                try:
                    index.scan()
                finally:
                    index.close()
        except RegistaError:
            continue
        except Exception as exc:  # pragma: no cover - the failure report
            raise AssertionError(
                f"case {case}: {type(exc).__name__}: {exc}\n{data[:3000]!r}"
            ) from exc
