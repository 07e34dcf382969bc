"""Trace size: a realistic growing session, as regista records it and as a vcrpy cassette.

The session (bench/realistic_session.py: ~2 KB system prompt, 8 tool schemas, 3 KB ± 50 %
tool results, 200 model calls, every request carrying the whole history) runs once through
the real ``anthropic`` SDK against a fake Messages API on 127.0.0.1, inside a vcrpy cassette:
the same calls give both the regista trace and the cassette. Also shown: the same trace
written as schema 1 (every request's system prompt, tools and tool results written whole),
and that the trace grows linearly (400 scripted calls take about twice the bytes of 200).

    python bench/bench_trace_size.py [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

from realistic_session import TASK, make_agent, model_answer

from regista.providers.anthropic import AnthropicProvider
from regista.trace.reader import Trace


def schema_1_size(path: Path) -> int:
    """The bytes of the same trace written as schema 1: every request whole."""
    total = 0
    for ev in Trace.load(path).events:
        data = ev.model_dump(mode="json")
        data["schema_version"] = 1
        total += len(orjson.dumps(data)) + 1
    return total


async def record_both(folder: Path, calls: int) -> tuple[Path, Path]:
    """Run the session through the SDK, recorded by vcrpy and by regista."""
    import vcr  # bench-only dependency (the dev extra)
    from fakes.anthropic_server import FakeAnthropicServer

    cassette = folder / "session.yaml"
    with FakeAnthropicServer() as server:
        server.answer_with(lambda body: model_answer(body["messages"], calls))
        provider = AnthropicProvider(
            "claude-sonnet-4-6", api_key="sk-ant-bench", base_url=server.url, max_retries=0
        )
        recorder = vcr.VCR(record_mode="all", filter_headers=["x-api-key", "authorization"])
        with recorder.use_cassette(str(cassette)):
            result = await make_agent(folder / "traces", provider, calls).run(TASK)
    return result.trace_path, cassette


def scripted_size(folder: Path, calls: int) -> int:
    result = make_agent(folder / f"scripted-{calls}", calls=calls).run_sync(TASK)
    return result.trace_path.stat().st_size


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        trace, cassette = asyncio.run(record_both(folder, args.calls))
        t, c, v1 = trace.stat().st_size, cassette.stat().st_size, schema_1_size(trace)
        assert len(Trace.load(trace).llm_calls()) == args.calls
        small = scripted_size(folder, args.calls)
        large = scripted_size(folder, 2 * args.calls)

    def mb(n: int) -> str:
        return f"{n / 1e6:8.2f} MB"

    rows: list[tuple[str, Any, str]] = [
        ("vcrpy cassette (anchor)", mb(c), "1×"),
        ("regista trace, schema 1", mb(v1), f"{c / v1:.1f}× smaller"),
        ("regista trace", mb(t), f"{c / t:.1f}× smaller (target ≥ 50×)"),
    ]
    print(f"a growing {args.calls}-call session through the anthropic SDK")
    for name, size, ratio in rows:
        print(f"  {name:<26} {size}   {ratio}")
    print(f"  schema 2 / schema 1: {t / v1:.2f}")
    print(f"linear growth: {2 * args.calls} calls / {args.calls} calls = {large / small:.2f} (≈2)")


if __name__ == "__main__":
    main()
