"""Redaction measured: recall on secret shapes, false positives on realistic traces, and the
cost of redacting as a trace is written.

- **Recall**: every shape of the corpus (tests/core/redact_corpus.py: the shapes that once
  leaked and one sample per pattern of the rule files), each in ``--variants`` random
  variants (its letters and digits past the first eight drawn again, of the same class),
  put in the middle of a piece of real code and written as a tool result by the trace
  writer. A shape is caught when its secret is not in the written line.
- **False positives**: realistic content without secrets, written as tool results by a
  redacting writer: source code (the installed packages' own ``.py`` files), base64 images
  (PNG bytes, random past the header), hashes (git-log lines of SHA-1s, SHA-256 hex, the
  ``sha256=`` lines of installed packages' RECORD files, UUIDs, pip ``--hash`` lines) and
  the sample traces' events. Every marker in the output is a false positive; the kinds and
  a few of them are printed.
- **Write cost**: the same events written by a writer that redacts and one that does not,
  in alternating rounds, in CPU time of the thread; the ratio of the medians, per kind of
  content and overall.

    python bench/bench_redact.py [--mb 2] [--variants 20] [--rounds 7]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import random
import re
import statistics
import sys
import sysconfig
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "core"))

from redact_corpus import BY_RULE, ISSUE_SHAPES  # noqa: E402

from regista.trace.events import ToolResult  # noqa: E402
from regista.trace.writer import TraceWriter  # noqa: E402

_MARKER = re.compile(rb"\[REDACTED:([a-z_0-9]+)\]")


def _site() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def code_pieces(mb: float) -> list[str]:
    """Real source files of the installed packages, whole, in a fixed order."""
    out, size = [], 0
    for name in ("anthropic", "openai", "starlette", "httpx", "pydantic", "textual", "rich"):
        for path in sorted((_site() / name).rglob("*.py")):
            text = path.read_text(errors="replace")
            out.append(text)
            size += len(text)
            if size > mb * 1e6:
                return out
    return out


def image_pieces(mb: float, rng: random.Random) -> list[list[dict[str, Any]]]:
    """Tool results holding a base64 PNG each (a real header, random bytes after)."""
    out, size = [], 0
    header = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    while size < mb * 1e6:
        raw = header + rng.randbytes(rng.randint(20_000, 200_000))
        data = base64.b64encode(raw).decode()
        size += len(data)
        out.append(
            [
                {"type": "text", "text": "screenshot.png"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": data},
                },
            ]
        )
    return out


def hash_pieces(mb: float, rng: random.Random) -> list[str]:
    """Output of tools that print hashes: git log, sha256sum, RECORD files, lock files."""
    out, size = [], 0
    records = sorted(_site().glob("*.dist-info/RECORD"))
    i = 0
    while size < mb * 1e6:
        lines = []
        kind = i % 4
        for n in range(200):
            seed = rng.randbytes(16)
            if kind == 0:
                sha = hashlib.sha1(seed).hexdigest()
                lines.append(f"commit {sha}\nAuthor: Dev <dev@example.com>\n\n    fix #{n}\n")
            elif kind == 1:
                lines.append(f"{hashlib.sha256(seed).hexdigest()}  dist/pkg-{n}.tar.gz")
            elif kind == 2:
                lines.append(f"req-{n}==1.{n} --hash=sha256:{hashlib.sha256(seed).hexdigest()}")
            else:
                lines.append(f"{uuid.UUID(bytes=seed)} {hashlib.md5(seed).hexdigest()}")
        if records:
            lines.append(records[i % len(records)].read_text(errors="replace"))
        text = "\n".join(lines)
        out.append(text)
        size += len(text)
        i += 1
    return out


def sample_trace_pieces() -> list[str]:
    return [p.read_text() for p in sorted((ROOT / "sample_traces").glob("*.jsonl"))]


def _vary(secret: str, rng: random.Random) -> str:
    """``secret`` with its letters and digits past the first eight drawn again."""
    chars = list(secret)
    hexy = all(c in "0123456789abcdefABCDEF-" for c in secret)
    for i in range(8, len(chars)):
        c = chars[i]
        if hexy and c.isalnum():
            chars[i] = rng.choice("0123456789abcdef")
        elif c.isdigit():
            chars[i] = rng.choice("0123456789")
        elif c.islower() and c.isascii():
            chars[i] = rng.choice("abcdefghijklmnopqrstuvwxyz")
        elif c.isupper() and c.isascii():
            chars[i] = rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    return "".join(chars)


def _writer(path: Path, redact: bool) -> TraceWriter:
    return TraceWriter(path, "01JZZZZZZZZZZZZZZZZZZZZZZZ", redact=redact)


def _result(n: int, content: Any) -> dict[str, Any]:
    return {"step": n, "tool_use_id": f"toolu_{n}", "name": "read_file", "content": content}


def recall(variants: int, code: list[str], rng: random.Random, tmp: Path) -> None:
    cases = [*ISSUE_SHAPES, *BY_RULE.values()]
    caught: Counter[str] = Counter()
    total: Counter[str] = Counter()
    missed = []
    path = tmp / "recall.jsonl"
    w = _writer(path, True)
    for n, (text, kind, secret) in enumerate(cases * variants):
        varied = _vary(secret, rng) if n >= len(cases) else secret
        text = text.replace(secret, varied)
        piece = rng.choice(code)
        at = rng.randint(0, len(piece))
        at = piece.rfind("\n", 0, at) + 1
        content = piece[:at] + text + "\n" + piece[at:]
        before = path.stat().st_size if path.exists() else 0
        w.append(ToolResult, _result(n, content))
        line = path.read_bytes()[before:]
        total[kind] += 1
        if varied.encode() in line:
            missed.append((kind, varied))
        else:
            caught[kind] += 1
    w.close()
    n_all, n_caught = sum(total.values()), sum(caught.values())
    print(f"recall: {n_caught}/{n_all} shapes caught ({n_caught / n_all:.1%})")
    for kind in sorted(total):
        if caught[kind] != total[kind]:
            print(f"  {kind}: {caught[kind]}/{total[kind]}")
    for kind, secret in missed[:10]:
        print(f"  missed {kind}: {secret[:60]}")


def false_positives(corpora: dict[str, list[Any]], tmp: Path) -> None:
    for name, pieces in corpora.items():
        path = tmp / f"fp-{name}.jsonl"
        w = _writer(path, True)
        for n, content in enumerate(pieces):
            w.append(ToolResult, _result(n, content))
        w.close()
        data = path.read_bytes()
        kinds = Counter(m.group(1).decode() for m in _MARKER.finditer(data))
        mb = len(data) / 1e6
        found = ", ".join(f"{k} {v}" for k, v in kinds.most_common()) or "none"
        print(f"false positives in {name} ({mb:.1f} MB): {sum(kinds.values())} ({found})")
        for m in list(_MARKER.finditer(data))[:3]:
            print(f"    …{data[max(0, m.start() - 50) : m.end() + 20]!r}")


def write_cost(corpora: dict[str, list[Any]], rounds: int, tmp: Path) -> None:
    print("write cost, redacting / not (CPU time of the thread, median of rounds):")
    totals = {True: [], False: []}  # type: dict[bool, list[float]]
    for name, pieces in corpora.items():
        times: dict[bool, list[float]] = {True: [], False: []}
        for r in range(rounds):
            for redact in (r % 2 == 0, r % 2 == 1):
                path = tmp / f"cost-{name}-{redact}.jsonl"
                path.unlink(missing_ok=True)
                w = _writer(path, redact)
                t0 = time.thread_time()
                for n, content in enumerate(pieces):
                    w.append(ToolResult, _result(n, content))
                times[redact].append(time.thread_time() - t0)
                w.close()
        on, off = statistics.median(times[True]), statistics.median(times[False])
        totals[True].append(on)
        totals[False].append(off)
        print(f"  {name:<14} {on * 1e3:8.1f} ms / {off * 1e3:8.1f} ms = {on / off:.2f}x")
    on, off = sum(totals[True]), sum(totals[False])
    print(f"  {'all':<14} {on * 1e3:8.1f} ms / {off * 1e3:8.1f} ms = {on / off:.2f}x")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=float, default=2.0, help="MB of each kind of content")
    p.add_argument("--variants", type=int, default=20, help="random variants of each shape")
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args(argv)
    rng = random.Random(26)
    code = code_pieces(args.mb)
    corpora: dict[str, list[Any]] = {
        "code": code,
        "base64 images": image_pieces(args.mb, rng),
        "hashes": hash_pieces(args.mb, rng),
        "sample traces": sample_trace_pieces(),
    }
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        recall(args.variants, code, rng, tmp)
        false_positives(corpora, tmp)
        write_cost(corpora, args.rounds, tmp)


if __name__ == "__main__":
    main()
