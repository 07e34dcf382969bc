"""The result of a sweep as one table: a row for the parent, then one per fork.

Columns: variant, stop reason, steps, tokens, cost, time, verify, and where the fork first
diverged from the parent. The facts come from each run's ``session.end`` as every view
reads them (:func:`regista.store.runs.read_run`); the divergence from
:func:`regista.diff.diff_runs`. The edited step itself is where a fork was *made* to differ,
so it is not its divergence, and neither is a step that only saw the edit and answered as
the parent did: the first divergence is where the fork first *behaved* differently
(:func:`regista.diff.nway.fork_divergence`; ``none`` when it did what the parent did).

The same rows print as text (:func:`table_text`), as JSON (:func:`table_json`) and as a
JUnit report (:func:`write_junit`: a test case per fork, failed when its verify command
failed or the fork itself failed, skipped when it was cut short).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regista.errors import RegistaError
from regista.sweep.sweepfile import Fork, Sweep

__all__ = [
    "SweepRow",
    "first_divergence",
    "sweep_masks",
    "sweep_rows",
    "table_json",
    "table_text",
    "write_junit",
]


@dataclass
class SweepRow:
    """One line of the sweep's table (``fork`` is ``None`` for the parent's)."""

    name: str
    variant: str
    status: str
    stop_reason: str | None
    steps: int | None
    tokens: int | None
    cost_usd: float | None
    duration_ms: float | None
    verify: str
    divergence: str
    divergence_step: int | None
    trace: Path | None
    fork: Fork | None = None

    def to_dict(self) -> dict[str, Any]:
        from regista.pricing import round_cost

        out: dict[str, Any] = {
            "name": self.name,
            "variant": self.fork.variant.to_dict() if self.fork else None,
            "label": self.variant,
            "status": self.status,
            "stop_reason": self.stop_reason,
            "steps": self.steps,
            "tokens": self.tokens,
            "cost_usd": round_cost(self.cost_usd),
            "duration_ms": self.duration_ms,
            "verify": self.verify or None,
            "first_divergence": self.divergence or None,
            "first_divergence_step": self.divergence_step,
            "trace": str(self.trace) if self.trace else None,
        }
        if self.fork is not None:
            out["error"] = self.fork.error
        return out


def sweep_masks(sweep: Sweep) -> Any:
    """The masks the forks are compared through: the built-in ones and ``masks.toml``
    beside the parent, as ``regista diff`` reads them (the built-in ones alone when that
    file cannot be used: the sweep has run, its table is still shown)."""
    from regista.diff.masks import mask_set

    try:
        return mask_set(None, beside=sweep.parent_path().parent)
    except RegistaError:
        return mask_set(None)


def first_divergence(
    parent: Path, fork: Path, edited: set[int], masks: Any = None
) -> tuple[str, int | None]:
    """Where ``fork`` first behaved differently from ``parent`` other than at its ``edited``
    steps (:func:`regista.diff.nway.fork_divergence`): ``("step 2: changed · decision",
    2)`` (the fork's step, or the parent's for a step only it has), or ``("none", None)``."""
    from regista.diff import diff_runs
    from regista.diff.nway import divergence_text, fork_divergence

    div = fork_divergence(diff_runs(parent, fork, settled=True), edited, masks)
    step = None if div is None else (div.b_step if div.b_step is not None else div.a_step)
    return divergence_text(div), step


def _verify_text(fork: Fork) -> str:
    if fork.verify is None:
        return ""
    if fork.verify.get("exit_code") is None:
        return "cut short"
    return "pass" if fork.passed else f"fail ({fork.verify.get('exit_code')})"


def _row(name: str, variant: str, status: str, trace: Path | None, fork: Fork | None) -> SweepRow:
    from regista.store.runs import read_run

    row = SweepRow(name, variant, status, None, None, None, None, None, "", "", None, trace, fork)
    if trace is None:
        return row
    try:
        run = read_run(trace)
    except (OSError, ValueError):
        return row
    row.stop_reason = run.outcome if run.complete else None
    row.steps = run.steps
    row.tokens = run.tokens.total if run.complete else None
    row.cost_usd = run.cost_usd
    row.duration_ms = run.duration_ms
    return row


def sweep_rows(sweep: Sweep) -> list[SweepRow]:
    """The parent's row, then one per fork, in the sweep's order."""
    parent = sweep.parent_path()
    masks = sweep_masks(sweep)
    rows = [_row("parent", "(as recorded)", "done", parent, None)]
    for fork in sweep.forks:
        trace = sweep.fork_trace(fork)
        row = _row(f"fork {fork.n}", fork.variant.label, fork.shown_status, trace, fork)
        row.verify = _verify_text(fork)
        if fork.cut_short and row.stop_reason is None:
            row.stop_reason = "cut short"
        elif fork.status == "failed" and row.stop_reason is None:
            row.stop_reason = "failed"
        if trace is not None and fork.shown_status in ("done", "cut_short"):
            try:
                edited = set() if fork.variant.kind == "model" else {fork.variant.at_step}
                row.divergence, row.divergence_step = first_divergence(parent, trace, edited, masks)
            except RegistaError as exc:
                row.divergence = f"cannot compare: {exc}"[:80]
        rows.append(row)
    return rows


def _duration(ms: float | None) -> str:
    if ms is None:
        return ""
    return f"{ms / 1000:.2f} s"  # as regista show says a run's duration


def _cells(row: SweepRow) -> list[str]:
    from regista.vocab import cost_amount

    status = row.stop_reason or row.status
    if row.status == "cut_short" and status != "cut short":
        status += " (cut short)"
    return [
        row.name,
        row.variant,
        status,
        "" if row.steps is None else str(row.steps),
        "" if row.tokens is None else f"{row.tokens:,}",
        "" if row.stop_reason in (None, "cut short", "failed") else cost_amount(row.cost_usd),
        _duration(row.duration_ms),
        row.verify,
        row.divergence,
    ]


HEADERS = [
    "",
    "variant",
    "stop reason",
    "steps",
    "tokens",
    "cost",
    "time",
    "verify",
    "first divergence",
]


def table_cells(rows: list[SweepRow]) -> tuple[list[str], list[list[str]]]:
    """The table's headers and cells as text (what every view of the table shows)."""
    return HEADERS, [_cells(r) for r in rows]


def table_text(rows: list[SweepRow]) -> str:
    """The table as aligned columns of plain text."""
    headers, cells = table_cells(rows)
    keep = [i for i in range(len(headers)) if i < 4 or any(c[i] for c in cells)]
    widths = [max(len(headers[i]), *(len(c[i]) for c in cells)) for i in keep]
    lines = ["  ".join(headers[i].ljust(w) for i, w in zip(keep, widths, strict=True))]
    for c in cells:
        lines.append("  ".join(c[i].ljust(w) for i, w in zip(keep, widths, strict=True)))
    return "\n".join(line.rstrip() for line in lines)


def table_json(sweep: Sweep, rows: list[SweepRow]) -> dict[str, Any]:
    """The table for ``--json``: the sweep's links and a row per run."""
    return {
        "sweep": str(sweep.path),
        "parent": sweep.parent,
        "at_step": sweep.at_step,
        "cancelled": sweep.cancelled,
        "ended": sweep.ended is not None,
        "rows": [r.to_dict() for r in rows],
    }


def write_junit(sweep: Sweep, rows: list[SweepRow], target: str | Path) -> None:
    """A JUnit report: one test case per fork (failure: the fork failed or its verify
    command did; skipped: cut short)."""
    forks = [r for r in rows if r.fork is not None]
    failed = [r for r in forks if r.status == "failed" or r.verify.startswith("fail")]
    skipped = [r for r in forks if r.status == "cut_short"]
    suite = ET.Element(
        "testsuite",
        name=f"regista sweep {Path(sweep.parent).name} at step {sweep.at_step}",
        tests=str(len(forks)),
        failures=str(len(failed)),
        skipped=str(len(skipped)),
        errors="0",
    )
    for r in forks:
        case = ET.SubElement(
            suite,
            "testcase",
            classname="regista.sweep",
            name=f"{r.name}: {r.variant}",
            time=f"{(r.duration_ms or 0) / 1000:.3f}",
        )
        detail = (
            f"stop reason: {r.stop_reason}; steps: {r.steps}; "
            f"first divergence: {r.divergence or 'n/a'}; trace: {r.trace}"
        )
        if r.status == "cut_short":
            ET.SubElement(case, "skipped", message="cut short: the sweep was cancelled")
        elif r.status == "failed":
            error = r.fork.error if r.fork else None
            ET.SubElement(case, "failure", message=error or "the fork failed").text = detail
        elif r.verify.startswith("fail"):
            el = ET.SubElement(case, "failure", message=f"verify: {r.verify}")
            el.text = detail
        ET.SubElement(case, "system-out").text = detail
    root = ET.Element("testsuites")
    root.append(suite)
    ET.ElementTree(root).write(target, encoding="utf-8", xml_declaration=True)
