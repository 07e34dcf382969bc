"""Learn masks from recordings of the same task: ``regista masks learn A B [C…]``.

Two runs of the same agent on the same task walk the same path (the same steps, the same
tools) and still differ: a tool returns a fresh id, the time, a duration, a temp folder;
the agent puts today's date in its prompt. A strict replay calls each such difference a
divergence. :func:`learn_masks` finds them and writes them as :class:`~regista.diff.masks.Mask`
s a person can read, edit and keep:

1. the runs' model requests are paired call by call while their paths agree (step kinds and
   tool names); past the first step where they part, nothing is learned;
2. each text leaf that differs (the system prompt, a message's text, a tool result) is cut
   into the spans that differ, widened to whole tokens;
3. a span is volatile when both sides are values of one kind — a uuid, a timestamp, a date,
   a time of day, a duration, a temp path, a prefixed or hex id, a number — and becomes a
   text mask: the kind's expression, after the literal text just before it (so that a
   number is masked where it was seen, not everywhere). Anything else (other words, another
   prompt) is a real difference and is reported, never masked.

Every mask carries one line of evidence: where it was seen and the two values. A mask is
only kept when it is needed: the learned set is checked to make the paired requests equal.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regista.diff.masks import Mask, MaskSet
from regista.diff.structural import structural_diff

__all__ = ["Learned", "learn_masks"]

#: The kinds of volatile value, most specific first: (name, expression, why).
_KINDS: tuple[tuple[str, str, str], ...] = (
    (
        "uuid",
        r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
        "a fresh uuid on every run",
    ),
    (
        "timestamp",
        r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?",
        "the time the run happened",
    ),
    ("date", r"\d{4}[-/]\d{2}[-/]\d{2}", "the day the run happened"),
    ("clock", r"\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?", "the time of day the run happened"),
    ("duration", r"\d+(?:\.\d+)?\s?(?:ms|µs|us|ns|s|sec|secs|seconds|min)", "how long it took"),
    (
        "temp-path",
        r"/(?:tmp|var/folders|private/var/folders)/[^\s\"'`,;)]*[^\s\"'`,;).]",
        "a temporary folder",
    ),
    ("id", r"[A-Za-z][A-Za-z0-9]*[_-][A-Za-z0-9]{6,}", "a fresh id on every run"),
    ("number", r"-?\d+(?:\.\d+)?", "a number that changes from run to run"),
    ("hex", r"[0-9a-fA-F]{8,}", "a fresh hash or id on every run"),
)
_COMPILED = [(name, re.compile(expr), expr, why) for name, expr, why in _KINDS]
#: Characters a volatile token is made of (a span that differs is widened over them).
_TOKEN = re.compile(r"[A-Za-z0-9_\-:./+µ]")
#: A text cut into tokens: runs of token characters, runs of spaces, any other character.
_TOKENS = re.compile(r"[A-Za-z0-9_\-:./+µ]+|\s+|.", re.DOTALL)
#: Text before a span kept as the mask's anchor (at most this many characters).
_ANCHOR = 24
#: A leaf of the digest form that the text masks read: the system prompt, a text block,
#: a string content, a tool result's content (string or text blocks).
_TEXT_PLACE = re.compile(
    r"system|messages\[\d+\]\.content(?:\[\d+\]\.(?:text|content(?:\[\d+\]\.text)?))?"
)


@dataclass
class Learned:
    """What :func:`learn_masks` found.

    Attributes:
        masks: The masks learned, each with its evidence.
        paired: How many model calls were compared.
        parted: The step where the runs' paths part (``None``: they never do).
        real: Differences no mask may cover (one line each): a changed prompt, other words.
    """

    masks: list[Mask] = field(default_factory=list)
    paired: int = 0
    parted: int | None = None
    real: list[str] = field(default_factory=list)


@dataclass
class _Seen:
    kind: str
    anchor: str
    expr: str
    why: str
    evidence: str
    count: int = 1


def learn_masks(traces: Sequence[Any], names: Sequence[str] | None = None) -> Learned:
    """The masks that make recordings of one task equal where only volatile values differ.

    Args:
        traces: Two or more :class:`~regista.trace.reader.Trace` s of the same task.
        names: How the evidence names each trace (default: its file name).
    """
    from regista.providers.replay import recorded_calls

    if len(traces) < 2:
        raise ValueError("masks are learned from two or more recordings of the same task")
    labels = list(names) if names is not None else [_label(t, i) for i, t in enumerate(traces)]
    learned = Learned()
    base = traces[0]
    base_calls = [c for c in recorded_calls(base) if c.kind == "model"]
    base_path = _path(base)
    seen: dict[tuple[str, str], _Seen] = {}
    pairs: list[tuple[int, dict[str, Any], dict[str, Any]]] = []
    real_at: set[tuple[int, str]] = set()
    for other, label in zip(traces[1:], labels[1:], strict=True):
        other_path = _path(other)
        parted = next(
            (i for i, (a, b) in enumerate(zip(base_path, other_path, strict=False)) if a != b),
            None,
        )
        if parted is None and len(base_path) != len(other_path):
            parted = min(len(base_path), len(other_path))
        if parted is not None:
            learned.parted = parted if learned.parted is None else min(learned.parted, parted)
        other_calls = [c for c in recorded_calls(other) if c.kind == "model"]
        for a, b in zip(base_calls, other_calls, strict=False):
            if parted is not None and max(a.step, b.step) >= parted:
                break
            ra, rb = a.request, b.request
            if ra is None or rb is None:
                continue
            fa, fb = _form(ra), _form(rb)
            pairs.append((a.step, fa, fb))
            learned.paired += 1
            for change in structural_diff(fa, fb, ""):
                old, new = change.old, change.new
                where = change.path
                if not (isinstance(old, str) and isinstance(new, str)):
                    real_at.add((a.step, where))
                    learned.real.append(f"step {a.step}, {change.describe(labels[0], label)}")
                    continue
                if not _TEXT_PLACE.fullmatch(where):
                    real_at.add((a.step, where))
                    learned.real.append(f"step {a.step}, {change.describe(labels[0], label)}")
                    continue
                for span in _spans(old, new):
                    if not _learn_span(span, a.step, where, labels[0], label, seen, learned):
                        real_at.add((a.step, where))
    learned.masks = _masks(seen)
    learned.real.extend(_unexplained(learned.masks, pairs, real_at))
    learned.real = list(dict.fromkeys(learned.real))
    return learned


def _label(trace: Any, i: int) -> str:
    path = getattr(trace, "path", None)
    return Path(path).name if path else f"run {i + 1}"


def _path(trace: Any) -> list[tuple[str, str | None]]:
    """A run's path: each step's kind and, for a tool step, the tool's name."""
    out: list[tuple[str, str | None]] = []
    for step in trace.steps():
        call = getattr(step, "tool_call", None)
        out.append((str(step.kind), getattr(call, "name", None)))
    return out


def _form(request: Any) -> dict[str, Any]:
    """What the masks read of a request: its system prompt and messages."""
    return {"system": request.system, "messages": request.messages}


@dataclass(frozen=True)
class _Span:
    old: str
    new: str
    before: str  # the text both share just before the span


def _spans(old: str, new: str) -> list[_Span]:
    """The tokens where ``old`` and ``new`` differ, paired one to one.

    The texts are compared token by token (runs of :data:`_TOKEN` characters, spaces, any
    other character), so a value that differs is always whole. A stretch where the two
    sides differ by a different number of tokens is one span of all of them (it is no
    single value: it will not be of one kind)."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    spans: list[_Span] = []
    last = (0, 0)  # where the text after the previous span starts, on each side
    pos_a = [0]
    for t in a:
        pos_a.append(pos_a[-1] + len(t))
    pos_b = [0]
    for t in b:
        pos_b.append(pos_b[-1] + len(t))
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        pairs = (
            list(zip(range(i1, i2), range(j1, j2), strict=True))
            if i2 - i1 == j2 - j1
            else [(-1, -1)]
        )
        for i, j in pairs:
            if i < 0:  # the whole stretch
                sa, ea, sb, eb = pos_a[i1], pos_a[i2], pos_b[j1], pos_b[j2]
            else:
                if a[i] == b[j]:
                    continue
                sa, ea, sb, eb = pos_a[i], pos_a[i + 1], pos_b[j], pos_b[j + 1]
                # a sentence's full stop or a label's colon is not part of the value
                while ea > sa + 1 and eb > sb + 1 and old[ea - 1] == new[eb - 1] in ".:":
                    ea, eb = ea - 1, eb - 1
            before = _anchor(old[last[0] : sa], new[last[1] : sb])
            spans.append(_Span(old[sa:ea], new[sb:eb], before))
            last = (ea, eb)
    return spans


def _anchor(a: str, b: str) -> str:
    """The text both sides share just before a span (after the span before it), on its
    line, at most :data:`_ANCHOR` characters, starting at a word when cut."""
    n = 0
    while n < min(len(a), len(b)) and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    shared = a[len(a) - n :].rsplit("\n", 1)[-1]
    if len(shared) > _ANCHOR:
        shared = shared[-_ANCHOR:]
        if " " in shared[:-1]:
            shared = shared[shared.index(" ") + 1 :]
    return shared


def _kind(a: str, b: str) -> tuple[str, str, str] | None:
    """The first kind both values are, in full: (name, expression, why)."""
    for name, regex, expr, why in _COMPILED:
        if regex.fullmatch(a) and regex.fullmatch(b):
            return name, expr, why
    return None


def _learn_span(
    span: _Span,
    step: int,
    where: str,
    first: str,
    other: str,
    seen: dict[tuple[str, str], _Seen],
    learned: Learned,
) -> bool:
    """Learn a mask for ``span`` if its two values are of one volatile kind (whether so)."""
    found = _kind(span.old, span.new)
    if found is None:
        learned.real.append(
            f"step {step}, {where}: {_q(span.old)} in {first}, {_q(span.new)} in {other}"
        )
        return False
    kind, expr, why = found
    # The literal prefix the two values share (``ord_``) belongs to the anchor.
    prefix = _common_prefix(span.old, span.new)
    # up to its last separator: "ord_8f" / "ord_8a" share "ord_8", but only "ord_" is fixed
    prefix = prefix[: max(prefix.rfind(c) for c in "_-/.:") + 1]
    if kind in ("id", "temp-path"):
        anchor = span.before + prefix
        expr = _rest_expr(kind, expr, prefix)
    else:
        anchor = span.before
    anchor = anchor[-_ANCHOR:]
    key = (kind, anchor)
    if key in seen:
        seen[key].count += 1
        return True
    evidence = f"step {step}, {where}: {_q(span.old)} in {first}, {_q(span.new)} in {other}"
    seen[key] = _Seen(kind, anchor, expr, why, evidence)
    return True


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _rest_expr(kind: str, expr: str, prefix: str) -> str:
    """The expression of what follows a shared literal prefix of a value."""
    if not prefix:
        return expr
    if kind == "temp-path":
        return r"[^\s\"'`,;)]*[^\s\"'`,;).]"
    if kind == "id":
        return r"[A-Za-z0-9_\-]{4,}"
    return expr


def _q(value: str, limit: int = 40) -> str:
    return repr(value if len(value) <= limit else value[: limit - 1] + "…")


def _masks(seen: dict[tuple[str, str], _Seen]) -> list[Mask]:
    masks: list[Mask] = []
    names: dict[str, int] = {}
    # the most context first: a mask anchored on a long text is the most specific
    for s in sorted(seen.values(), key=lambda s: -len(s.anchor)):
        n = names.get(s.kind, 0) + 1
        names[s.kind] = n
        name = s.kind if n == 1 else f"{s.kind}-{n}"
        # a value ends where its token ends ("took 3c21…" must not mask the start of a uuid)
        start = re.escape(s.anchor) if s.anchor else r"(?<![\w\-])"
        pattern = start + f"({s.expr})" + r"(?![\w\-])"
        more = f" (and {s.count - 1} more)" if s.count > 1 else ""
        masks.append(Mask(name, "text", pattern, f"learned: {s.why}", evidence=s.evidence + more))
    return masks


def _unexplained(
    masks: list[Mask],
    pairs: list[tuple[int, dict[str, Any], dict[str, Any]]],
    real_at: set[tuple[int, str]],
) -> list[str]:
    """What still differs once the learned masks apply, where only volatile values did (a
    mask that does not cover its value, say, because an anchor differs too)."""
    mask_set = MaskSet(masks)
    out: list[str] = []
    for step, a, b in pairs:
        ma, _ = mask_set.apply(a)
        mb, _ = mask_set.apply(b)
        for change in structural_diff(ma, mb, ""):
            if (step, change.path) not in real_at:
                out.append(f"step {step}, {change.path}: still differs once masked")
    return out
