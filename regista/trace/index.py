"""A lazy index of a trace file, for viewers of huge traces.

``Trace.load`` decodes and validates every event, which is right for replay but far too slow
for a person opening a 200 MB trace. :class:`TraceIndex` instead scans the file for line
offsets (reading the envelope from the first bytes of each line, where the writer puts
``schema_version, session_id, seq, ts, type, step``), groups the lines of each step, and
decodes a step's events only when asked, through a small LRU cache. ``session.start`` and
``session.end`` are decoded eagerly for a header.

The scan is incremental (:meth:`TraceIndex.scan` reads what was appended since the last
call), so the same index follows a trace that is still being written. Every read is an
``os.pread`` at an offset, with no shared file position, so one index can be scanned in one
thread while any number of others read the steps already indexed.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import threading
from array import array
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from regista._gc import paused_gc
from regista.errors import (
    NoSuchPathError,
    TraceError,
    TraceFormatError,
    UnsupportedSchemaVersion,
    torn_only_line,
)
from regista.trace import grouping
from regista.trace.formats import compressed_error, device_error, is_pipe
from regista.trace.grouping import (
    BYTES_RULES_BY_CODE,
    STEP_IN_HEAD,
    TYPE_IN_HEAD,
    NegativeStep,
    failed,
    opens,
)
from regista.trace.names import (
    CONTEXT_COMPACTION,
    LLM_REQUEST,
    LLM_RESPONSE,
    PERMISSION_DECISION,
    SCHEMA_VERSION,
    SESSION_END,
    SESSION_START,
    TOOL_CALL,
    TOOL_RESULT,
    USAGE_COUNTS,
    StepKind,
)

# The event models (pydantic) are imported where events are decoded, not with this module:
# a debugger draws its first screen from a scan before it needs them (see ``cold``).
if TYPE_CHECKING:
    from regista.trace.events import LlmRequestEvent, SessionEnd, SessionStart
    from regista.trace.reader import TraceSummary
    from regista.trace.steps import Step

__all__ = ["StepEntry", "StepList", "TraceIndex", "read_summary"]

_HEAD = 512
_CHUNK = 4 * 1024 * 1024
# Traces written by regista are compact JSON; tolerate white space from other writers.
_TYPE, _STEP = TYPE_IN_HEAD, STEP_IN_HEAD
_NAME = re.compile(rb'"name"\s*:\s*"((?:[^"\\]|\\.){0,200})"')
_TOOL_USE_ID = re.compile(rb'"tool_use_id"\s*:\s*("(?:[^"\\]|\\.){0,200}")')
# A compact request writes ``system`` (and ``tools``) right after ``model`` when it has them.
_MODEL = re.compile(rb'"model"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*("system")?')
# Where a tool result may say ``"is_error": true``: anywhere in its line (an importer writes
# it before the content, regista's writer after); the line is decoded to confirm it.
_IS_ERROR_KEY = b'"is_error"'
_TRUE = re.compile(rb"\s*:\s*true")
# Whether a decision allowed its call (read from the line whole when the head does not say).
_ALLOWED = re.compile(rb'"allowed"\s*:\s*(true|false)')
# The event types as the scan meets them: the bytes of a line's ``"type"``.
_B_LLM_REQUEST = LLM_REQUEST.encode()
_B_LLM_RESPONSE = LLM_RESPONSE.encode()
_B_TOOL_CALL = TOOL_CALL.encode()
_B_PERMISSION_DECISION = PERMISSION_DECISION.encode()
_B_TOOL_RESULT = TOOL_RESULT.encode()
_B_CONTEXT_COMPACTION = CONTEXT_COMPACTION.encode()
_B_SESSION_END = SESSION_END.encode()
# What a line adds to the run's tallies, and whether its usage and cost add up to the run's
# (regista.trace.grouping).
_COUNTS, _PRICED = grouping.COUNTS_BYTES, grouping.PRICED_BYTES


@dataclass
class StepEntry:
    """What the scan learnt about one step without decoding it.

    Attributes:
        index: The step number.
        kind: ``model``, ``tool`` or ``compaction``.
        lines: 0-based line numbers of the step's events, in order.
        tool: The tool name of a tool step (``None`` otherwise).
        error: An ``error`` event or an error tool result belongs to the step.
        denied: The policy denied the tool call.
        complete: The step's closing event (response / result) was seen.
    """

    index: int
    kind: StepKind
    lines: list[int] = field(default_factory=list)
    tool: str | None = None
    error: bool = False
    denied: bool = False
    complete: bool = False


# A step's kind is kept as its code, its facts as the flags of ``regista.trace.grouping``.
_KINDS, _KIND_CODE = grouping.KINDS, grouping.KIND_CODE
_ERROR, _DENIED, _COMPLETE = grouping.ERROR, grouping.DENIED, grouping.COMPLETE
#: Every value a step's flags may take.
_ALL = 31


class StepList(Sequence[StepEntry]):
    """The steps of an index, as columns: a :class:`StepEntry` is made when one is asked
    for (a copy: changing it changes nothing here).

    A trace's steps are many (a 1 GB transcript makes about a million): held as objects,
    a step and its list of line numbers cost about 400 bytes, and the lines' offsets and
    lengths as lists of ints 70 more a line, so the index of a big trace grew by 300 MB a
    GB. Here a step costs 26 bytes: its number, kind, flags and tool name (shared) in
    arrays, and its lines as a chain through one array of the trace's lines (the next line
    of the same step, 4 bytes a line; a step's lines are few).

    Appending (the scan, under the index's lock) writes a step's columns before its
    length is counted, and a line's link before the step's last line moves to it: a
    reader in another thread sees a step whole, or not yet.
    """

    def __init__(self) -> None:
        self._numbers = array("q")
        self._kinds = bytearray()
        self._flags = bytearray()
        self._tools: list[str | None] = []
        self._first = array("i")
        self._last = array("i")
        #: Per line of the trace: the next line of its step (-1: none, or no step).
        self._next = array("i")
        #: Positions of the steps whose number is not their position.
        self._odd: dict[int, int] = {}
        self._names: dict[str, str] = {}
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, pos: Any) -> Any:
        if isinstance(pos, slice):
            return [self._entry(p) for p in range(*pos.indices(self._len))]
        n = self._len
        if pos < 0:
            pos += n
        if not 0 <= pos < n:
            raise IndexError("step position out of range")
        return self._entry(pos)

    def __iter__(self) -> Iterator[StepEntry]:
        return (self._entry(p) for p in range(self._len))

    def __reversed__(self) -> Iterator[StepEntry]:
        return (self._entry(p) for p in range(self._len - 1, -1, -1))

    def __eq__(self, other: object) -> bool:
        """Equal to the steps of another list (or a list of entries) holding the same."""
        if isinstance(other, StepList | list):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # it changes as a scan appends

    def __repr__(self) -> str:
        return f"StepList({list(self)!r})"

    def _entry(self, pos: int) -> StepEntry:
        flags = self._flags[pos]
        return StepEntry(
            index=self._numbers[pos],
            kind=_KINDS[self._kinds[pos]],
            lines=self.lines(pos),
            tool=self._tools[pos],
            error=bool(flags & _ERROR),
            denied=bool(flags & _DENIED),
            complete=bool(flags & _COMPLETE),
        )

    def lines(self, pos: int) -> list[int]:
        """The line numbers of the step at ``pos``, in order."""
        at, last, nxt = self._first[pos], self._last[pos], self._next
        if at < 0:
            return []
        out = [at]
        while at != last:
            at = nxt[at]
            out.append(at)
        return out

    def kind(self, pos: int) -> StepKind:
        return _KINDS[self._kinds[pos]]

    def complete(self, pos: int) -> bool:
        return bool(self._flags[pos] & _COMPLETE)

    def position_of(self, number: int) -> int | None:
        """The position of step number ``number``."""
        if 0 <= number < self._len and self._numbers[number] == number:
            return number
        return self._odd.get(number)

    def flag_counts(self) -> dict[int, int]:
        """How many steps have each value of flags (``regista.trace.grouping``)."""
        flags = self._flags[: self._len]
        return {f: n for f in range(_ALL + 1) if (n := flags.count(f))}

    def counts(self) -> tuple[int, int, int]:
        """Steps with an error (a denied one counted as denied only), denied steps, and
        tool steps: what a header shows, without making an entry per step."""
        each = self.flag_counts()
        denied = sum(n for f, n in each.items() if f & _DENIED)
        errors = sum(n for f, n in each.items() if failed(f))
        return errors, denied, self._kinds[: self._len].count(_KIND_CODE["tool"])

    def marked(self) -> Iterator[tuple[int, StepKind, bool, bool]]:
        """``(position, kind, error, denied)`` of the compactions and the steps with an
        error or a denial (what a timeline marks), in order."""
        compaction = _KIND_CODE["compaction"]
        kinds, flags = self._kinds, self._flags
        for pos in range(self._len):
            f = flags[pos] & (_ERROR | _DENIED)
            if f or kinds[pos] == compaction:
                yield pos, _KINDS[kinds[pos]], bool(f & _ERROR), bool(f & _DENIED)

    # -- written by the scan -------------------------------------------------------------

    def append(self, entry: StepEntry) -> None:
        """Add a step (its lines must not belong to another step)."""
        lines = entry.lines
        pos = self._open(entry.index, entry.kind, lines[0] if lines else -1)
        for lineno in lines[1:]:
            self._add_line(pos, lineno)
        if entry.tool is not None:
            self._set_tool(pos, entry.tool)
        self._flags[pos] = (
            (_ERROR if entry.error else 0)
            | (_DENIED if entry.denied else 0)
            | (_COMPLETE if entry.complete else 0)
        )

    def _open(self, number: int, kind: StepKind, lineno: int) -> int:
        """A new step, whose first line is ``lineno`` (-1: none yet); its position."""
        pos = self._len
        self._numbers.append(number)
        self._kinds.append(_KIND_CODE[kind])
        self._flags.append(0)
        self._tools.append(None)
        self._first.append(lineno)
        self._last.append(lineno)
        nxt = self._next
        if len(nxt) <= lineno:
            nxt.extend([-1] * (lineno + 1 - len(nxt)))
        if number != pos:
            self._odd[number] = pos
        self._len = pos + 1
        return pos

    def _add_line(self, pos: int, lineno: int) -> None:
        nxt = self._next
        if len(nxt) <= lineno:
            nxt.extend([-1] * (lineno + 1 - len(nxt)))
        last = self._last[pos]
        if last < 0:
            self._first[pos] = lineno
        else:
            nxt[last] = lineno
        self._last[pos] = lineno

    def _set_tool(self, pos: int, name: str) -> None:
        self._tools[pos] = self._names.setdefault(name, name)


def pread(fd: int, length: int, offset: int) -> bytes:
    """``length`` bytes of ``fd`` at ``offset`` (fewer only at the end of the file).

    Reads at an offset without moving a file position, so threads may share ``fd``.
    """
    data = os.pread(fd, length, offset)
    if len(data) == length or not data:
        return data
    parts = [data]
    got = len(data)
    while got < length:
        more = os.pread(fd, length - got, offset + got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


def open_trace_file(path: Path) -> BinaryIO:
    """Open the trace at ``path`` for reading, binary (for readers that keep it open).

    Raises:
        TraceError: The file is missing, a directory or unreadable.
    """
    if path.is_dir():
        from regista.trace.lines import not_a_trace_file

        raise TraceError(not_a_trace_file(path))
    try:
        file = open(path, "rb")  # noqa: SIM115 - the caller keeps it open
    except FileNotFoundError:
        raise NoSuchPathError(f"{path}: no such trace file") from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot read ({exc.strerror})") from None
    with _closed_on_error(file):
        if (device := device_error(path, file.fileno())) is not None:
            raise TraceError(device)
        if not is_pipe(path):
            if (compressed := compressed_error(path, pread(file.fileno(), 8, 0))) is not None:
                raise TraceError(compressed)
            return file
        # A pipe can be read once, from the start: its bytes are kept in an unnamed
        # temporary file (gone when it is closed), which the index reads like any file.
        spool = tempfile.TemporaryFile()  # noqa: SIM115 - returned, kept open
        with _closed_on_error(spool):
            try:
                while chunk := file.read(1 << 20):
                    spool.write(chunk)
                spool.flush()
            except OSError as exc:
                raise TraceError(f"{path}: cannot read ({exc.strerror})") from None
        file.close()
        return spool


@contextlib.contextmanager
def _closed_on_error(file: BinaryIO) -> Iterator[None]:
    try:
        yield
    except BaseException:
        file.close()
        raise


class TraceIndex:
    """Line offsets and per-step groups of one trace file; steps decoded on demand.

    Args:
        path: The trace file.
        cache_size: How many decoded steps to keep.

    Raises:
        TraceError: The file is missing, a directory or unreadable (from the constructor).
    """

    def __init__(self, path: str | Path, *, cache_size: int = 256) -> None:
        self.path = Path(path)
        self._file = open_trace_file(self.path)
        self._fd = self._file.fileno()
        self._lock = threading.Lock()
        self._cache_lock = threading.Lock()
        #: Each line's offset and length (arrays: 16 bytes a line).
        self.offsets = array("q")
        self.lengths = array("q")
        self.steps = StepList()
        self.start: SessionStart | None = None
        self.end: SessionEnd | None = None
        #: Scan without decoding any event (set before the first scan): ``session.start``
        #: is checked as far as it can be without the event models (JSON, schema version,
        #: type) and kept raw in :attr:`start_data`; :meth:`warm` validates it (and a
        #: ``session.end`` met meanwhile) and ends the cold scan.
        self.cold = False
        #: The first line as written (a cold scan's ``session.start``, not validated yet).
        self.start_data: dict[str, Any] | None = None
        self._cold_end: int | None = None
        #: The file ends in a half-written line (kept out of the index until completed).
        self.truncated = False
        self.size = 0
        self._pos = 0
        self._cache: OrderedDict[int, Step] = OrderedDict()
        self._cache_size = cache_size
        # What a summary needs beyond the steps: the lines that carry usage and cost
        # (responses, compactions), and counts of events the steps do not hold.
        self._usage_lines = array("i")
        #: The run's tallies (regista.trace.grouping.COUNTS).
        self._tallies = [0] * grouping.TALLIES
        # The chunk being scanned, and its offset in the file.
        self._raw = b""
        self._raw_at = 0
        # Compact requests (schema 2) leave out what earlier lines hold: where to find it.
        self._context_line: int | None = None
        #: The request lines that write ``system`` (and ``tools``), in order: a request
        #: line that does not takes them from the last one before it.
        self._own_context = array("i")
        #: The line of each ``tool_use_id``'s result (a list when it has several).
        self._results: dict[str, int | list[int]] = {}
        self._context_cache: tuple[int, dict[str, Any]] | None = None

    # -- scanning ------------------------------------------------------------------------

    @property
    def scanned(self) -> int:
        """Bytes of the file indexed so far."""
        return self._pos

    def scan(self, max_bytes: int | None = None) -> bool:
        """Index lines appended since the last call (at most about ``max_bytes`` of them).

        Returns:
            True when the scan reached the current end of the file.

        Raises:
            TraceError: The file is empty or does not begin with ``session.start``.
            TraceFormatError: A complete line is not a valid event envelope.
            UnsupportedSchemaVersion: The trace is newer than this regista.
        """
        budget = max_bytes if max_bytes is not None else 1 << 62
        size = os.fstat(self._fd).st_size
        self.size = size
        stuck = False
        while self._pos < size and budget > 0:
            chunk = pread(self._fd, min(_CHUNK, size - self._pos, budget), self._pos)
            self._raw, self._raw_at = chunk, self._pos
            try:
                consumed = self._scan_chunk(chunk, self._pos)
            finally:
                self._raw = b""
            if consumed == 0 and len(chunk) < size - self._pos:  # a line longer than a chunk
                consumed = self._scan_long_line(self._pos, size)
            if consumed == 0:
                stuck = True
                break
            self._pos += consumed
            budget -= consumed
        self.truncated = stuck
        if not self.offsets:
            if size == 0:
                raise TraceError(f"{self.path}: empty trace (no events)")
            if stuck:
                raise torn_only_line(self.path)
        return self._pos >= size or stuck

    def _scan_long_line(self, pos: int, size: int) -> int:
        """Find the end of a line longer than one chunk; 0 when it is not complete yet."""
        end = pos
        while end < size:
            block = pread(self._fd, _CHUNK, end)
            if not block:
                break
            nl = block.find(b"\n")
            if nl >= 0:
                end += nl
                head = pread(self._fd, min(_HEAD, end - pos), pos)
                self._add_line(pos, end - pos, head)
                return end - pos + 1
            end += len(block)
        return 0

    def _scan_chunk(self, chunk: bytes, base: int) -> int:
        start = 0
        find = chunk.find
        while True:
            nl = find(b"\n", start)
            if nl < 0:
                return start
            if nl > start:
                self._add_line(base + start, nl - start, chunk[start : min(nl, start + _HEAD)])
            start = nl + 1

    def _add_line(self, offset: int, length: int, head: bytes) -> None:
        lineno = len(self.offsets)
        if lineno == 0 and self.cold:
            self.start_data = self._check_first(pread(self._fd, length, offset))
        elif lineno == 0:  # validate the first line whole: a newer schema says so first
            self._decode_line(offset, length, lineno)
        m = _TYPE.search(head)
        if m is None:
            self._decode_line(offset, length, lineno)  # says what is wrong: not JSON, …
            raise TraceFormatError(self.path, lineno + 1, "not a trace event (no type)")
        etype = m.group(1)
        if self.cold and etype == _B_SESSION_END:
            self._cold_end = lineno
        elif (lineno == 0 or etype == _B_SESSION_END) and not self.cold:
            from regista.trace.events import SessionEnd, SessionStart

            event = self._decode_line(offset, length, lineno)
            if lineno == 0 and not isinstance(event, SessionStart):
                raise TraceFormatError(self.path, 1, "a trace must begin with a session.start")
            if isinstance(event, SessionStart):
                self.start = event
            elif isinstance(event, SessionEnd):
                self.end = event
        if etype == _B_LLM_REQUEST:
            self._note_request(offset, length, lineno, head)
        elif etype == _B_TOOL_RESULT:
            self._note_result(lineno, head)
        with self._lock:
            self.offsets.append(offset)
            self.lengths.append(length)
            if etype in _PRICED:
                self._usage_lines.append(lineno)
            # What it adds to the run's tallies (regista.trace.grouping.COUNTS): the one
            # field a count reads is a decision's ``allowed``.
            refused = False
            count = _COUNTS.get(etype)
            if count is not None:
                if etype == _B_PERMISSION_DECISION:
                    # the writer's compact form first; else the key with white space, or
                    # the line
                    if b'"allowed":false' in head:
                        refused = True
                    elif b'"allowed":true' not in head:
                        refused = self._refused(offset, length, lineno, head)
                    self._tallies[count[0]] += refused
                elif not count[2]:
                    self._tallies[count[0]] += 1
            sm = _STEP.search(head)
            if sm is not None:
                number = int(sm.group(1))
            elif etype not in grouping.STEPLESS_BYTES:
                # Only an error may belong to no step: the reference says what is wrong
                # (no step, or null), or where the number is (past the head).
                number = self._decode_line(offset, length, lineno).step
            else:
                if count is not None and count[2]:  # counted only when of no step
                    self._tallies[count[0]] += 1
                return
            steps = self.steps
            # The step (regista.trace.grouping): begun by an opener of its number.
            pos = steps.position_of(number)
            if pos is None:
                try:
                    kind = opens(number, etype)
                except NegativeStep:  # refused in the reference's words
                    self._decode_line(offset, length, lineno)
                    raise
                if kind is None:  # an event of a step whose opener was lost
                    if count is not None and count[2]:
                        self._tallies[count[0]] += 1
                    return
                pos = steps._open(number, kind, lineno)
            else:
                steps._add_line(pos, lineno)
            if etype == _B_TOOL_CALL and steps._tools[pos] is None:  # its first call's
                nm = _NAME.search(head)
                steps._set_tool(pos, nm.group(1).decode("utf-8", "replace") if nm else "?")
            # Its facts (regista.trace.grouping.RULES), what the line says read only when
            # the rule reads it.
            rule = BYTES_RULES_BY_CODE[steps._kinds[pos]].get(etype)
            if rule is not None:
                flags = steps._flags
                now = flags[pos]
                guard, if_false, if_true, read = rule
                if not now & guard:
                    # its field read only where the two would add different facts
                    if (
                        read is not None
                        and (if_false ^ if_true) & ~now
                        and (
                            not refused
                            if etype == _B_PERMISSION_DECISION
                            else self._result_failed(offset, length, lineno)
                        )
                    ):
                        if_false = if_true
                    flags[pos] = now | if_false

    def _result_failed(self, offset: int, length: int, lineno: int) -> bool:
        """Whether the ``tool.result`` line at ``offset`` says ``is_error: true``, as its
        decoded event would (:attr:`regista.trace.events.ToolResult.is_error`).

        A fast path: only a line whose bytes hold ``"is_error": true`` somewhere (a key of
        the event, or of something in its content) is decoded to read the event's own key.
        """
        raw, at = self._raw, offset - self._raw_at
        if at >= 0 and at + length <= len(raw):
            start, end = at, at + length
        else:  # a line longer than a chunk
            raw, start, end = pread(self._fd, length, offset), 0, length
        find, match = raw.find, _TRUE.match
        key = find(_IS_ERROR_KEY, start, end)
        while key >= 0:
            if match(raw, key + len(_IS_ERROR_KEY), end) is not None:
                try:
                    data = orjson.loads(raw[start:end])
                except orjson.JSONDecodeError:
                    self._decode_line(offset, length, lineno)  # says what is wrong
                    raise
                return isinstance(data, dict) and data.get("is_error") is True
            key = find(_IS_ERROR_KEY, key + 1, end)
        return False

    def _refused(self, offset: int, length: int, lineno: int, head: bytes) -> bool:
        """Whether the ``permission.decision`` line at ``offset`` did not allow its call:
        from its head, or from the line decoded when the head does not say."""
        m = _ALLOWED.search(head)
        if m is not None:
            return m.group(1) == b"false"
        return self._decode_line(offset, length, lineno).allowed is False

    def _check_first(self, raw: bytes) -> dict[str, Any]:
        """The first line, checked as far as it can be without the event models."""
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise TraceFormatError(self.path, 1, f"not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise TraceFormatError(self.path, 1, "an event must be a JSON object")
        version = data.get("schema_version")
        if not isinstance(version, int) or version < 1:
            raise TraceFormatError(self.path, 1, "missing or invalid schema_version")
        if version > SCHEMA_VERSION:
            raise UnsupportedSchemaVersion(self.path, version, SCHEMA_VERSION)
        if data.get("type") != SESSION_START:
            raise TraceFormatError(self.path, 1, "a trace must begin with a session.start")
        return data

    @property
    def ended(self) -> bool:
        """Whether the scan met a ``session.end``: :attr:`end`, or one a cold scan keeps
        unvalidated until :meth:`warm`."""
        return self.end is not None or self._cold_end is not None

    def warm(self) -> None:
        """End a cold scan: validate the ``session.start`` (and a ``session.end`` met
        meanwhile) into :attr:`start` / :attr:`end`; later lines are scanned as usual.

        Raises:
            TraceFormatError: One of them is not a valid event.
        """
        if not self.cold:
            return
        from regista.trace.events import SessionEnd, SessionStart

        self.cold = False
        if self.offsets:
            start = self._decode_line(self.offsets[0], self.lengths[0], 0)
            if not isinstance(start, SessionStart):
                raise TraceFormatError(self.path, 1, "a trace must begin with a session.start")
            self.start = start
        if self._cold_end is not None:
            at, self._cold_end = self._cold_end, None
            end = self._decode_line(self.offsets[at], self.lengths[at], at)
            if isinstance(end, SessionEnd):
                self.end = end

    def _note_result(self, lineno: int, head: bytes) -> None:
        """Note where the result of a ``tool_use_id`` is (a compact request refers to it)."""
        um = _TOOL_USE_ID.search(head)
        try:
            uid = orjson.loads(um.group(1)) if um is not None else None
        except orjson.JSONDecodeError:
            uid = None
        if isinstance(uid, str):
            results = self._results
            had = results.get(uid)
            if had is None:
                results[uid] = lineno
            elif isinstance(had, int):
                results[uid] = [had, lineno]
            else:
                had.append(lineno)

    def _note_request(self, offset: int, length: int, lineno: int, head: bytes) -> None:
        """Note whether a request line writes ``system`` and ``tools`` itself."""
        m = _MODEL.search(head)
        if m is not None and m.end() < len(head):
            own = m.group(1) is not None
        else:  # the head was too short to tell
            try:
                data = orjson.loads(pread(self._fd, length, offset))
            except orjson.JSONDecodeError:
                data = None  # reading the line says what is wrong with it
            own = isinstance(data, dict) and "system" in data
        if own:
            self._context_line = lineno
            self._own_context.append(lineno)

    # -- reading -------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.steps)

    def raw_line(self, lineno: int) -> bytes:
        """The bytes of line ``lineno`` (0-based), without its newline."""
        with self._lock:
            offset, length = self.offsets[lineno], self.lengths[lineno]
        return pread(self._fd, length, offset)

    def _decode_line(self, offset: int, length: int, lineno: int) -> Any:
        from regista.trace.lines import parse_line

        return parse_line(pread(self._fd, length, offset), self.path, lineno + 1)

    def event(self, lineno: int) -> Any:
        """The validated event on line ``lineno`` (0-based), compact requests completed."""
        from regista.trace.lines import parse_line

        return parse_line(self.raw_line(lineno), self.path, lineno + 1, _LineResolver(self, lineno))

    def _context_of(self, lineno: int) -> dict[str, Any] | None:
        """``system`` and ``tools`` of the request line ``lineno`` leaves them out of."""
        own = self._own_context
        i = bisect_left(own, lineno)
        if i == 0 or (i < len(own) and own[i] == lineno):
            return None  # none before it, or the line writes its own
        at = own[i - 1]
        cached = self._context_cache
        if cached is not None and cached[0] == at:
            return cached[1]
        data = self._referred(at)
        context = {k: data.get(k) for k in ("system", "tools")}
        self._context_cache = (at, context)
        return context

    def _result_before(self, uid: str, lineno: int) -> Any:
        """The content of the latest ``tool.result`` for ``uid`` before line ``lineno``."""
        had = self._results.get(uid, [])
        for at in reversed([had] if isinstance(had, int) else had):
            if at < lineno:
                return self._referred(at).get("content")
        return None

    def _referred(self, lineno: int) -> dict[str, Any]:
        """The decoded line ``lineno`` (0-based) that a compact request takes parts from."""
        try:
            data = orjson.loads(self.raw_line(lineno))
        except orjson.JSONDecodeError as exc:
            raise TraceFormatError(self.path, lineno + 1, f"not valid JSON ({exc})") from None
        version = data.get("schema_version") if isinstance(data, dict) else None
        if not isinstance(version, int) or not 1 <= version <= SCHEMA_VERSION:
            raise TraceFormatError(self.path, lineno + 1, "not a trace event of a known schema")
        from regista.trace.migrations import migrate

        return migrate(data)

    def step(self, pos: int) -> Step:
        """The ``pos``-th step (its events decoded and validated), cached.

        ``Step.request`` is left ``None``: use :meth:`request_messages` for the full list.
        """
        with self._cache_lock:
            hit = self._cache.get(pos)
            if hit is not None:
                self._cache.move_to_end(pos)
                return hit
        from regista.trace.steps import Step

        with self._lock:
            entry = self.steps[pos]
            lines, complete = entry.lines, entry.complete
        step = Step(index=entry.index, kind=entry.kind)
        step.events = [self.event(n) for n in lines]
        if complete:  # a growing step is decoded again next time
            with self._cache_lock:
                self._cache[pos] = step
                if len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return step

    def position_of(self, number: int) -> int | None:
        """The position in :attr:`steps` of step number ``number``."""
        return self.steps.position_of(number)

    def step_text(self, pos: int) -> bytes:
        """The raw bytes of a step's lines, for searching."""
        with self._lock:
            lines = self.steps.lines(pos)
        return b"\n".join(self.raw_line(n) for n in lines)

    # -- full requests -------------------------------------------------------------------

    def _previous_request(self, pos: int) -> int | None:
        kind = self.steps.kind
        for p in range(pos - 1, -1, -1):
            if kind(p) == "model":
                return p
        return None

    def request_event(self, pos: int) -> LlmRequestEvent | None:
        """The ``llm.request`` event of a model step."""
        return self.step(pos).request_event

    def request_messages(self, pos: int, start: int = 0) -> list[dict[str, Any]]:
        """Messages ``start:`` of the full request of model step ``pos``.

        Rebuilt from the deltas, walking back only as far as ``start`` needs.
        """
        ev = self.request_event(pos)
        if ev is None:
            return []
        prefix = ev.messages_prefix
        if start >= prefix:
            return list(ev.messages[start - prefix :])
        prev = self._previous_request(pos)
        if prev is None:
            return list(ev.messages)
        return self.request_messages(prev, start)[: prefix - start] + list(ev.messages)

    # -- the summary ---------------------------------------------------------------------

    def summary(self) -> TraceSummary:
        """What :meth:`Trace.summary` says, from the lines scanned so far.

        Only ``session.start``, ``session.end`` and the lines that carry usage and cost
        (responses and compactions) are decoded, so this costs about a scan of the file.

        Raises:
            TraceError: Nothing was scanned yet.
            TraceFormatError: A response or compaction line is corrupt.
        """
        from regista.trace.reader import TraceSummary
        from regista.types import Usage

        self.warm()
        start, end = self.start, self.end
        if start is None:
            raise TraceError(f"{self.path}: not scanned yet")
        raws: list[Any] = []
        costs: list[float | None] = []
        turn = -1
        for lineno in list(self._usage_lines):
            fields = self._usage_fields(lineno)
            if fields is None:  # not the plain shape: the validated event (or its error)
                ev = self.event(lineno)
                is_response = ev.type == LLM_RESPONSE
                raw = ev.response.get("usage") if is_response else ev.usage
                odd = Usage.model_validate(raw or {})  # read as ``Usage`` reads it
                fields = (odd, ev.turn if is_response else None, ev.cost_usd)
            raw, event_turn, event_cost = fields
            raws.append(raw)
            if event_turn is not None and event_turn > turn:
                turn = event_turn
            costs.append(event_cost)
        steps = self.steps
        facts = grouping.run_counts(
            self._tallies, len(steps), steps.flag_counts(), end, turn, costs, raws
        )
        return TraceSummary.of(start, end, usage=facts["tokens"].as_usage(), **facts)

    def _usage_fields(self, lineno: int) -> tuple[Any, int | None, float | None] | None:
        """(usage, turn of a response, cost) of a response or compaction line, read without
        validating the whole event (a compaction carries every message it replaced); ``None``
        when the line is not of the plain shape, for the caller to validate it."""
        return _usage_fields_of(self.raw_line(lineno))

    def previous_request(self, pos: int) -> int | None:
        """Position of the model step before ``pos``, if any."""
        return self._previous_request(pos)

    def close(self) -> None:
        self._file.close()


def _usage_fields_of(raw: bytes | memoryview) -> tuple[Any, int | None, float | None] | None:
    """:meth:`TraceIndex._usage_fields` of the line ``raw``."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    version = data.get("schema_version") if isinstance(data, dict) else None
    # Responses and compactions' usage read the same in every schema so far.
    if type(version) is not int or not 1 <= version <= SCHEMA_VERSION:
        return None
    cost = data.get("cost_usd")
    if cost is not None and type(cost) not in (int, float):
        return None
    if data.get("type") == LLM_RESPONSE:
        response, turn = data.get("response"), data.get("turn")
        if not isinstance(response, dict) or type(turn) is not int:
            return None
        usage = response.get("usage")
    else:
        usage, turn = data.get("usage"), None
    if usage is not None and (
        not isinstance(usage, dict) or any(type(usage.get(f, 0)) is not int for f in USAGE_COUNTS)
    ):
        return None
    return usage, turn, cost


class _SummaryScan(TraceIndex):
    """The scan :func:`read_summary` makes: it notes nothing for compact requests (a summary
    decodes no request), and reads the usage of each response and compaction from the chunk
    being scanned rather than from the file again."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self._chunk = memoryview(b"")
        self._chunk_at = 0
        self._fields: dict[int, tuple[Any, int | None, float | None] | None] = {}

    def _note_request(self, offset: int, length: int, lineno: int, head: bytes) -> None:
        pass

    def _note_result(self, lineno: int, head: bytes) -> None:
        pass

    def _scan_chunk(self, chunk: bytes, base: int) -> int:
        self._chunk, self._chunk_at = memoryview(chunk), base
        try:
            return super()._scan_chunk(chunk, base)
        finally:
            self._chunk = memoryview(b"")

    def _add_line(self, offset: int, length: int, head: bytes) -> None:
        priced = len(self._usage_lines)
        super()._add_line(offset, length, head)
        if len(self._usage_lines) > priced:
            at = offset - self._chunk_at
            if at >= 0 and at + length <= len(self._chunk):
                raw: bytes | memoryview = self._chunk[at : at + length]
            else:  # a line longer than a chunk
                raw = pread(self._fd, length, offset)
            self._fields[self._usage_lines[-1]] = _usage_fields_of(raw)

    def _usage_fields(self, lineno: int) -> tuple[Any, int | None, float | None] | None:
        if lineno in self._fields:
            return self._fields.pop(lineno)
        return super()._usage_fields(lineno)


def read_summary(path: str | Path) -> TraceSummary:
    """The summary of the trace at ``path`` without loading it (see :meth:`TraceIndex.summary`).

    ``Trace.load(path).summary()`` says the same, after decoding and validating every event.

    Raises:
        TraceError: The file is missing, unreadable or empty.
        TraceFormatError: A line the summary reads is corrupt.
        UnsupportedSchemaVersion: The trace is newer than this regista.
    """
    index = _SummaryScan(path)
    try:
        # A scan builds tens of thousands of small long-lived objects and decodes big lines
        # (a compaction holds every message it replaced): left on, the cyclic collector
        # would walk the first again and again while the second pile up, for nothing.
        with paused_gc():
            index.scan()
            return index.summary()
    finally:
        index.close()


class _LineResolver:
    """Completes one compact request line of an index from the lines it refers to."""

    def __init__(self, index: TraceIndex, lineno: int) -> None:
        self.index = index
        self.lineno = lineno

    def resolve(self, data: dict[str, Any]) -> None:
        if data.get("type") != LLM_REQUEST:
            return
        from regista.trace.compact import complete_request

        complete_request(
            data,
            self.index._context_of(self.lineno),
            lambda uid: self.index._result_before(uid, self.lineno),
        )
