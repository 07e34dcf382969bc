"""One TraceIndex shared by threads: a scan that follows a growing trace in one thread,
reads in others, with thread switches forced as often as the interpreter allows."""

from __future__ import annotations

import os
import random
import sys
import threading
from pathlib import Path

from regista.trace.index import TraceIndex
from regista.trace.reader import Trace
from regista.trace.recorder import TraceRecorder
from regista.types import LlmRequest, LlmResponse

#: Rounds of scan-while-reading; raise for a longer soak.
ROUNDS = int(os.environ.get("REGISTA_THREAD_ROUNDS", "3"))
PIECE = 2048


def _trace(path: Path, tool_steps: int = 600) -> Path:
    req = LlmRequest(model="m", messages=[{"role": "user", "content": "go"}])
    with TraceRecorder.create(path, "01THREADS", clock=lambda: "T") as rec:
        rec.start(task="go", model="m", provider="scripted")
        rec.model_step(req, LlmResponse(), provider="scripted", cost_usd=0.0)
        for i in range(tool_steps):
            rec.tool_step(f"toolu_{i}", "echo", {"i": i}, f"result {i} " + "x" * (i % 700))
        rec.end("end_turn")
    return path


class _Round:
    """A trace copied piece by piece into ``path`` and scanned after each piece, while
    readers check every line and step already indexed against the finished trace."""

    def __init__(self, source: Path, path: Path, seed: int) -> None:
        self.data = source.read_bytes()
        self.lines = self.data.split(b"\n")[:-1]
        self.steps = Trace.load(source).steps()
        path.write_bytes(self.data[:PIECE])
        self.path = path
        self.index = TraceIndex(path)
        self.errors: list[BaseException | str] = []
        self.done = threading.Event()
        self.seed = seed

    def grow_and_scan(self) -> None:
        try:
            with open(self.path, "ab") as out:
                for at in range(PIECE, len(self.data) + PIECE, PIECE):
                    self.index.scan()
                    out.write(self.data[at : at + PIECE])
                    out.flush()
            while not self.index.scan():
                pass
            self.index.scan()
        except BaseException as exc:
            self.errors.append(exc)
        finally:
            self.done.set()

    def read(self, k: int) -> None:
        rng = random.Random(self.seed * 10 + k)
        index = self.index
        last = False
        try:
            while not last:
                last = self.done.is_set()
                n = len(index.offsets)
                for _ in range(4 if n else 0):
                    i = rng.randrange(n)
                    if index.raw_line(i) != self.lines[i]:
                        self.errors.append(f"raw_line({i}) read another line")
                if len(index.steps) > 1:
                    pos = rng.randrange(len(index.steps) - 1)
                    if index.step(pos).events != self.steps[pos].events:
                        self.errors.append(f"step({pos}) differs from the reader's")
        except BaseException as exc:
            self.errors.append(exc)


def test_readers_and_a_scan_share_one_index(tmp_path: Path) -> None:
    source = _trace(tmp_path / "source.jsonl")
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for seed in range(ROUNDS):
            r = _Round(source, tmp_path / f"growing-{seed}.jsonl", seed)
            threads = [threading.Thread(target=r.grow_and_scan)]
            threads += [threading.Thread(target=r.read, args=(k,)) for k in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            r.index.close()
            assert r.errors == []
            assert len(r.index.offsets) == len(r.lines)
    finally:
        sys.setswitchinterval(old)
