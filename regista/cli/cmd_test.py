"""``regista test [PATHS…] [--agent module:attr] [--junit report.xml] [--masks FILE] [-- CMD]``.

Every ``*.jsonl`` trace found under PATHS is played against its agent (the trace's
``agent_ref`` unless ``--agent`` is given) under a strict replay. With ``-- CMD``, the agent
is any program (a Node agent, say): CMD runs once per trace with ``ANTHROPIC_BASE_URL`` and
``OPENAI_BASE_URL`` serving it strictly, and the tape fails where the program's calls left
the recorded path (:mod:`regista.server.verdict`: the message the TypeScript client's
``tapeTest`` fails with too). Prints one line per tape with its steps' verdicts (``exact``,
``masked``: equal once the masks are applied, ``diverged``) and a summary; writes a JUnit
XML report for CI (each step's verdict is a property of its tape's test case); exits 1 if
any tape fails.
"""

from __future__ import annotations

import argparse
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regista.cli.cmd_masks import add_mask_options, masks_from_args
from regista.diff.masks import verdict_counts
from regista.errors import NoSuchPathError, RegistaError, ReplayDivergence, UserError
from regista.testing import BrokenTape, play_tape
from regista.trace.reader import Trace

_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", ".regista", "__pycache__", ".tox"}


@dataclass
class Outcome:
    path: Path
    status: str  # passed, failed, error, skipped
    seconds: float
    message: str = ""
    steps: int = 0
    #: Each step's verdict: exact, masked or diverged.
    verdicts: dict[int, str] = field(default_factory=dict)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "test",
        help="play golden traces against the current agent (no key, $0)",
        description="Play every golden trace found under PATHS (default: .) against the "
        "current agent under a strict replay; exit 1 if any tape fails. With -- CMD, the "
        "agent is any program: CMD runs once per trace against a strict replay of it.",
        usage="regista test [PATH ...] [--agent M:A] [--junit FILE] [-- CMD [ARGS...]]",
    )
    p.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="traces or folders")
    p.add_argument("--agent", help="module:attr of the agent (default: each trace's agent_ref)")
    p.add_argument("--junit", metavar="FILE", help="write a JUnit XML report to FILE")
    add_mask_options(p)
    p.set_defaults(func=run)


def find_traces(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_file():
            found.append(p)
        elif p.is_dir():
            for f in sorted(p.rglob("*.jsonl")):
                # Skip tool folders below the given one, not the given one itself
                # (``regista test .regista/traces`` must find the traces there).
                if not any(part in _SKIP_DIRS for part in f.relative_to(p).parts):
                    found.append(f)
        else:
            raise NoSuchPathError(f"{p}: no such file or folder")
    return found


async def _play(path: Path, agent: str | None, masks: Any = None) -> Outcome:
    t0 = time.perf_counter()
    try:
        result = await play_tape(Trace.load(path), agent, masks=masks)
        return Outcome(
            path,
            "passed",
            time.perf_counter() - t0,
            steps=result.steps,
            verdicts=result.verdicts,
        )
    except RegistaError as exc:
        status = "failed" if isinstance(exc, ReplayDivergence | BrokenTape) else "error"
        verdicts = dict(getattr(exc, "verdicts", {}))
        return Outcome(path, status, time.perf_counter() - t0, str(exc), verdicts=verdicts)


def _play_command(path: Path, cmd: list[str], masks: Any = None) -> Outcome:
    """Play ``path`` to the program ``cmd`` under a strict replay (with ``masks``)."""
    import tempfile

    from regista.cli.sdk_child import replay_child
    from regista.server.verdict import tape_failure
    from regista.testing import check_tape

    t0 = time.perf_counter()
    try:
        check_tape(Trace.load(path))
        with tempfile.TemporaryFile("w+") as said:
            code, replay, _ = replay_child(path, cmd, mode="strict", masks=masks, output=said)
            said.seek(0)
            output = said.read()
    except RegistaError as exc:
        status = "failed" if isinstance(exc, BrokenTape) else "error"
        return Outcome(path, status, time.perf_counter() - t0, str(exc))
    seconds = time.perf_counter() - t0
    verdicts = dict(replay.verdicts)
    failure = tape_failure(replay)
    if failure is not None:
        return Outcome(path, "failed", seconds, failure, verdicts=verdicts)
    if code != 0:
        tail = "\n".join(output.strip().splitlines()[-5:])
        message = f"{path.name}: the command exited with code {code}"
        detail = f"{message}\n{tail}" if tail else message
        return Outcome(path, "error", seconds, detail, verdicts=verdicts)
    return Outcome(path, "passed", seconds, steps=len(replay.steps), verdicts=verdicts)


def write_junit(outcomes: list[Outcome], target: Path) -> None:
    suite = ET.Element(
        "testsuite",
        name="regista-tapes",
        tests=str(len(outcomes)),
        failures=str(sum(o.status == "failed" for o in outcomes)),
        errors=str(sum(o.status == "error" for o in outcomes)),
        skipped=str(sum(o.status == "skipped" for o in outcomes)),
        time=f"{sum(o.seconds for o in outcomes):.3f}",
    )
    for o in outcomes:
        case = ET.SubElement(
            suite, "testcase", classname="regista.tape", name=str(o.path), time=f"{o.seconds:.3f}"
        )
        if o.verdicts:
            props = ET.SubElement(case, "properties")
            ET.SubElement(props, "property", name="verdicts", value=verdict_counts(o.verdicts))
            for step, verdict in o.verdicts.items():
                ET.SubElement(props, "property", name=f"step {step}", value=verdict)
        if o.status in ("failed", "error"):
            tag = "failure" if o.status == "failed" else "error"
            el = ET.SubElement(case, tag, message=o.message.splitlines()[0] if o.message else "")
            el.text = o.message
        elif o.status == "skipped":
            ET.SubElement(case, "skipped", message=o.message)
    target.parent.mkdir(parents=True, exist_ok=True)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.ElementTree(root).write(target, encoding="utf-8", xml_declaration=True)


async def run(args: argparse.Namespace) -> int:
    traces = find_traces(args.paths)
    if not traces:
        print("regista: no traces (*.jsonl) found", file=sys.stderr)
        return 1
    cmd = getattr(args, "child_command", None)
    if cmd is not None and args.agent:
        raise UserError("--agent names a regista Agent; with -- CMD the command is the agent")
    outcomes: list[Outcome] = []
    masks_of: dict[Path, Any] = {}  # a folder's masks.toml, read once
    for i, path in enumerate(traces, start=1):
        folder = path.parent
        if folder not in masks_of:
            masks_of[folder] = masks_from_args(args, folder)
        o = (
            _play_command(path, cmd, masks_of[folder])
            if cmd is not None
            else await _play(path, args.agent, masks_of[folder])
        )
        outcomes.append(o)
        mark = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "skipped": "SKIP"}[o.status]
        detail = ""
        if o.status == "passed":
            detail = f" ({o.steps} steps: {verdict_counts(o.verdicts)}, {o.seconds * 1000:.0f} ms)"
        print(f"[{i}/{len(traces)}] {mark} {path}{detail}")
        if o.message and o.status != "passed":
            for line in o.message.splitlines():
                print(f"    {line}")
            if o.verdicts:
                print(f"    verdicts: {verdict_counts(o.verdicts)}")
    counts = {
        s: sum(o.status == s for o in outcomes) for s in ("passed", "failed", "error", "skipped")
    }
    summary = f"{counts['passed']} passed, {counts['failed']} failed"
    if counts["error"]:
        summary += f", {counts['error']} error{'s' if counts['error'] > 1 else ''}"
    if counts["skipped"]:
        summary += f", {counts['skipped']} skipped"
    print(summary)
    if args.junit:
        write_junit(outcomes, Path(args.junit))
        print(f"JUnit report: {args.junit}")
    return 1 if counts["failed"] or counts["error"] else 0
