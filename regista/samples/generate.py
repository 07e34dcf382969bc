"""Write the sample traces: ``python -m regista.samples.generate [OUTDIR]``.

Each sample is a real session of a sample agent with its offline demo model, on a fresh
shop database, with a fake clock and a fixed session id: regenerating gives byte-identical
files (a test checks the committed ones). Every sample says ``"synthetic": true`` in its
``session.start`` metadata.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ulid import ULID

from regista.agent import Agent
from regista.loop import FakeClock
from regista.samples import refund

__all__ = ["SAMPLES", "Sample", "generate", "main"]

DEFAULT_OUTDIR = Path("sample_traces")


@dataclass(frozen=True)
class Sample:
    """One sample trace: which agent, on which task, and what it shows."""

    name: str
    factory: Callable[..., Agent]
    task: str
    start: str
    about: str

    @property
    def session_id(self) -> str:
        """A fixed ULID: the sample's start time and a digest of its name."""
        ms = int(datetime.fromisoformat(self.start + "+00:00").timestamp() * 1000)
        tail = hashlib.sha256(self.name.encode()).digest()[:10]
        return str(ULID.from_bytes(ms.to_bytes(6, "big") + tail))


SAMPLES: tuple[Sample, ...] = (
    Sample(
        "refund_happy",
        refund.refund_agent,
        refund.TASK_HAPPY,
        "2026-07-02T09:00:00",
        "The refund agent finds the order, refunds it and emails the customer.",
    ),
    Sample(
        "refund_search_loop",
        refund.refund_agent_stale_index,
        refund.TASK_HAPPY,
        "2026-07-02T09:30:00",
        "The same task on a shop whose search index misses the order: the agent searches "
        "again and again until max_turns. Edit a search result to list ORD-1042 and fork.",
    ),
    Sample(
        "refund_denied_compaction",
        refund.refund_agent_small_context,
        refund.TASK_TWO_ORDERS,
        "2026-07-02T10:00:00",
        "Two orders: a parallel lookup where one id does not exist (a tool error), a "
        "refund the policy denies, and a context compaction.",
    ),
)


async def _run(sample: Sample, outdir: Path, workdir: Path) -> Path:
    agent = sample.factory(
        db_path=workdir / f"{sample.name}.sqlite",
        trace_dir=workdir,
        clock=FakeClock(start=sample.start, tick_ms=250),
        session_id=sample.session_id,
        metadata={"synthetic": True, "sample": sample.name, "about": sample.about},
    )
    result = await agent.run(sample.task)
    target = outdir / f"{sample.name}.jsonl"
    target.unlink(missing_ok=True)
    shutil.move(result.trace_path, target)
    return target


async def generate(outdir: str | Path = DEFAULT_OUTDIR) -> list[Path]:
    """Write every sample trace into ``outdir``; returns their paths."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="regista-samples-") as tmp:
        return [await _run(s, out, Path(tmp)) for s in SAMPLES]


def main(argv: list[str] | None = None) -> int:
    args: list[Any] = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1 or (args and args[0] in ("-h", "--help")):
        print("usage: python -m regista.samples.generate [OUTDIR]", file=sys.stderr)
        return 2
    for path in asyncio.run(generate(args[0] if args else DEFAULT_OUTDIR)):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
