"""Building a regista trace from another tool's session, one event at a time.

The importers read a transcript in file order and call a :class:`RunBuilder`: user content,
model answers, tool calls and results, compactions. The builder keeps the conversation the
model saw (since the last compaction), numbers steps, writes each ``llm.request`` as a
delta of the one before, and hashes the full request incrementally (the same value as
:func:`~regista.trace.canonical.request_hash`, secrets redacted, in linear time over a
session). Events are plain dicts until they are written: an importer may still complete
one it made (Codex reports a call's usage and a command's exit code lines later; a
subagent's parent step is known once its parent is converted).

The bytes are made by the shared :class:`~regista.trace.writer.TraceWriter`
(:class:`RunEncoder`), as for every trace: schema 2, compact requests (a tool result the
trace already holds is referred to, not repeated), secret shapes redacted. The events are
not made by :class:`~regista.trace.recorder.TraceRecorder`: it writes each event as it is
told, numbers turns by model calls and keeps no event to complete later, while an import
numbers turns by what the person typed and completes events from later lines.
"""

from __future__ import annotations

import hashlib
import io
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from regista.pricing import add_costs, price_for, total_cost
from regista.redact import redact_bytes
from regista.tokens import Tokens, tokens_of
from regista.trace.events import (
    CONTEXT_COMPACTION,
    ERROR,
    EVENT_CLASSES,
    LLM_REQUEST,
    LLM_RESPONSE,
    SCHEMA_VERSION,
    SESSION_END,
    SESSION_START,
    TOOL_CALL,
    TOOL_RESULT,
)
from regista.trace.writer import TraceWriter
from regista.types import _SPLIT, Usage

__all__ = [
    "UNKNOWN_REQUEST_FIELDS",
    "ImportReport",
    "RunBuilder",
    "RunEncoder",
    "derived_session_id",
    "ts_millis",
]

#: What a transcript does not hold about a model request: the importers never invent it.
UNKNOWN_REQUEST_FIELDS = ["system", "tools", "tool_choice", "max_tokens", "params"]

_SCHEMA = SCHEMA_VERSION
_DUMP_SORTED = orjson.OPT_SORT_KEYS
#: Tool results referred to by a request that stay in memory (an import's requests hold
#: mostly what was added since the one before); older ones are known by a digest: what is
#: written is the same at any number (see ``RequestEncoder``).
_REFERRED_KEPT = 64
#: The conversation since the last compaction is kept in memory up to about this many
#: bytes of JSON; older messages (already sent in a request) are kept in a temporary file
#: until a compaction, the one event that holds them all again, needs them.
_MESSAGES_IN_MEMORY = 4 << 20


def ts_millis(ts: str | None) -> int | None:
    """Milliseconds since the epoch of an ISO-8601 timestamp, or ``None``."""
    if not ts:
        return None
    try:
        return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)
    except (ValueError, TypeError, OverflowError):
        return None


def derived_session_id(source_id: str, started: str | None) -> str:
    """A ULID made from the source session's id and start time: the same every import."""
    ms = ts_millis(started) or 0
    ms = min(max(ms, 0), (1 << 48) - 1)
    tail = hashlib.sha256(source_id.encode("utf-8", "surrogatepass")).digest()[:10]
    return _ulid_text(ms.to_bytes(6, "big") + tail)


#: Crockford's base 32, as a ULID is written.
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _ulid_text(data: bytes) -> str:
    """The 26 characters of the ULID of 16 bytes (``str(ulid.ULID.from_bytes(data))``,
    without importing ``ulid``, which imports ``importlib.metadata``: a debugger opening a
    transcript needs only this)."""
    n = int.from_bytes(data, "big")
    return "".join(_CROCKFORD[(n >> shift) & 31] for shift in range(125, -1, -5))


@dataclass
class ImportReport:
    """What an import skipped or could not read.

    Attributes:
        skipped: Lines of types the importer does not model, counted by type.
        bad_lines: ``(path, line number, what is wrong)`` of lines that are not JSON objects.
        notes: Other things a user should know (an unmatched subagent, …).
    """

    skipped: dict[str, int] = field(default_factory=dict)
    bad_lines: list[tuple[str, int, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def skip(self, kind: str) -> None:
        self.skipped[kind] = self.skipped.get(kind, 0) + 1

    def lines(self) -> list[str]:
        """One line per problem, for a person."""
        out = [f"{path}:{lineno}: skipped: {msg}" for path, lineno, msg in self.bad_lines]
        if self.skipped:
            parts = ", ".join(f"{n} {k}" for k, n in sorted(self.skipped.items()))
            out.append(f"lines not modelled (skipped): {parts}")
        out.extend(self.notes)
        return out


class _Hasher:
    """SHA-256 of the canonical request (secrets redacted), fed message by message.

    The canonical JSON of a request sorts its keys: ``max_tokens``, ``messages``, ``model``,
    ``params``, ``system``, ``tool_choice``, ``tools``. The messages are therefore a prefix
    shared by consecutive requests, and the hash state after them is reused. Each value is
    redacted on its own, which is redacting the whole (no secret shape spans two values).
    """

    def __init__(self, max_tokens: int) -> None:
        self._h = hashlib.sha256(b'{"max_tokens":%d,"messages":[' % max_tokens)
        self._count = 0

    def add(self, message: dict[str, Any]) -> int:
        """Add ``message``; the size of its JSON."""
        if self._count:
            self._h.update(b",")
        data = orjson.dumps(message, option=_DUMP_SORTED)
        self._h.update(redact_bytes(data))
        self._count += 1
        return len(data)

    def digest(self, model: str, system: str | None) -> str:
        h = self._h.copy()
        h.update(_request_end(model, system))
        return h.hexdigest()


def _request_end(model: str, system: str | None) -> bytes:
    """What follows the messages in a request's canonical JSON (redacted), made once per
    model and system prompt (a Codex rollout's instructions are kilobytes, the same for
    every request of a run)."""
    key = (model, system)
    end = _ENDS.get(key)
    if end is None:
        if len(_ENDS) >= 16:
            _ENDS.clear()
        end = _ENDS[key] = (
            b'],"model":'
            + redact_bytes(orjson.dumps(model))
            + b',"params":{},"system":'
            + redact_bytes(orjson.dumps(system))
            + b',"tool_choice":null,"tools":[]}'
        )
    return end


#: The ends of requests (:func:`_request_end`) by model and system prompt: the last few.
_ENDS: dict[tuple[str, str | None], bytes] = {}


class _Conversation:
    """The messages since the last compaction, as a list that spills its older part.

    Only the messages added since the last request are read often; all of them are read
    again by a compaction. Past :data:`_MESSAGES_IN_MEMORY` bytes, the messages a request
    already sent are written to a temporary file (as JSON: they read back equal), so a
    session that never compacts does not keep its whole conversation in memory.
    """

    def __init__(self, keep: bool = True) -> None:
        self.recent: list[dict[str, Any]] = []
        #: Whether a compaction may come (else only the messages since the last request
        #: are kept: nothing reads the others again).
        self.keep = keep
        self._spilled = 0
        self._file: Any = None
        self._size = 0

    def __len__(self) -> int:
        return self._spilled + len(self.recent)

    def append(self, message: dict[str, Any], size: int, sent: int) -> None:
        """Add ``message`` (``size`` bytes of JSON); the first ``sent`` messages were sent."""
        self.recent.append(message)
        self._size += size
        if self._size > _MESSAGES_IN_MEMORY and sent > self._spilled:
            cut = sent - self._spilled
            if not self.keep:
                del self.recent[:cut]
                self._spilled = sent
                self._size = 0
                return
            if self._file is None:
                self._file = tempfile.TemporaryFile()  # noqa: SIM115 - lives with the run
            self._file.write(b"".join(orjson.dumps(m) + b"\n" for m in self.recent[:cut]))
            del self.recent[:cut]
            self._spilled = sent
            self._size = 0

    def since(self, start: int) -> list[dict[str, Any]]:
        """The messages from ``start`` on (not spilled: later than the last request)."""
        return self.recent[start - self._spilled :]

    def all(self) -> list[dict[str, Any]]:
        if self._file is None:
            return self.recent
        self._file.seek(0)
        out = [orjson.loads(line) for line in self._file]
        self._file.seek(0, 2)
        return out + self.recent


class RunBuilder:
    """Accumulates the events of one imported run.

    Args:
        session_id: The run's (derived) session id.
        task: The first thing the user asked.
        model: The model of the first model call ("unknown" when there is none).
        provider: Who served the model calls (``anthropic``, ``openai``).
        started: Timestamp of the ``session.start`` event.
        metadata: Kept in ``session.start.metadata`` (where it came from, cwd, …).
        instructions: The system prompt, when the transcript holds it.
        import_report: What the conversion skipped (``metadata.import_report``), when it
            is known before the run is made.
        forked_from: The run it was forked from, when the source says (a session that
            ``regista fork … --resume-in`` wrote back into its CLI).
        compacts: Whether the run may hold a compaction (which replaces the whole
            conversation since the one before, so it is kept until then); ``False``: it
            holds none, and the conversation is not kept.
    """

    def __init__(
        self,
        session_id: str,
        *,
        task: str,
        model: str,
        provider: str,
        started: str,
        metadata: dict[str, Any],
        instructions: str | None = None,
        import_report: dict[str, Any] | None = None,
        forked_from: dict[str, Any] | None = None,
        compacts: bool = True,
    ) -> None:
        self.session_id = session_id
        self.provider = provider
        self.instructions = instructions
        #: The events not taken yet (:meth:`take`).
        self.events: list[dict[str, Any]] = []
        #: The ``seq`` of the first event the source may still complete (a model call
        #: whose usage may be reported after its step): :meth:`take` leaves it and those
        #: after it (``None``: every event made is final).
        self.hold: int | None = None
        self._seq = 0
        #: The cost of the events taken, summed in order (``None``: one is unknown).
        self._taken_cost: float | None = 0.0
        self.step = 0
        self.turn = -1
        self._compacts = compacts
        self._messages = _Conversation(compacts)
        self._pending: list[dict[str, Any]] = []
        self._pending_origin: str | None = None
        self._hasher = _Hasher(0)
        self._prefix = 0  # messages already stored by earlier requests
        self.usage = Usage()
        #: ``tokens_of(self.usage)`` when ``self.usage`` is ``_total_of`` (made by the last sum).
        self._total_tokens = _NO_TOKENS
        self._total_of: Usage | None = None
        self.cost: float | None = 0.0
        self.model = model
        self.tool_calls = 0
        #: tool step -> when it was called (its result's duration runs from there)
        self._called: dict[int, str] = {}
        self.last_text: str | None = None
        self.last_stop: str | None = None
        self.first_ts = started
        self.last_ts = started
        unknown = ["tools", "max_tokens", "params"]
        if instructions is None:
            unknown.insert(0, "instructions")
        self._emit(
            started,
            SESSION_START,
            task=task,
            instructions=instructions,
            model=model,
            provider=provider,
            tools=[],
            policy=None,
            context=None,
            max_turns=0,
            max_tokens=0,
            params={},
            agent_ref=None,
            replay_of=None,
            forked_from=forked_from,
            metadata={
                **metadata,
                "unknown": unknown,
                **({"import_report": import_report} if import_report is not None else {}),
            },
            regista_version="",
        )

    # -- plumbing ------------------------------------------------------------------------

    def _emit(self, ts: str | None, etype: str, **fields: Any) -> dict[str, Any]:
        ts = ts or self.last_ts
        self.last_ts = ts
        event = {
            "schema_version": _SCHEMA,
            "session_id": self.session_id,
            "seq": self._seq,
            "ts": ts,
            "type": etype,
            **fields,
        }
        self.events.append(event)
        self._seq += 1
        return event

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation since the last compaction."""
        return self._messages.all()

    @messages.setter
    def messages(self, value: list[dict[str, Any]]) -> None:
        self._messages = _Conversation()
        self._messages.recent = value

    def take(self, upto: int | None = None) -> list[dict[str, Any]]:
        """The first ``upto`` events not taken yet (default all), which the builder then
        forgets: a caller that writes them out as they come keeps a run of any length in
        bounded memory. What was taken can no longer be completed."""
        events = self.events
        upto = len(events) if upto is None else upto
        if self.hold is not None and events:
            upto = max(min(upto, self.hold - events[0]["seq"]), 0)
        out = events[:upto]
        del events[:upto]
        cost = self._taken_cost
        for e in out:
            if cost is not None and e["type"] in _PRICED:
                c = e.get("cost_usd")
                cost = None if c is None else cost + c
        self._taken_cost = cost
        return out

    @property
    def seq(self) -> int:
        """How many events were made."""
        return self._seq

    def new_turn(self) -> None:
        """A person spoke: the following model calls belong to a new turn."""
        self.turn += 1

    # -- the conversation ----------------------------------------------------------------

    def user_blocks(self, blocks: list[dict[str, Any]], origin: str | None = None) -> None:
        """Content the model will see next, as (part of) a user message."""
        if self._pending and origin != self._pending_origin:
            self._flush()
        self._pending.extend(blocks)
        self._pending_origin = origin

    def _flush(self) -> None:
        if not self._pending:
            return
        message: dict[str, Any] = {"role": "user", "content": self._pending}
        if self._pending_origin:
            message["origin"] = self._pending_origin
        self._append(message)
        self._pending = []
        self._pending_origin = None

    def _append(self, message: dict[str, Any]) -> None:
        self._messages.append(message, self._hasher.add(message), self._prefix)

    def model_step(
        self,
        *,
        model: str,
        response: dict[str, Any],
        request_ts: str | None,
        response_ts: str | None,
        extra: dict[str, Any] | None = None,
    ) -> int:
        """One model call: the conversation so far in, ``response`` (Anthropic shape) out.

        Returns:
            The step number.
        """
        self._flush()
        if self.turn < 0:
            self.turn = 0
        step = self.step
        self.step += 1
        new = self._messages.since(self._prefix)
        self._emit(
            request_ts,
            LLM_REQUEST,
            step=step,
            turn=self.turn,
            request_hash=self._hasher.digest(model, self.instructions),
            model=model,
            system=self.instructions,
            tools=[],
            tool_choice=None,
            max_tokens=0,
            params={},
            messages_prefix=self._prefix,
            messages=new,
            unknown=[f for f in UNKNOWN_REQUEST_FIELDS if f != "system" or not self.instructions],
        )
        self._prefix = len(self._messages)
        usage = Usage.model_validate(response.get("usage") or {})
        price = price_for(model)
        has_usage = response.get("usage") is not None
        tokens = tokens_of(usage)
        cost = price.cost(tokens) if price is not None and has_usage else None
        self.model = model
        self._add_usage(usage, tokens)
        self.cost = add_costs(self.cost, cost)
        a, b = ts_millis(request_ts), ts_millis(response_ts)
        duration = float(max(b - a, 0)) if a is not None and b is not None else 0.0
        self._emit(
            response_ts,
            LLM_RESPONSE,
            step=step,
            turn=self.turn,
            response=response,
            provider=self.provider,
            source="live",
            cost_usd=cost,
            duration_ms=duration,
            matched=None,
            **(extra or {}),
        )
        content = response.get("content") or []
        self._append({"role": "assistant", "content": content})
        text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
        if text:
            self.last_text = text
        self.last_stop = response.get("stop_reason")
        return step

    def _add_usage(self, usage: Usage, tokens: Tokens) -> None:
        """``self.usage + usage`` (``tokens``: ``tokens_of(usage)``), the run's total's own
        counts kept from the last sum rather than read from it again (a usage split into
        cache writes or with a reasoning count is summed by its counts: see
        :meth:`~regista.types.Usage.__add__`)."""
        total = self.usage
        if not (
            _SPLIT.intersection(total.model_extra or ())
            or _SPLIT.intersection(usage.model_extra or ())
        ):
            self.usage = total + usage
            return
        summed = (self._total_tokens if self._total_of is total else tokens_of(total)) + tokens
        self.usage = Usage(**summed.usage_dict())
        self._total_tokens, self._total_of = summed, self.usage

    def tool_call(
        self, *, tool_use_id: str, name: str, input: Any, ts: str | None, turn: int | None = None
    ) -> int:
        """A tool call the model asked for; returns its step number."""
        step = self.step
        self.step += 1
        self.tool_calls += 1
        call = self._emit(
            ts,
            TOOL_CALL,
            step=step,
            turn=self.turn if turn is None else turn,
            tool_use_id=tool_use_id,
            name=name,
            input=input if isinstance(input, dict) else {"input": input},
        )
        self._called[step] = call["ts"]
        return step

    def tool_result(
        self,
        *,
        step: int,
        tool_use_id: str,
        name: str,
        content: str | list[dict[str, Any]],
        is_error: bool,
        ts: str | None,
        duration_ms: float | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """The result of the tool call of ``step``.

        ``duration_ms``: how long the tool ran, when the source says; else the time from
        the call to the result (their recorded times).
        """
        called = self._called.pop(step, None)
        if duration_ms is None:
            a, b = ts_millis(called), ts_millis(ts or self.last_ts)
            duration_ms = float(max(b - a, 0)) if a is not None and b is not None else 0.0
        self._emit(
            ts,
            TOOL_RESULT,
            step=step,
            tool_use_id=tool_use_id,
            name=name,
            content=content,
            is_error=is_error,
            source="live",
            duration_ms=duration_ms,
            **(extra or {}),
        )

    def compaction(
        self,
        *,
        summary: str,
        tokens_before: int,
        ts: str | None,
        usage: dict[str, Any] | None = None,
        after: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> int:
        """Older turns replaced by ``summary``; the model next sees ``after``.

        ``after`` defaults to one user message holding the summary.
        """
        self._flush()
        step = self.step
        self.step += 1
        replaced = self._messages.all()
        self._emit(
            ts,
            CONTEXT_COMPACTION,
            step=step,
            turn=max(self.turn, 0),
            replaced=replaced,
            summary=summary,
            request_hash=hashlib.sha256(b"compaction:" + summary.encode()).hexdigest(),
            tokens_before=tokens_before,
            provider=self.provider,
            source="live",
            usage=usage or {},
            cost_usd=(cost := _compaction_cost(self.model, usage)),
            duration_ms=0.0,
            **(extra or {}),
        )
        if usage:
            self.usage = self.usage + Usage.model_validate(usage)
        self.cost = add_costs(self.cost, cost)  # a compaction's cost is its run's
        self._messages = _Conversation(self._compacts)
        self._hasher = _Hasher(0)
        self._prefix = 0
        for message in after or []:
            self._append(message)
        return step

    def price(self, model: str, usage: dict[str, Any] | None) -> float | None:
        """What a call of ``model`` with ``usage`` cost, from the price table; ``None``
        (unknown) without a price or without a usage."""
        price = price_for(model)
        return None if price is None or usage is None else price.cost(tokens_of(usage))

    def late_usage(self, event: dict[str, Any], usage: dict[str, Any]) -> None:
        """The usage of a model call the source reports after the call's step was closed:
        it joins the call (priced) and the run's totals."""
        event["response"]["usage"] = usage
        price = price_for(self.model)
        event["cost_usd"] = None if price is None else price.cost(tokens_of(usage))
        self.usage = self.usage + Usage.model_validate(usage)
        self.cost = None  # summed again from the calls at the end

    def error(self, *, message: str, error_type: str, ts: str | None, step: int | None) -> None:
        self._emit(ts, ERROR, step=step, where="provider", error_type=error_type, message=message)

    def finish(
        self,
        *,
        stop_reason: str = "transcript_end",
        ended: str | None = None,
        duration_ms: float | None = None,
    ) -> list[dict[str, Any]]:
        """Close the run with ``session.end`` and return it.

        Args:
            stop_reason: Why the run ended, when the source says (a transcript just ends).
            ended: When it ended, when the source says (else its last event's time).
            duration_ms: How long it ran, when the source says (else first to last event).
        """
        self.hold = None  # the run is complete
        # The run's cost is the sum of its calls' and compactions', whoever wrote them
        # (a call priced late, an importer that emits its own): one unknown makes it unknown.
        self.cost = total_cost(
            [self._taken_cost, *(e.get("cost_usd") for e in self.events if e["type"] in _PRICED)]
        )
        a, b = ts_millis(self.first_ts), ts_millis(self.last_ts)
        if duration_ms is None:
            duration_ms = float(max(b - a, 0)) if a is not None and b is not None else 0.0
        self._emit(
            ended or self.last_ts,
            SESSION_END,
            stop_reason=stop_reason,
            output=self.last_text,
            turns=max(self.turn + 1, 0),
            steps=self.step,
            tool_calls=self.tool_calls,
            usage=self.usage.model_dump(),
            cost_usd=self.cost if self.step else 0.0,
            duration_ms=duration_ms,
            error=None,
            replay=None,
            last_stop_reason=self.last_stop,
        )
        return self.events


#: Fields the writer makes itself.
_ENVELOPE = frozenset(("schema_version", "session_id", "seq", "type"))


class RunEncoder:
    """The trace bytes of one run's events, made by :class:`TraceWriter` in memory.

    Feed it the run's events in order, in as many pieces as wanted: each call returns the
    bytes of the events it was given (a request refers to tool results given earlier).

    Args:
        session_id: The run's session id.
        redact: As for :class:`TraceWriter` (``None``: the process default).
    """

    def __init__(self, session_id: str, *, redact: bool | None = None) -> None:
        self._buf = io.BytesIO()
        self._writer = TraceWriter(
            f"{session_id}.jsonl",
            session_id,
            redact=redact,
            file=self._buf,
            referred_kept=_REFERRED_KEPT,
        )

    def encode(self, events: list[dict[str, Any]]) -> bytes:
        """The lines of ``events`` (the next ones of the run)."""
        append = self._writer.append
        for ev in events:
            append(EVENT_CLASSES[ev["type"]], {k: v for k, v in ev.items() if k not in _ENVELOPE})
        data = self._buf.getvalue()
        self._buf.seek(0)
        self._buf.truncate()
        return data


def events_bytes(events: list[dict[str, Any]]) -> bytes:
    """The trace file for ``events`` (one whole run)."""
    if not events:
        return b""
    return RunEncoder(str(events[0]["session_id"])).encode(events)


def _compaction_cost(model: str, usage: dict[str, Any] | None) -> float | None:
    """What a compaction's summarising call cost: unknown without a price for the model;
    nothing when the source records no usage for it (Codex bills it in the next call's)."""
    if not usage:
        return 0.0
    price = price_for(model)
    return None if price is None else price.cost(tokens_of(usage))


_PRICED = (LLM_RESPONSE, CONTEXT_COMPACTION)
_NO_TOKENS = Tokens()
