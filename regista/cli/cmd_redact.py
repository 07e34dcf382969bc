"""``regista redact TRACE [-o OUT]``: a copy of a trace with its secrets replaced by markers."""

from __future__ import annotations

import argparse
import os
from collections import Counter
from pathlib import Path

import orjson

from regista.errors import UserError
from regista.redact import redact_bytes


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "redact",
        help="copy a trace with secret shapes (API keys, tokens, passwords) replaced",
        description="Write a copy of TRACE in which API keys, bearer tokens, AWS keys, "
        "passwords in URLs and private keys are replaced by [REDACTED:<kind>]. The copy "
        "replays like the original. TRACE itself is never changed.",
    )
    p.add_argument("trace", help="the trace to clean")
    p.add_argument("-o", "--output", metavar="FILE", help="the copy (default TRACE.redacted.jsonl)")
    p.set_defaults(func=run)


def redact_trace(src: Path, dst: Path) -> Counter[str]:
    """Write the redacted copy of ``src`` to ``dst`` (which must not exist).

    Request hashes that no longer match the redacted requests (a trace recorded before
    hashes were taken over redacted requests) are recomputed, so the copy replays.
    """
    from regista.trace.events import LlmRequestEvent
    from regista.trace.reader import Trace

    try:
        data = src.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {src}: {exc.strerror or exc}") from None
    found: Counter[str] = Counter()
    lines = [redact_bytes(line, found) for line in data.split(b"\n")]
    trace = Trace.from_bytes(b"\n".join(lines), src)
    for ev in trace.events:
        if isinstance(ev, LlmRequestEvent):
            real = trace.request_for(ev).hash
            if real != ev.request_hash:
                obj = orjson.loads(lines[ev.seq])
                obj["request_hash"] = real
                lines[ev.seq] = orjson.dumps(obj)
    try:
        fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise UserError(f"{dst} already exists (choose another with -o)") from None
    except OSError as exc:
        raise UserError(f"cannot write {dst}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "wb") as f:
        f.write(b"\n".join(lines))
    return found


def run(args: argparse.Namespace) -> int:
    src = Path(args.trace)
    dst = Path(args.output) if args.output else src.with_name(src.stem + ".redacted.jsonl")
    found = redact_trace(src, dst)
    what = ", ".join(f"{n} {kind}" for kind, n in sorted(found.items())) or "no secrets found"
    print(f"wrote {dst} ({what})")
    return 0
