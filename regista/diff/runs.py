"""The diff of two runs: their steps aligned, each pair classified, field-level changes.

``diff_runs(a, b)`` answers "where and how did these two sessions go different ways?".

**Signatures.** Every step gets a signature: its kind plus what identifies it.

- A *tool* step: the tool name and its input (canonical JSON).
- A *model* step: the messages that are new in its request, i.e. the ``messages`` that the
  ``llm.request`` event stores after ``messages_prefix`` (the previous answer and the tool
  results it led to; the task, for the first call).
- A *compaction*: the messages it replaced.

``tool_use`` ids are made by the model at run time and differ from run to run, so inside a
signature they are renamed by order of appearance within that step (``#0``, ``#1``, …):
two runs that make the same calls in the same order have the same signatures. Only the
signature is hashed for every step, straight from the events (no full request is
rebuilt), so a diff costs one pass over both runs plus the alignment.

**Alignment.** The two signature sequences are aligned with Myers' minimal diff
(:mod:`regista.diff.align`), so an extra or missing step shifts nothing after it. Inside each gap
between two exactly-matched steps, the leftover steps are aligned again on a coarser key,
the kind (and the tool name for tool steps), so that a step whose input changed pairs up
with its counterpart in the other run instead of showing as a deletion plus an insertion.
A call to a *different* tool is a different step, not a changed one.

**Classification** of each aligned pair, first rule that applies:

- ``insert`` / ``delete``: only run B / only run A has the step.
- ``changed_config`` (model steps): model, ``max_tokens``, sampling params, tool schemas,
  ``tool_choice`` or the system prompt differ between the two requests. It takes
  precedence over the input because a different configuration changes every request it
  touches.
- ``changed_input``: the signature differs (the new messages of a model step, the input of
  a tool call, the messages a compaction replaced).
- ``changed_config`` (compactions): same replaced messages, different summarising request
  (its model or ``max_tokens``).
- ``changed_decision``: same input, different output. A model answer (content with
  renamed ids, ``stop_reason``, ``stop_sequence``) or its error; a tool result (content,
  ``is_error``), the permission decision (allowed, reason); a compaction's summary.
- ``same``: none of the above. Response ids, usage, cost, timing, timestamps and whether
  a step was live or served from a recording never count.

:attr:`AlignedPair.changes` gives the field-level differences (computed on demand, with
:func:`regista.diff.structural.structural_diff`), e.g. ``request.system``,
``request.messages[3].content[0].text``, ``response.content[0].text``, ``tool.input.query``,
``result.content``.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import orjson

from regista import open_run
from regista._gc import paused_gc
from regista.diff.align import align_levels
from regista.diff.runfile import RunFile, StepFacts
from regista.diff.steps import DiffKind, classify, signature, step_changes, step_summary
from regista.diff.structural import Change
from regista.trace.formats import OpenedRun
from regista.trace.reader import Trace
from regista.trace.steps import Step
from regista.vocab import KINDS, LABELS

__all__ = [
    "KINDS",
    "LABELS",
    "AlignedPair",
    "DiffKind",
    "Divergence",
    "RunDiff",
    "diff_runs",
    "step_summary",
]

# -- the result ---------------------------------------------------------------------------


class AlignedPair:
    """One row of the diff: a step of run A, of run B, or one of each.

    The steps carry their events; their ``request`` is not rebuilt (a diff never needs the
    full history): ``RunDiff.a.request_for(pair.a.request_event)`` gives it for a loaded
    trace. A diff of two files decodes a pair's steps only when they are asked for.

    Attributes:
        a: The step in run A (``None`` for an insert).
        b: The step in run B (``None`` for a delete).
        kind: How the two differ, see the module docs.
    """

    __slots__ = ("__dict__", "_a", "_b", "_fa", "_fb", "_run_a", "_run_b", "kind")

    def __init__(
        self,
        a: Step | None,
        b: Step | None,
        kind: DiffKind,
        *,
        lazy: tuple[RunFile | None, StepFacts | None, RunFile | None, StepFacts | None]
        | None = None,
    ) -> None:
        self._a, self._b, self.kind = a, b, kind
        self._run_a, self._fa, self._run_b, self._fb = lazy or (None, None, None, None)

    @property
    def a(self) -> Step | None:
        return _side(self._a, self._run_a, self._fa)

    @property
    def b(self) -> Step | None:
        return _side(self._b, self._run_b, self._fb)

    def __repr__(self) -> str:
        return f"AlignedPair(a_step={self.a_step}, b_step={self.b_step}, kind={self.kind!r})"

    @property
    def label(self) -> str:
        """The kind as people read it, e.g. ``changed · decision``."""
        return LABELS[self.kind]

    @property
    def a_step(self) -> int | None:
        if self._fa is not None:
            return self._fa.index
        return self._a.index if self._a is not None else None

    @property
    def b_step(self) -> int | None:
        if self._fb is not None:
            return self._fb.index
        return self._b.index if self._b is not None else None

    @property
    def step_kind(self) -> str:
        """``model``, ``tool`` or ``compaction``."""
        for step in (self._fa, self._a, self._fb, self._b):
            if step is not None:
                return step.kind
        raise AssertionError("a pair without a step")

    @cached_property
    def changes(self) -> list[Change]:
        """Field-level differences (A is the old side, B the new); empty when ``same``."""
        a, b = self.a, self.b
        if self.kind == "same":
            return []
        if a is None:
            assert b is not None
            return [Change("step", "added", new=step_summary(b))]
        if b is None:
            return [Change("step", "removed", old=step_summary(a))]
        return step_changes(a, b)

    def to_dict(self, *, changes: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "label": self.label,
            "step_kind": self.step_kind,
            "a_step": self.a_step,
            "b_step": self.b_step,
            "a": step_summary(self.a) if self.a is not None else None,
            "b": step_summary(self.b) if self.b is not None else None,
        }
        if changes and self.kind != "same":
            out["changes"] = [c.to_dict() for c in self.changes]
        return out


def _side(step: Step | None, run: RunFile | None, facts: StepFacts | None) -> Step | None:
    """``step``, or for a pair made lazily, the step ``run`` reads for ``facts``."""
    if step is None and facts is not None:
        assert run is not None
        return run.step(facts)
    return step


@dataclass(frozen=True)
class Divergence:
    """Where two runs first differ.

    Attributes:
        index: Position of the pair in :attr:`RunDiff.pairs`.
        pair: The pair itself.
    """

    index: int
    pair: AlignedPair

    @property
    def kind(self) -> DiffKind:
        return self.pair.kind

    @property
    def label(self) -> str:
        return self.pair.label

    @property
    def a_step(self) -> int | None:
        return self.pair.a_step

    @property
    def b_step(self) -> int | None:
        return self.pair.b_step

    @property
    def changes(self) -> list[Change]:
        return self.pair.changes

    def __repr__(self) -> str:
        # Short: the steps carry whole events, far too much for a prompt or a log line.
        return f"Divergence(a_step={self.a_step}, b_step={self.b_step}, kind={self.kind!r})"

    def describe(self, a_label: str = "A", b_label: str = "B") -> str:
        """E.g. ``step 3 in A, step 3 in B: changed · decision``."""
        where = []
        if self.a_step is not None:
            where.append(f"step {self.a_step} in {a_label}")
        if self.b_step is not None:
            where.append(f"step {self.b_step} in {b_label}")
        only = ""
        if self.kind in ("insert", "delete"):
            only = f" (only {b_label if self.kind == 'insert' else a_label} has it)"
        return f"{', '.join(where)}: {self.label}{only}"

    def to_dict(self) -> dict[str, Any]:
        return {"pair": self.index, **self.pair.to_dict()}


@dataclass(eq=False)
class RunDiff:
    """Two runs aligned step by step (see the module docs for the rules).

    Attributes:
        a: Run A (the "old" side of every change): the loaded :class:`Trace` it was given,
            or, for a path, the :class:`RunFile` it was read from (``path``, ``start``,
            ``end``, ``session_id``; its steps are decoded when a pair is looked at).
        b: Run B, likewise.
        pairs: The aligned steps, in order.
    """

    a: Trace | RunFile
    b: Trace | RunFile
    pairs: list[AlignedPair] = field(default_factory=list)

    @cached_property
    def differences(self) -> list[int]:
        """Indices in :attr:`pairs` of the pairs that are not ``same``, for navigation."""
        return [i for i, p in enumerate(self.pairs) if p.kind != "same"]

    @cached_property
    def counts(self) -> dict[DiffKind, int]:
        """How many pairs of each kind (every kind present, zeros included)."""
        out = dict.fromkeys(KINDS, 0)
        for p in self.pairs:
            out[p.kind] += 1
        return out

    @property
    def identical(self) -> bool:
        """True when every pair is ``same``."""
        return not self.differences

    @property
    def first_divergence(self) -> Divergence | None:
        """The first pair that is not ``same``, or ``None`` when the runs agree."""
        return self.first()

    def first(self, *kinds: DiffKind) -> Divergence | None:
        """The first pair of one of ``kinds`` (any difference when none is given)."""
        for i in self.differences:
            if not kinds or self.pairs[i].kind in kinds:
                return Divergence(i, self.pairs[i])
        return None

    def next_difference(self, index: int) -> int | None:
        """The first difference after pair ``index``, if any."""
        k = bisect.bisect_right(self.differences, index)
        return self.differences[k] if k < len(self.differences) else None

    def previous_difference(self, index: int) -> int | None:
        """The last difference before pair ``index``, if any."""
        k = bisect.bisect_left(self.differences, index)
        return self.differences[k - 1] if k > 0 else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: both runs, the counts, the first divergence and every pair."""
        first = self.first_divergence
        return {
            "a": _run_info(self.a),
            "b": _run_info(self.b),
            "identical": self.identical,
            "counts": dict(self.counts),
            "first_divergence": first.to_dict() if first else None,
            "pairs": [p.to_dict() for p in self.pairs],
        }

    def to_json(self) -> str:
        return orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2).decode()


def _run_info(trace: Trace | RunFile) -> dict[str, Any]:
    end = trace.end
    return {
        "path": str(trace.path) if trace.path else None,
        "session_id": trace.session_id,
        "stop_reason": end.stop_reason if end else None,
    }


def _steps_of(trace: Trace) -> list[Step]:
    # A diff only needs the events: no full request is rebuilt.
    return trace.step_groups()


def _open(run: Trace | str | Path) -> Trace | OpenedRun:
    return run if isinstance(run, Trace) else open_run(run)


def _load(run: Trace | OpenedRun) -> Trace:
    return run if isinstance(run, Trace) else run.trace()


def _read(run: OpenedRun) -> RunFile | None:
    """The run read for a diff in place, or ``None`` when it is read whole (another tool's
    session, which is converted; a pipe, whose bytes were read to tell its format) or
    cannot be read (reading it whole says what is wrong)."""
    if not run.in_place or not run.path.is_file():
        return None
    runfile = RunFile(run.path)
    try:
        runfile.read(final=True)
    except BaseException:
        runfile.close()
        raise
    return runfile


def diff_runs(a: Trace | str | Path, b: Trace | str | Path, *, settled: bool = False) -> RunDiff:
    """Align the steps of two runs and classify every pair.

    Args:
        a: Run A, a loaded trace or a path.
        b: Run B, likewise.
        settled: Leave out the unfinished steps of a run that has no ``session.end`` (one
            still being written), when both are paths of regista traces, and align such a
            run from its beginning (see :func:`diff_files`, ``open_end``).

    Raises:
        TraceError: A path is not a readable trace.
    """
    # The diff allocates many small objects next to two loaded traces of possibly millions
    # of objects; a collection in the middle would walk them all. Nothing made here forms
    # reference cycles.
    with paused_gc():
        oa, ob = _open(a), _open(b)
        if not isinstance(oa, Trace) and not isinstance(ob, Trace):
            ra = _read(oa)
            rb = _read(ob) if ra is not None else None
            if ra is not None and rb is not None:
                return diff_files(ra, rb, settled=settled, open_end=settled)
            if ra is not None:
                ra.close()
        return _diff(_load(oa), _load(ob))


def diff_files(
    ra: RunFile, rb: RunFile, *, settled: bool = False, open_end: bool = False
) -> RunDiff:
    """Align two runs read with :class:`RunFile` (what they hold so far).

    Args:
        ra: Run A.
        rb: Run B.
        settled: Leave out the unfinished steps of a run that has no ``session.end``.
        open_end: A run B that has not ended is aligned from its beginning: its last steps
            are not matched with run A's last ones (a run that repeats itself, such as a
            loop, would otherwise have its steps so far paired with A's end), as B has not
            got there yet.
    """
    fa, fb = ra.steps(settled=settled), rb.steps(settled=settled)
    siga = [_key(f) for f in fa]
    sigb = [_key(f) for f in fb]
    pairs: list[AlignedPair] = []
    alignment = _aligned(siga, sigb, open_end and rb.end is None)
    for i, j, _level in alignment:
        if i is None:
            assert j is not None
            pairs.append(AlignedPair(None, None, "insert", lazy=(None, None, rb, fb[j])))
        elif j is None:
            pairs.append(AlignedPair(None, None, "delete", lazy=(ra, fa[i], None, None)))
        else:
            x, y = fa[i], fb[j]
            kind = _classify_facts(x, y)
            if kind is None:
                kind = classify(ra.step(x), rb.step(y), siga[i][0], sigb[j][0])
            pairs.append(AlignedPair(None, None, kind, lazy=(ra, x, rb, y)))
    return RunDiff(ra, rb, pairs)


def aligned_head(ra: RunFile, rb: RunFile, since: RunDiff | None = None) -> RunDiff:
    """The pairs of the steps that both runs begin with, as far as they were read (their
    finished steps with equal signatures, in order).

    Every alignment of the two runs begins with these pairs, however much more is read:
    a viewer can show them while the rest of two big runs is read.

    Args:
        ra: Run A.
        rb: Run B.
        since: The head of the same two runs found before: it is extended, not redone.
    """
    pairs = list(since.pairs) if since is not None else []
    sa, sb = ra.steps(settled=True), rb.steps(settled=True)
    for x, y in zip(sa[len(pairs) :], sb[len(pairs) :], strict=False):
        kx, ky = _key(x)[0], _key(y)[0]
        if kx != ky:
            break
        kind = _classify_facts(x, y) or classify(ra.step(x), rb.step(y), kx, ky)
        pairs.append(AlignedPair(None, None, kind, lazy=(ra, x, rb, y)))
    return RunDiff(ra, rb, pairs)


_NOT_YET = (b"\0not-yet", ("\0not-yet",))


def _aligned(
    siga: list[tuple[bytes, tuple[str, ...]]],
    sigb: list[tuple[bytes, tuple[str, ...]]],
    open_end: bool,
) -> list[tuple[int | None, int | None, int]]:
    """``align_levels`` of the two runs' keys; ``open_end``: B gets a last key that matches
    nothing (it is left out of the result), so no step of B is matched with A's end for
    being at B's end."""
    if not open_end:
        return align_levels(siga, sigb)
    end = len(sigb)
    return [p for p in align_levels(siga, [*sigb, _NOT_YET]) if p[1] != end]


def _key(facts: StepFacts) -> tuple[bytes, tuple[str, ...]]:
    if facts.key is None:  # an opener without what identifies it: never equal to another
        return (b"?" + id(facts).to_bytes(8, "little"), (facts.kind,))
    return facts.key


def _classify_facts(x: StepFacts, y: StepFacts) -> DiffKind | None:
    """The kind of two aligned steps when their facts settle it, else ``None``."""
    if x.same_as(y):
        return "same"
    differ = x.key is not None and y.key is not None and x.key[0] != y.key[0]
    if differ and (x.kind != "model" or x.config == y.config):
        return "changed_input"
    return None


def _diff(ta: Trace, tb: Trace) -> RunDiff:
    sa, sb = _steps_of(ta), _steps_of(tb)
    siga = [signature(s) for s in sa]
    sigb = [signature(s) for s in sb]
    pairs: list[AlignedPair] = []
    for i, j, _level in align_levels(siga, sigb):
        if i is None:
            assert j is not None
            pairs.append(AlignedPair(None, sb[j], "insert"))
        elif j is None:
            pairs.append(AlignedPair(sa[i], None, "delete"))
        else:
            kind = classify(sa[i], sb[j], siga[i][0], sigb[j][0])
            pairs.append(AlignedPair(sa[i], sb[j], kind))
    return RunDiff(ta, tb, pairs)
