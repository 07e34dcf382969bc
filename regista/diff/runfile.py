"""A run read from its file for a diff: one pass that keeps, per step, only what aligning
and classifying it needs.

``Trace.load`` validates every event into a pydantic model and keeps them all; a diff
needs far less. :class:`RunFile` reads the file once, decodes each line with orjson and
keeps, for each step, its line numbers, its signature (the key it is aligned on, see
:mod:`regista.diff.steps`) and 16-byte digests of what its classification compares (a
model step's configuration and answer, a tool's decision and result, a compaction's
summary). Two steps whose digests agree are the same; when they do not, the two steps
are decoded and validated (:meth:`RunFile.step`) and classified exactly as a loaded trace
would be. Memory stays at a few hundred bytes a step, whatever the size of the file.

Every read is an ``os.pread`` at an offset. The pass is incremental (:meth:`RunFile.read`
takes what was appended since the last call), so a run that is still being written is
followed as it grows, and a viewer can align what has been read so far.

The pass checks each line's envelope (JSON object, schema version, session, ``seq``
order) and the type of every field it reads; a line that is not of the plain shape (or too
deep to digest) is validated whole, which says what is wrong with it the way ``Trace.load``
would. Nested payloads it only digests (message blocks, tool schemas, usage) are checked
when their step is decoded.
"""

from __future__ import annotations

import hashlib
import os
import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from regista.diff.steps import _ordinals
from regista.errors import TraceError, TraceFormatError, TraceWarning
from regista.trace.canonical import canonical_json
from regista.trace.compact import REQUEST_CONTEXT, complete_request
from regista.trace.events import (
    CONTEXT_COMPACTION,
    ERROR,
    LLM_REQUEST,
    LLM_RESPONSE,
    PERMISSION_DECISION,
    SCHEMA_VERSION,
    SESSION_END,
    SESSION_START,
    TOOL_CALL,
    TOOL_RESULT,
    SessionEnd,
    SessionStart,
)
from regista.trace.grouping import COMPLETE, RULES, STEPLESS, NegativeStep, opens
from regista.trace.index import open_trace_file, pread
from regista.trace.lines import parse_line
from regista.trace.migrations import migrate
from regista.trace.names import StepKind
from regista.trace.steps import Step

__all__ = ["RunFile", "StepFacts"]

_CHUNK = 8 << 20
_KNOWN = {
    LLM_REQUEST,
    LLM_RESPONSE,
    TOOL_CALL,
    PERMISSION_DECISION,
    TOOL_RESULT,
    CONTEXT_COMPACTION,
    ERROR,
}
_SOURCES = ("live", "recorded", "edit")
# The types whose lines ``RunFile._facts`` does not fold into a step's facts (most lines of a
# run): no rule of regista.trace.grouping names them.
_UNFOLDED = (LLM_REQUEST, TOOL_CALL)
if any(etype in rules for rules in RULES.values() for etype in _UNFOLDED):
    raise ImportError("regista.trace.grouping.RULES has a rule that RunFile does not fold")


def _hash(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _digest(value: Any) -> bytes:
    return _hash(canonical_json(value))


def _sig(tag: bytes, value: Any) -> bytes:
    # As regista.diff.steps._digest: the same bytes for the same values.
    return tag + _hash(canonical_json(value))


_NO_ANSWER = _digest(_ordinals([{"content": None, "stop_reason": None, "stop_sequence": None}]))
_ID_FIELD = {"tool_use": "id", "tool_result": "tool_use_id"}


def _keyed(messages: list[Any], refs: dict[str, bytes]) -> list[Any]:
    """``messages`` as a signature sees them: tool_use ids renamed ``#0``, ``#1``, … by
    order of appearance (as :func:`regista.diff.steps._ordinals`), and the content of every
    tool_result block replaced by its digest (``refs`` gives the digest of a result the line
    leaves out and refers to). Two lists give equal values here exactly when their
    ``_ordinals`` give equal canonical JSON, without the tool outputs hashed again."""
    ids: dict[str, str] = {}
    out: list[Any] = []
    for message in messages:
        content = message.get("content")
        if type(content) is not list:
            out.append(message)
            continue
        blocks: list[Any] = []
        for block in content:
            if type(block) is not dict:
                blocks.append(block)
                continue
            kind = block.get("type")
            key = _ID_FIELD.get(kind) if type(kind) is str else None
            if key is None:
                blocks.append(block)
                continue
            new = dict(block)
            old = block.get(key)
            if type(old) is str:
                new[key] = ids.setdefault(old, f"#{len(ids)}")
            if kind == "tool_result":
                if "content" in block:
                    new["content"] = {"#": _digest(block["content"]).hex()}
                elif type(old) is str and old in refs:
                    new["content"] = {"#": refs[old].hex()}
            blocks.append(new)
        out.append({**message, "content": blocks})
    return out


@dataclass(slots=True, eq=False)
class StepFacts:
    """What a diff knows of one step without decoding it again.

    Attributes:
        index: The step number.
        kind: ``model``, ``tool`` or ``compaction``.
        lines: 0-based line numbers of its events, in order.
        key: ``(exact, coarse)`` signature, as :func:`regista.diff.steps.signature`.
        config: Digest of a model request's configuration (model, system, tools, …).
        answer: Digest of a model answer (content with ids renamed, stop reason).
        decision: A tool's permission decision: (allowed, reason).
        result: Digest of a tool result (content, is_error).
        errors: The step's errors, ``{"type", "message"}`` each.
        request_hash: A compaction's summarising request hash.
        summary: Digest of a compaction's summary.
        flags: Its facts (``regista.trace.grouping``'s flags), folded from its events.
    """

    index: int
    kind: StepKind
    lines: list[int] = field(default_factory=list)
    key: tuple[bytes, tuple[str, ...]] | None = None
    config: bytes | None = None
    answer: bytes | None = None
    decision: tuple[bool, str | None] | None = None
    result: bytes | None = None
    errors: list[dict[str, str]] = field(default_factory=list)
    request_hash: str | None = None
    summary: bytes | None = None
    flags: int = 0

    @property
    def complete(self) -> bool:
        """The closing event (response, result) was read."""
        return bool(self.flags & COMPLETE)

    def same_as(self, other: StepFacts) -> bool:
        """Whether the two steps (of the same kind) are surely ``same`` (when False, they
        may still be: a diff then compares the decoded steps)."""
        if self.key is None or other.key is None or self.key[0] != other.key[0]:
            return False
        if self.kind == "model":
            return (
                self.config == other.config
                and (self.answer or _NO_ANSWER) == (other.answer or _NO_ANSWER)
                and self.errors == other.errors
            )
        if self.kind == "tool":
            return self.decision == other.decision and self.result == other.result
        return self.request_hash == other.request_hash and self.summary == other.summary


class _Odd(Exception):
    """A line is not of the plain shape: it is validated whole instead."""


def _int(value: Any) -> int:
    if type(value) is not int:
        raise _Odd
    return value


def _str(value: Any, optional: bool = False) -> Any:
    if type(value) is not str and not (optional and value is None):
        raise _Odd
    return value


def _dict(value: Any, optional: bool = False) -> Any:
    if type(value) is not dict and not (optional and value is None):
        raise _Odd
    return value


def _dicts(value: Any) -> list[Any]:
    if type(value) is not list or any(type(v) is not dict for v in value):
        raise _Odd
    return value


def _envelope(data: dict[str, Any]) -> None:
    _int(data.get("seq"))
    _str(data.get("session_id"))
    if "ts" in data:
        _str(data["ts"])


class RunFile:
    """One trace file read for a diff: per-step facts, steps decoded on demand.

    Args:
        path: The trace file.
        cache_size: How many decoded steps to keep.

    Raises:
        TraceError: The file is missing, a directory or unreadable.
    """

    def __init__(self, path: str | Path, *, cache_size: int = 256) -> None:
        self.path = Path(path)
        self._file = open_trace_file(self.path)
        self._fd = self._file.fileno()
        self.offsets: list[int] = []
        self.lengths: list[int] = []
        self._start: SessionStart | None = None
        self.end: SessionEnd | None = None
        #: The file ends in a half-written line (left out).
        self.truncated = False
        self.size = 0
        self._pos = 0
        self._steps: dict[int, StepFacts] = {}
        self._order: list[StepFacts] | None = None
        # Compact requests: the context each one takes, and where each tool result is.
        self._context: dict[str, Any] | None = None
        self._line_context: dict[int, dict[str, Any] | None] = {}
        self._result_lines: dict[str, list[int]] = {}
        #: Digest of the content of the latest tool result of each id.
        self._result_digest: dict[str, bytes] = {}
        self._context_digest: tuple[Any, Any, bytes, dict[tuple[str, int], bytes]] | None = None
        self._cache: OrderedDict[int, Step] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    # -- reading ---------------------------------------------------------------------------

    @property
    def start(self) -> SessionStart:
        """The ``session.start`` event (once the first line was read)."""
        if self._start is None:
            raise TraceError(f"{self.path}: not read yet")
        return self._start

    @property
    def session_id(self) -> str:
        return str(self.start.session_id)

    @property
    def scanned(self) -> int:
        """Bytes of the file read so far."""
        return self._pos

    def read(self, max_bytes: int | None = None, *, final: bool = False) -> bool:
        """Read the lines appended since the last call (at most about ``max_bytes``).

        Args:
            max_bytes: Stop after about this many bytes (the rest is read next time).
            final: The file is complete: a last line without its newline is read too
                (and left out, with a :class:`TraceWarning`, when it is half-written).

        Returns:
            True when the current end of the file was reached.

        Raises:
            TraceError: The file is empty or does not begin with ``session.start``.
            TraceFormatError: A line is not a valid event.
            UnsupportedSchemaVersion: The trace is newer than this regista.
        """
        budget = max_bytes if max_bytes is not None else 1 << 62
        size = os.fstat(self._fd).st_size
        self.size = size
        while self._pos < size and budget > 0:
            chunk = pread(self._fd, min(_CHUNK, budget, size - self._pos), self._pos)
            end = chunk.rfind(b"\n")
            if end < 0:
                nl = self._find_newline(self._pos + len(chunk), size)
                if nl < 0:
                    break  # a last line without its newline (yet)
                chunk = pread(self._fd, nl - self._pos + 1, self._pos)
                end = len(chunk) - 1
            self._lines(chunk, end)
            self._pos += end + 1
            budget -= end + 1
        tail = self._pos < size and budget > 0
        if tail and final:
            rest = pread(self._fd, size - self._pos, self._pos)
            tail = False
            if rest.strip():
                try:
                    self._line(rest, self._pos)
                except TraceFormatError:
                    if not self.offsets:
                        raise
                    tail = True
                    warnings.warn(
                        f"{self.path}:{len(self.offsets) + 1}: dropped a half-written last "
                        "line (the writing process probably died mid-write)",
                        TraceWarning,
                        stacklevel=2,
                    )
            self._pos = size
        self.truncated = tail
        if final and not self.offsets:
            raise TraceError(f"{self.path}: empty trace (no events)")
        return self._pos >= size or tail

    def _find_newline(self, pos: int, size: int) -> int:
        while pos < size:
            block = pread(self._fd, _CHUNK, pos)
            if not block:
                return -1
            nl = block.find(b"\n")
            if nl >= 0:
                return pos + nl
            pos += len(block)
        return -1

    def _lines(self, chunk: bytes, end: int) -> None:
        """Read the lines of ``chunk[: end + 1]``: plain lines here, the rest by ``_line``."""
        start = 0
        find = chunk.find
        base = self._pos
        offsets, lengths = self.offsets, self.lengths
        loads, facts, results = orjson.loads, self._facts, self._note_result
        sid = self._start.session_id if self._start is not None else None
        while start <= end:
            nl = find(b"\n", start)
            lineno = len(offsets)
            data: Any = None
            if lineno and nl > start:
                try:
                    data = loads(chunk[start:nl])
                except orjson.JSONDecodeError:
                    data = None
            if type(data) is dict:
                kind = data.get("type")
                seq = data.get("seq")
                version = data.get("schema_version")
                if (
                    type(kind) is str
                    and kind in _KNOWN
                    and type(seq) is int
                    and seq == lineno
                    and type(version) is int
                    and 1 <= version <= SCHEMA_VERSION
                    and data.get("session_id") == sid
                    and type(data.get("ts", "")) is str
                ):
                    if version != SCHEMA_VERSION:
                        data = migrate(data)
                    offsets.append(base + start)
                    lengths.append(nl - start)
                    context = self._context
                    try:
                        refs = self._request(data, lineno) if kind == LLM_REQUEST else None
                        facts(data, kind, lineno, refs)
                    except (_Odd, orjson.JSONEncodeError, RecursionError):
                        self._context = context
                        offsets.pop()
                        lengths.pop()
                    else:
                        if kind == TOOL_RESULT:
                            results(data, lineno)
                        start = nl + 1
                        continue
            self._line(chunk[start:nl], base + start)
            if sid is None and self._start is not None:
                sid = self._start.session_id
            start = nl + 1

    def _line(self, raw: bytes, offset: int) -> None:
        lineno = len(self.offsets)
        if not raw.strip():
            if offset + len(raw) + 1 >= self.size:  # a blank last line, as Trace.load skips
                return
            raise TraceFormatError(self.path, lineno + 1, "empty line")
        if lineno == 0:
            event = parse_line(raw, self.path, 1)
            if not isinstance(event, SessionStart):
                raise TraceFormatError(
                    self.path, 1, "a trace must begin with a session.start event"
                )
            if event.seq != 0:
                raise TraceFormatError(self.path, 1, f"seq {event.seq} out of order (expected 0)")
            self._start = event
            self._add(lineno, offset, len(raw))
            return
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            data = None
        kind = data.get("type") if type(data) is dict else None
        if (
            type(kind) is not str
            or kind not in _KNOWN
            or type(data.get("schema_version")) is not int
        ):
            data = self._odd(raw, lineno, kind)
        else:
            version = data["schema_version"]
            if not 1 <= version <= SCHEMA_VERSION:
                data = self._odd(raw, lineno, kind)
            else:
                if version != SCHEMA_VERSION:
                    data = migrate(data)
                context = self._context
                try:
                    _envelope(data)
                    refs = self._request(data, lineno) if kind == LLM_REQUEST else None
                    self._facts(data, kind, lineno, refs)
                except (_Odd, orjson.JSONEncodeError, RecursionError):
                    self._context = context
                    data = self._odd(raw, lineno, kind, context)
        if data.get("session_id") != self.start.session_id:
            raise TraceFormatError(self.path, lineno + 1, "a trace holds exactly one session")
        if data.get("seq") != lineno:
            raise TraceFormatError(
                self.path, lineno + 1, f"seq {data.get('seq')} out of order (expected {lineno})"
            )
        self._add(lineno, offset, len(raw))
        if kind == TOOL_RESULT:
            self._note_result(data, lineno)

    def _note_result(self, data: dict[str, Any], lineno: int) -> None:
        uid = data.get("tool_use_id")
        if type(uid) is str:
            self._result_lines.setdefault(uid, []).append(lineno)

    def _add(self, lineno: int, offset: int, length: int) -> None:
        with self._lock:
            self.offsets.append(offset)
            self.lengths.append(length)

    def _odd(
        self, raw: bytes, lineno: int, kind: Any, context: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """A line off the plain shape, validated whole (raises what is wrong with it)."""
        if kind in (SESSION_END, SESSION_START):
            event = parse_line(raw, self.path, lineno + 1)
            data: dict[str, Any] = event.model_dump()
            self.end = event if isinstance(event, SessionEnd) else None
            if isinstance(event, SessionEnd):
                self._order = None
            return data
        before = self._context if context is None else context
        resolver = _Resolver(self, lineno, before, record=True)
        event = parse_line(raw, self.path, lineno + 1, resolver)
        data = event.model_dump()
        self._facts(data, data["type"], lineno)
        return data

    def _request(self, data: dict[str, Any], lineno: int) -> dict[str, bytes]:
        """Give a compact request the ``system`` and ``tools`` it leaves out (as
        ``complete_request`` does) and return the digests of the tool results it refers to
        (their contents are not read again). Anything amiss is validated whole."""
        context = self._context
        has_system, has_tools = "system" in data, "tools" in data
        if not (has_system and has_tools):
            if context is None:
                raise _Odd
            if not has_system:
                data["system"] = context["system"]
            if not has_tools:
                data["tools"] = context["tools"]
        refs: dict[str, bytes] = {}
        names = data.pop("result_refs", None)
        if names is not None:
            if type(names) is not list:
                raise _Odd
            digests = self._result_digest
            for uid in names:
                if type(uid) is not str or uid not in digests:
                    raise _Odd
                refs[uid] = digests[uid]
        if not (has_system and has_tools):
            self._line_context[lineno] = context
        if has_system or has_tools:
            self._context = {"system": data["system"], "tools": data["tools"]}
        return refs

    def _result_before(self, uid: str, lineno: int) -> Any:
        """The content of the latest ``tool.result`` for ``uid`` before line ``lineno``."""
        for at in reversed(self._result_lines.get(uid, ())):
            if at < lineno:
                try:
                    data = orjson.loads(self.raw_line(at))
                except orjson.JSONDecodeError:
                    return None
                return data.get("content") if type(data) is dict else None
        return None

    def _facts(
        self, data: dict[str, Any], kind: str, lineno: int, refs: dict[str, bytes] | None = None
    ) -> None:
        """Note what a diff needs of one plain (or validated) line; ``refs``: the digests
        of the tool results a compact request refers to."""
        self.end = None
        # The checks of the common lines are written out rather than called: calls to the
        # checks cost as much as the fold of a step's facts does.
        if kind == TOOL_RESULT:
            if type(data.get("tool_use_id")) is not str or type(data.get("name")) is not str:
                raise _Odd
            content = data.get("content")
            if type(content) is not str:
                _dicts(content)
            is_error = data.get("is_error", False)
            if type(is_error) is not bool:
                raise _Odd
            held = _digest(content)
            self._result_digest[data["tool_use_id"]] = held
        if (
            kind in (LLM_RESPONSE, TOOL_RESULT, CONTEXT_COMPACTION)
            and data.get("source", "live") not in _SOURCES
        ):
            raise _Odd
        number = data.get("step")
        if number is None:
            if kind not in STEPLESS:  # only an error may belong to no step (grouping)
                raise _Odd
            _str(data.get("error_type"))
            _str(data.get("message"))
            return
        step = self._steps.get(_int(number))
        if step is None:  # regista.trace.grouping: begun by an opener of its number
            try:
                begun = opens(number, kind)
            except NegativeStep:  # refused by parse_line, in the reference's words
                raise _Odd from None
            if begun is None:
                if kind == ERROR:
                    _str(data.get("error_type"))
                    _str(data.get("message"))
                return
            step = self._steps[number] = StepFacts(number, begun)
            self._order = None
        if kind == LLM_REQUEST:
            if type(data.get("turn")) is not int or type(data.get("request_hash")) is not str:
                raise _Odd
            messages = _dicts(data.get("messages"))
            config = self._config(data)
            if step.kind == "model" and step.config is None:
                step.config = config
                step.key = (_sig(b"m", _keyed(messages, refs or {})), ("model",))
            step.lines.append(lineno)
            return  # no rule names a request (_UNFOLDED)
        elif kind == LLM_RESPONSE:
            response = data.get("response")
            if (
                type(data.get("turn")) is not int
                or type(data.get("provider")) is not str
                or type(response) is not dict
            ):
                raise _Odd
            if step.answer is None:
                get = response.get
                out = {
                    "content": get("content"),
                    "stop_reason": get("stop_reason"),
                    "stop_sequence": get("stop_sequence"),
                }
                step.answer = _digest(_ordinals([out]))
        elif kind == TOOL_CALL:
            name = data.get("name")
            args = data.get("input", {})
            if (
                type(data.get("turn")) is not int
                or type(data.get("tool_use_id")) is not str
                or type(name) is not str
                or type(args) is not dict
            ):
                raise _Odd
            if step.kind == "tool" and step.key is None:
                step.key = (_sig(b"t", [name, args]), ("tool", name))
            step.lines.append(lineno)
            return  # nor a call
        elif kind == PERMISSION_DECISION:
            allowed = data.get("allowed")
            reason = data.get("reason")
            if (
                type(data.get("tool_use_id")) is not str
                or type(allowed) is not bool
                or data.get("by", "policy") not in ("policy", "default", "recorded")
                or (reason is not None and type(reason) is not str)
            ):
                raise _Odd
            if step.decision is None:
                step.decision = (allowed, reason)
        elif kind == TOOL_RESULT:
            if step.result is None:
                step.result = _hash(held + (b"\x01" if data.get("is_error") else b"\x00"))
        elif kind == CONTEXT_COMPACTION:
            _int(data.get("turn"))
            _int(data.get("tokens_before"))
            _str(data.get("provider"))
            request_hash = _str(data.get("request_hash"))
            summary = _str(data.get("summary"))
            replaced = _dicts(data.get("replaced"))
            if step.request_hash is None:
                step.request_hash = request_hash
                step.summary = _digest(summary)
                if step.kind == "compaction":
                    step.key = (_sig(b"c", _ordinals(replaced)), ("compaction",))
        elif kind == ERROR:
            if data.get("where", "agent") not in ("provider", "tool", "agent", "replay"):
                raise _Odd
            error = {"type": _str(data.get("error_type")), "message": _str(data.get("message"))}
            step.errors.append(error)
        # Its facts (regista.trace.grouping.RULES; a request or a call returned above).
        rule = RULES[step.kind].get(kind)
        if rule is not None:
            flags = step.flags
            guard, if_false, if_true, read = rule
            if not flags & guard:
                if read is not None and data.get(read) is True:
                    if_false = if_true
                step.flags = flags | if_false
        step.lines.append(lineno)

    def _config(self, data: dict[str, Any]) -> bytes:
        """Digest of ``request_config`` of a completed request (system and tools, usually
        the same objects from one request to the next, are digested once)."""
        system, tools = data.get("system"), data.get("tools", [])
        model = _str(data.get("model"))
        choice = _dict(data.get("tool_choice"), optional=True)
        max_tokens = _int(data.get("max_tokens"))
        params = _dict(data.get("params", {}))
        _int(data.get("messages_prefix", 0))
        cached = self._context_digest
        if cached is not None and cached[0] is system and cached[1] is tools:
            context, plain = cached[2], cached[3]
        else:
            _str(system, optional=True)
            _dicts(tools)
            context = _digest([system, tools])
            plain = {}
            self._context_digest = (system, tools, context, plain)
        if choice is None and not params:  # the usual request: one digest per model
            key = (model, max_tokens)
            digest = plain.get(key)
            if digest is None:
                digest = plain[key] = _hash(context + canonical_json([model, None, max_tokens, {}]))
            return digest
        return _hash(context + canonical_json([model, choice, max_tokens, params]))

    # -- the steps -------------------------------------------------------------------------

    def steps(self, *, settled: bool = False) -> list[StepFacts]:
        """The steps read so far, by number; ``settled``: without the unfinished steps of a
        run that has no ``session.end`` (a model call waiting for its answer, …)."""
        order = self._order
        if order is None:
            order = self._order = [self._steps[k] for k in sorted(self._steps)]
        if settled and self.end is None:
            return [s for s in order if s.complete]
        return order

    def raw_line(self, lineno: int) -> bytes:
        """The bytes of line ``lineno`` (0-based), without its newline."""
        with self._lock:
            offset, length = self.offsets[lineno], self.lengths[lineno]
        return pread(self._fd, length, offset)

    def step(self, facts: StepFacts) -> Step:
        """The step, its events decoded and validated (cached); ``Step.request`` is not
        rebuilt."""
        with self._lock:
            hit = self._cache.get(facts.index)
            if hit is not None and len(hit.events) == len(facts.lines):  # not grown since
                self._cache.move_to_end(facts.index)
                return hit
            # A line being read in another thread joins its step just before its offset
            # is stored: such a line is left for the next time.
            read = len(self.lengths)
            lines = [n for n in facts.lines if n < read]
        step = Step(index=facts.index, kind=facts.kind)
        step.events = [
            parse_line(
                self.raw_line(n),
                self.path,
                n + 1,
                _Resolver(self, n, self._line_context.get(n)),
            )
            for n in lines
        ]
        with self._lock:
            self._cache[facts.index] = step
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return step

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> RunFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Resolver:
    """Completes one compact request line from the context it takes and the tool results
    before it."""

    def __init__(
        self, run: RunFile, lineno: int, context: dict[str, Any] | None, *, record: bool = False
    ) -> None:
        self.run = run
        self.lineno = lineno
        self.context = context
        self.record = record

    def resolve(self, data: dict[str, Any]) -> None:
        if data.get("type") != LLM_REQUEST:
            return
        run, lineno = self.run, self.lineno
        if self.record and not all(k in data for k in REQUEST_CONTEXT):
            run._line_context[lineno] = self.context
        own = complete_request(data, self.context, lambda uid: run._result_before(uid, lineno))
        if self.record and own is not None:
            run._context = own
