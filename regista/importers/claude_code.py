"""Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``) as regista runs.

One API response is written over several ``assistant`` lines (one content block each,
sharing ``message.id``, each repeating the usage): they become one model step, with the
usage counted once. ``tool_use`` blocks become tool steps, paired with their
``tool_result`` by id. ``compact_boundary`` and the ``isCompactSummary`` line that follows
become a compaction step. Subagents (inline sidechains, flat ``agent-*.jsonl`` files beside
the session, ``<session>/subagents/agent-*.jsonl``) become runs of their own, linked both
ways with the tool step that started them. Lines of other types are skipped and counted.
See docs/importers.md for what is and is not recorded.
"""

from __future__ import annotations

import os
import tempfile
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from regista.harness_notes import asked
from regista.importers._builder import ImportReport, RunBuilder, derived_session_id
from regista.importers._common import (
    Conversion,
    ImportedRun,
    JsonLinesFile,
    PieceJob,
    iter_json_file,
    iter_json_lines,
    report_of,
    session_files,
)
from regista.tokens import token_totals
from regista.trace.names import USAGE_COUNTS
from regista.trace.validate import block_problem

if TYPE_CHECKING:
    from regista.importers._cc_follow import Follower

__all__ = ["Job", "convert", "discover", "looks_like"]

FORMAT = "claude-code"
_MESSAGE_TYPES = {"user", "assistant", "system"}
_SUBAGENT_TOOLS = {"Task", "Agent"}
_KNOWN_TYPES = {
    "user",
    "assistant",
    "system",
    "summary",
    "progress",
    "file-history-snapshot",
    "queue-operation",
    "attachment",
    "custom-title",
    "ai-title",
    "last-prompt",
}


def looks_like(first: dict[str, Any]) -> bool:
    """Whether a decoded first line is a Claude Code transcript line."""
    kind = first.get("type")
    if not isinstance(kind, str):
        return False
    if kind in _MESSAGE_TYPES or kind == "progress":
        return "sessionId" in first or "uuid" in first
    return kind in _KNOWN_TYPES and (
        "leafUuid" in first or "sessionId" in first or "messageId" in first or "operation" in first
    )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


_STR_FIELDS = ("timestamp", "uuid", "parentUuid", "sessionId", "agentId", "requestId", "type")


def _clean(obj: dict[str, Any]) -> dict[str, Any]:
    """A line with fields of the wrong type dropped, so one odd line cannot stop an import."""
    get = obj.get
    for key in _STR_FIELDS:
        if not isinstance(get(key, ""), str):  # present, and not a string
            del obj[key]
    if "message" in obj and not isinstance(obj["message"], dict):
        obj["message"] = {}
    msg = get("message")
    if msg:
        for key in ("id", "model", "stop_reason", "stop_sequence"):
            if key in msg and not isinstance(msg[key], str):
                msg[key] = None
        usage = msg.get("usage")
        if usage is not None:
            if not isinstance(usage, dict):
                del msg["usage"]
            elif any(not _count_ok(usage[k]) for k in USAGE_COUNTS if k in usage):
                msg["usage"] = {
                    k: v for k, v in usage.items() if k not in USAGE_COUNTS or _count_ok(v)
                }
    return obj


def _count_ok(v: Any) -> bool:
    """A token count: an integer (not a boolean)."""
    return type(v) is int or (isinstance(v, int) and not isinstance(v, bool))


def _result_content(value: Any) -> str | list[dict[str, Any]]:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return [b for b in value if isinstance(b, dict)]
    return ""


def _blocks(content: Any) -> list[dict[str, Any]]:
    """A message's content blocks, each one a trace's reader accepts: a block that is not
    (no ``type``, a ``tool_use_id`` that is not a string, …) is left out, and so is a
    tool result's inner block that is not (``_survey`` says how many were left out)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    out = []
    for b in content:
        if type(b) is dict and b.get("type") == "tool_result":
            inner = b.get("content")
            if isinstance(inner, list):
                b = {**b, "content": [x for x in inner if block_problem(x) is None]}
        if block_problem(b) is None:
            out.append(b)
    return out


def _kept(content: Any) -> tuple[list[dict[str, Any]], int]:
    """``_blocks(content)`` and ``_left_out(content)``, in one pass over the blocks."""
    if not isinstance(content, list):
        return _blocks(content), 0
    out = []
    n = 0
    for b in content:
        if type(b) is dict and b.get("type") == "tool_result":
            inner = b.get("content")
            if isinstance(inner, list):
                kept = [x for x in inner if block_problem(x) is None]
                n += len(inner) - len(kept)
                b = {**b, "content": kept}  # its own problem is the same with none of them
        if block_problem(b) is None:
            out.append(b)
        else:
            n += 1
    return out, n


def _left_out(content: Any) -> int:
    """How many of a message's content blocks (and of its tool results' inner blocks)
    ``_blocks`` leaves out."""
    if not isinstance(content, list):
        return 0
    n = 0
    for b in content:
        inner = b.get("content") if type(b) is dict and b.get("type") == "tool_result" else None
        if isinstance(inner, list):
            n += sum(1 for x in inner if block_problem(x) is not None)
            b = {**b, "content": []}
        n += block_problem(b) is not None
    return n


def _is_prompt(obj: dict[str, Any]) -> bool:
    """A line a person typed (not a tool result, injected text, a harness note such as a
    local command's output or an interruption, or the compaction summary)."""
    if obj.get("type") != "user" or obj.get("isMeta") or obj.get("isCompactSummary"):
        return False
    content = (obj.get("message") or {}).get("content")
    if isinstance(content, str):
        return bool(asked(content))
    blocks = _blocks(content)
    if not blocks or any(b.get("type") == "tool_result" for b in blocks):
        return False
    texts = [b for b in blocks if b.get("type") == "text"]
    return len(texts) < len(blocks) or bool(asked(_text(texts)))


# -- answers written over several lines -----------------------------------------------------

#: The lines of a thread after an answer's first line in which its other lines are looked
#: for (a transcript that needs more is read again with the window it needs).
_WINDOW = 64

#: The kinds of lines a conversion reads (the others are counted as skipped, or are titles).
_CONVERTED = frozenset({"user", "assistant", "system"})

#: A thread's line, with the other lines of its answer when it is an answer's first.
Item = tuple[dict[str, Any], list[dict[str, Any]] | None]


class _Grouper:
    """A thread's lines in order, each answer's first line with all the lines of its answer.

    Claude Code writes one API response over several lines (one content block each) that
    share ``message.id``: next to each other, at times around its tool results. An
    answer's first line is held until ``window`` more lines of its thread have come (or
    the thread ended), and gets every line of its answer that came by then; every line
    is still given out in order, the answer's later ones with no lines of their own (they
    are part of the first's). An answer's line that comes after the answer was given out
    was missed: :attr:`need` says what window would have caught it (the later lines of
    an API error are never read: missing them changes nothing).

    Only the message ids seen are kept (one small entry per model call), and the lines
    of the window.
    """

    def __init__(self, window: int) -> None:
        self.window = window
        #: The window the lines read so far needed, when larger than ``window`` (else 0).
        self.need = 0
        self._queue: deque[tuple[int, dict[str, Any], list[dict[str, Any]] | None, Any]] = deque()
        #: message id -> the index of its first line (``-1 - index``: an API error)
        self._first: dict[str, int] = {}
        self._open: dict[str, list[dict[str, Any]]] = {}
        self._n = 0

    def push(self, obj: dict[str, Any]) -> list[Item]:
        """Add the next line; the lines now ready, in order."""
        i = self._n
        self._n = i + 1
        group = None
        mid = None
        if obj.get("type") == "assistant":
            message = obj.get("message") or {}
            mid = message.get("id")
            if mid:
                found = self._first.get(mid)
                if found is None:
                    error = bool(obj.get("isApiErrorMessage")) or message.get("model") == (
                        "<synthetic>"
                    )
                    self._first[mid] = -1 - i if error else i
                    group = self._open[mid] = [obj]
                elif (lines := self._open.get(mid)) is not None:
                    lines.append(obj)
                elif found >= 0:
                    self.need = max(self.need, i - found)
        self._queue.append((i, obj, group, mid))
        if group is None and len(self._queue) == 1:
            self._queue.popleft()
            return [(obj, None)]
        return self._ready(False)

    def _complete(self, group: list[dict[str, Any]]) -> bool:
        if any((line.get("message") or {}).get("stop_reason") for line in group):
            return True
        return any(obj.get("type") in ("user", "system") for _, obj, _, _ in self._queue)

    def end(self) -> list[Item]:
        """The thread ended: the lines held."""
        return self._ready(True)

    def answered(self) -> list[Item]:
        """The lines held that wait only for answers already complete: a line of theirs has
        a stop reason (Claude Code writes it on an answer's last line), or a person's or
        the system's line came after them. A transcript being written gives them out at
        once instead of waiting for its next lines."""
        return self._ready(False, answered=True)

    def _ready(self, end: bool, answered: bool = False) -> list[Item]:
        out: list[Item] = []
        queue = self._queue
        while queue:
            i, obj, group, mid = queue[0]
            if group is not None:
                if (
                    not end
                    and i + self.window >= self._n
                    and not (answered and self._complete(group))
                ):
                    break
                del self._open[mid]
            queue.popleft()
            out.append((obj, group))
        return out


# -- what a thread's conversion needs to know first -----------------------------------------


class _Facts:
    """What converting one thread (the session, or a subagent) needs before its first
    event, gathered in one pass over its lines, which are not kept: its start, task,
    model and working folders, its title, which tool calls started subagents, and what
    the conversion will skip or leave unpaired (so the run's ``session.start`` can say it
    before the rest is written; :meth:`_pair` follows :meth:`_Thread.steps` line for
    line)."""

    def __init__(self, key: str, meta: dict[str, Any], window: int, report: ImportReport) -> None:
        self.key = key
        self.meta = meta
        self.report = report
        self.lines = 0
        self.first_ts: str | None = None
        self.task: str | None = None
        self.model: Any = None
        self.first_user: str | None = None
        self.fork: Any = None
        self.agent: str | None = None
        self.values: dict[str, list[Any]] = {"cwd": [], "gitBranch": [], "version": []}
        #: (line index, summary, names a message, the message's uuid) of summary lines
        self.summaries: list[tuple[int, Any, bool, Any]] = []
        self._leaves: set[str] = set()
        self.found: set[str] = set()
        self.owners: dict[str, str] = {}
        self.prompts: list[tuple[str, str]] = []
        self.boundaries: list[str] = []
        self.usage: dict[str, dict[str, Any]] | None = {} if key.startswith("acompact") else None
        self.notes: list[str] = []
        self.left_out = 0
        #: Compaction lines (boundaries and summaries): a thread with none keeps no
        #: conversation for one.
        self.compactions = 0
        #: Where its lines are read again: its own file, or the spill's offsets; which
        #: lines of the file (by number) are.
        self.file: Path | None = None
        self.offsets = array("q")
        self.wanted: bytearray | None = bytearray()
        #: Lines the conversion reads (user, assistant and system lines).
        self.converted = 0
        #: The window the thread needs, when larger than the one it was read with.
        self.need = 0
        self._grouper = _Grouper(window)
        self._pending: set[str] = set()
        self._done: set[str] = set()

    def add(self, obj: dict[str, Any], lineno: int = 0) -> None:
        """Learn from the thread's next line (cleaned; its number in its file)."""
        i = self.lines
        self.lines = i + 1
        if i == 0:
            self.fork = obj.get("registaFork")
        if self.first_ts is None and (ts := obj.get("timestamp")):
            self.first_ts = ts
        if self.agent is None and (agent := obj.get("agentId")):
            self.agent = str(agent)
        for name, values in self.values.items():
            v = obj.get(name)
            if v and v not in values:
                values.append(v)
        kind = obj.get("type")
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if kind == "summary":
            leaf = obj.get("leafUuid")
            self.summaries.append((i, obj.get("summary"), "leafUuid" in obj, leaf))
            if isinstance(leaf, str):
                self._leaves.add(leaf)
        if self._leaves and (uuid := obj.get("uuid")) in self._leaves:
            self.found.add(uuid)
        result = obj.get("toolUseResult")
        if isinstance(result, dict) and result.get("agentId"):
            for block in _blocks(content):
                if block.get("type") == "tool_result":
                    self.owners.setdefault(str(result["agentId"]), str(block.get("tool_use_id")))
        if kind == "user":
            if obj.get("isCompactSummary"):
                self.compactions += 1
            if self.first_user is None:
                self.first_user = _text(content)
            if self.task is None and _is_prompt(obj):
                self.task = _text(content)
            self.left_out += _left_out(content)
        elif kind == "assistant":
            if self.model is None and (m := (message or {}).get("model")) and m != "<synthetic>":
                self.model = m
            blocks, left_out = _kept(content)
            for block in blocks:
                if block.get("type") == "tool_use" and block.get("name") in _SUBAGENT_TOOLS:
                    inp = block.get("input")
                    prompt = inp.get("prompt") if isinstance(inp, dict) else None
                    self.prompts.append((str(block.get("id")), str(prompt or "")))
            self.left_out += left_out
            usage = (message or {}).get("usage")
            if self.usage is not None and isinstance(usage, dict):
                _add_usage(self.usage, obj, usage)
        elif kind == "system":
            subtype = obj.get("subtype")
            if subtype == "compact_boundary":
                self.boundaries.append(f"compact:{obj.get('uuid')}")
                self.compactions += 1
            if subtype not in ("compact_boundary", "api_error") and obj.get("level") != "error":
                self.report.skip(f"system/{subtype}")
        elif kind != "summary":
            self.report.skip(str(kind))
        if kind in _CONVERTED:  # the others are not read again
            self.converted += 1
            wanted = self.wanted
            if wanted is not None:
                if lineno >= len(wanted):
                    wanted.extend(bytes(lineno + 1 - len(wanted) + (len(wanted) >> 2)))
                wanted[lineno] = 1
            for item in self._grouper.push(obj):
                self._pair(item)

    def _pair(self, item: Item) -> None:
        """Which tool results find their call, in the order the conversion meets them."""
        obj, group = item
        kind = obj.get("type")
        if kind == "user":
            if obj.get("isCompactSummary"):
                return
            for block in _blocks((obj.get("message") or {}).get("content")):
                if block.get("type") != "tool_result":
                    continue
                tid = str(block.get("tool_use_id") or "")
                if tid in self._pending:
                    self._pending.discard(tid)
                else:
                    self.notes.append(
                        f"a tool result ({tid or 'no id'}) has no tool call in its thread: "
                        "kept in the conversation only"
                    )
        elif kind == "assistant":
            message = obj.get("message") or {}
            mid = message.get("id") or f"line:{obj.get('uuid')}"
            if mid in self._done:
                return
            self._done.add(mid)
            if obj.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
                return
            for line in group or [obj]:
                for block in _blocks((line.get("message") or {}).get("content")):
                    if block.get("type") == "tool_use":
                        self._pending.add(str(block.get("id") or ""))

    def close(self, lines: Callable[[], Iterator[dict[str, Any]]]) -> None:
        """The thread's lines are all read (``lines`` reads them again, when a title
        names a message written before it)."""
        for item in self._grouper.end():
            self._pair(item)
        self.need = self._grouper.need
        del self._grouper, self._pending, self._done  # what the pass needed, not the result
        if self.left_out:
            n = self.left_out
            self.notes.append(f"{n} malformed content block{'s' if n > 1 else ''} left out")
        unresolved = {
            leaf for _, _, _, leaf in self.summaries if isinstance(leaf, str)
        } - self.found
        if unresolved:
            upto = max(i for i, _, _, leaf in self.summaries if leaf in unresolved)
            for n, obj in enumerate(lines()):
                if n >= upto:
                    break
                if obj.get("uuid") in unresolved:
                    self.found.add(obj["uuid"])

    def titles(self) -> list[Any]:
        """The summary lines that title the thread (naming one of its messages, or none);
        the last is its title."""
        return [
            summary
            for _, summary, named, leaf in self.summaries
            if not named or (isinstance(leaf, str) and leaf in self.found)
        ]

    def usage_total(self, lines: Callable[[], Iterator[dict[str, Any]]]) -> dict[str, Any]:
        """Token counts of the thread's model calls, each call counted once."""
        per_call = self.usage
        if per_call is None:  # not gathered: only a compaction's subagent needs them
            per_call = {}
            for obj in lines():
                usage = (obj.get("message") or {}).get("usage")
                if obj.get("type") == "assistant" and isinstance(usage, dict):
                    _add_usage(per_call, obj, usage)
        return token_totals(per_call.values()).usage_dict()


def _add_usage(per_call: dict[str, dict[str, Any]], obj: dict[str, Any], usage: Any) -> None:
    mid = str((obj.get("message") or {}).get("id") or obj.get("uuid"))
    if mid not in per_call or _out(usage) >= _out(per_call[mid]):
        per_call[mid] = usage


# -- one thread of lines → one run ---------------------------------------------------------


class _Thread:
    """Converts the lines of one conversation thread (a session or one subagent)."""

    def __init__(
        self,
        facts: _Facts,
        lines: Iterator[dict[str, Any]],
        *,
        session_id: str,
        metadata: dict[str, Any],
        links: dict[str, dict[str, Any]],
        window: int,
        compact_usage: dict[str, dict[str, Any]] | None = None,
        import_report: dict[str, Any] | None = None,
        forked_from: dict[str, Any] | None = None,
        follow: Follower | None = None,
    ) -> None:
        self.lines = lines
        self.links = links
        #: The job of a transcript being written: told of each subagent call not linked
        #: yet, each tool result, each compaction (a subagent may start after the call).
        self.follow = follow
        self.window = window
        self._grouper = _Grouper(window)
        self._done: set[str] = set()
        self._last_input_ts: str | None = None
        self._boundary: dict[str, Any] | None = None
        self.compact_usage = compact_usage or {}
        #: tool_use_id / compaction key -> the step that started a subagent.
        self.started: dict[str, int] = {}
        self.tool_steps: dict[str, tuple[int, str]] = {}
        meta = dict(metadata)
        for key, name in (("cwd", "cwd"), ("git_branch", "gitBranch"), ("version", "version")):
            values = facts.values[name]
            if values:
                meta[key] = values[0]
                if len(values) > 1:
                    meta[key + "_changes"] = values
        # A summary line titles the session holding the message it names (``leafUuid``):
        # Claude Code writes those of earlier sessions at the top of a new one's file.
        titles = facts.titles()
        if titles:
            meta["title"] = titles[-1]
        self.b = RunBuilder(
            session_id,
            task=facts.task or "",
            model=str(facts.model or "unknown"),
            provider="anthropic",
            started=facts.first_ts or "1970-01-01T00:00:00.000Z",
            metadata=meta,
            import_report=import_report,
            forked_from=forked_from,
            compacts=facts.compactions > 0,
        )

    def steps(self, *, live: bool = False) -> Iterator[None]:
        """Convert the lines one by one (yielding after each); the last closes the run
        (``live``: the transcript is being written; the run stays open, and
        :meth:`feed` converts the lines appended later).

        What a line adds is final once the next is asked for, so a reader may take the
        builder's events as they come.
        """
        for obj in self.lines:
            for _ in range(self.feed(obj)):
                yield None
        if live:
            self.feed_answered()
            return
        for item in self._grouper.end():
            if self._step(item):
                yield None
        self._finish()

    def end(self) -> None:
        """A thread being written is complete: convert the lines held, close the run."""
        for item in self._grouper.end():
            self._step(item)
        self._finish()

    def _finish(self) -> None:
        if self._boundary is not None:
            self._compact(self._boundary, "", None)
        self.b.finish()

    def feed(self, obj: dict[str, Any]) -> int:
        """Convert the next line (and those it released); how many counted."""
        if obj.get("type") not in _CONVERTED:
            return 0  # counted as skipped, or a title (see _Facts)
        n = 0
        for item in self._grouper.push(obj):
            n += self._step(item)
        return n

    def feed_answered(self) -> None:
        """Convert the lines held for answers already complete (a transcript being written
        has no next lines yet)."""
        for item in self._grouper.answered():
            self._step(item)

    def _step(self, item: Item) -> bool:
        """Convert one line (an answer's first: the whole answer); whether it counted."""
        obj, group = item
        kind = obj.get("type")
        ts = obj.get("timestamp")
        summary_line = kind == "user" and obj.get("isCompactSummary")
        if self._boundary is not None and kind in ("user", "assistant") and not summary_line:
            self._compact(self._boundary, "", None)  # a boundary with no summary after it
            self._boundary = None
        if kind == "user":
            if obj.get("isCompactSummary"):
                summary = _text((obj.get("message") or {}).get("content"))
                self._compact(self._boundary, summary, ts)
                self._boundary = None
            else:
                self._user(obj)
            self._last_input_ts = ts or self._last_input_ts
        elif kind == "assistant":
            if group is None:  # a later line of an answer, or a line with no message id
                message = obj.get("message") or {}
                if message.get("id"):
                    return False
                mid = f"line:{obj.get('uuid')}"
                if mid in self._done:
                    return False
                self._done.add(mid)
            self._assistant(obj, group or [obj], self._last_input_ts)
            self._last_input_ts = None
        elif kind == "system":
            subtype = obj.get("subtype")
            if subtype == "compact_boundary":
                self._boundary = obj
            elif subtype == "api_error" or obj.get("level") == "error":
                self.b.error(
                    message=str(obj.get("content") or subtype or "error"),
                    error_type=str(subtype or "system_error"),
                    ts=ts,
                    step=None,
                )
            # other subtypes are skipped (counted by _Facts)
        # summary lines naming one of its messages are the session's title, kept in the
        # metadata; other types are skipped (counted by _Facts)
        return True

    def _user(self, obj: dict[str, Any]) -> None:
        message = obj.get("message") or {}
        content = message.get("content")
        ts = obj.get("timestamp")
        if _is_prompt(obj):
            self.b.new_turn()
        blocks = _blocks(content)
        for block in blocks:
            if block.get("type") != "tool_result":
                continue
            tid = str(block.get("tool_use_id") or "")
            found = self.tool_steps.pop(tid, None)
            if found is None:  # kept in the conversation only (noted by _survey)
                continue
            step, name = found
            extra: dict[str, Any] = {}
            if "toolUseResult" in obj:
                extra["tool_use_result"] = obj["toolUseResult"]
            if self.follow is not None:
                self.follow.result(self, tid, obj)
            link = self.links.get(tid)
            if link is not None:
                extra["subagent"] = link
            self.b.tool_result(
                step=step,
                tool_use_id=tid,
                name=name,
                content=_result_content(block.get("content")),
                is_error=block.get("is_error") is True,
                ts=ts,
                extra=extra,
            )
        if blocks:
            self.b.user_blocks(blocks, "meta" if obj.get("isMeta") else None)

    def _assistant(
        self, first: dict[str, Any], lines: list[dict[str, Any]], request_ts: str | None
    ) -> None:
        if self.follow is not None:
            self.follow.answered(self)
        message = first.get("message") or {}
        if first.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
            self.b.error(
                message=_text(message.get("content")) or "API error",
                error_type="api_error",
                ts=first.get("timestamp"),
                step=None,
            )
            return
        content: list[dict[str, Any]] = []
        best: dict[str, Any] | None = None
        stop: str | None = None
        for line in lines:
            msg = line.get("message") or {}
            content.extend(_blocks(msg.get("content")))
            usage = msg.get("usage")
            if isinstance(usage, dict) and (
                best is None or _out(usage) >= _out(best)
            ):  # the same usage on every line: count it once, the most complete copy
                best = usage
            stop = msg.get("stop_reason") or stop
        response: dict[str, Any] = {
            "id": message.get("id"),
            "model": message.get("model"),
            "role": "assistant",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": message.get("stop_sequence"),
        }
        if best is not None:
            response["usage"] = best
        extra: dict[str, Any] = {"uuids": [ln.get("uuid") for ln in lines]}
        if first.get("requestId"):
            extra["request_id"] = first["requestId"]
        model = str(message.get("model") or "unknown")
        self.b.model_step(
            model=model,
            response=response,
            request_ts=request_ts or first.get("timestamp"),
            response_ts=lines[-1].get("timestamp"),
            extra=extra,
        )
        for block in content:
            if block.get("type") != "tool_use":
                continue
            tid = str(block.get("id") or "")
            name = str(block.get("name") or "?")
            step = self.b.tool_call(
                tool_use_id=tid, name=name, input=block.get("input"), ts=lines[-1].get("timestamp")
            )
            if tid in self.links:
                self.b.events[-1]["subagent"] = self.links[tid]
                self.started[tid] = step
            elif self.follow is not None and name in _SUBAGENT_TOOLS:
                self.follow.call(self, tid, block, step, lines[-1])
            self.tool_steps[tid] = (step, name)

    def _compact(self, boundary: dict[str, Any] | None, summary: str, ts: str | None) -> None:
        meta = (boundary or {}).get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        extra: dict[str, Any] = {}
        if isinstance(meta.get("trigger"), str):
            extra["trigger"] = meta["trigger"]
        key = f"compact:{(boundary or {}).get('uuid')}"
        if self.follow is not None and key not in self.links:
            self.follow.compaction(self, key)
        link = self.links.get(key)
        if link is not None:
            extra["subagent"] = link
        pre = meta.get("preTokens")
        step = self.b.compaction(
            summary=summary,
            tokens_before=pre if isinstance(pre, int) else 0,
            ts=ts or (boundary or {}).get("timestamp"),
            usage=self.compact_usage.get(key),
            after=[{"role": "user", "content": [{"type": "text", "text": summary}]}]
            if summary
            else [],
            extra=extra,
        )
        if link is not None:
            self.started[key] = step


def _out(usage: dict[str, Any]) -> int:
    n = usage.get("output_tokens")
    return n if isinstance(n, int) else 0


def _distinct(values: Iterable[Any]) -> list[Any]:
    seen: list[Any] = []
    for v in values:
        if v and v not in seen:
            seen.append(v)
    return seen


# -- a session and its subagents -----------------------------------------------------------


class _Spill:
    """The inline subagents' lines of a session, kept in a temporary file (not in memory)
    until their runs are converted, after the session's."""

    def __init__(self) -> None:
        self._file: Any = None

    def add(self, facts: _Facts, obj: dict[str, Any]) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 - lives with the job
        self._file.seek(0, os.SEEK_END)
        facts.offsets.append(self._file.tell())
        self._file.write(orjson.dumps(obj) + b"\n")

    def lines(self, facts: _Facts) -> Iterator[dict[str, Any]]:
        f = self._file
        for offset in facts.offsets:
            f.seek(offset)
            yield orjson.loads(f.readline())


class _Gathered:
    """The first pass over a transcript (and its subagents' files): every thread's
    :class:`_Facts`, each with a way to read its lines again."""

    def __init__(
        self, path: Path, data: bytes | None, subagents: bool, window: int, live: bool = False
    ) -> None:
        self.report = report = ImportReport()
        self.path = path
        self.data = data
        self.live = live
        self.spill = _Spill()
        main = self.main = _Facts("", {}, window, report)
        segs: list[_Facts] = []
        seg_of: dict[str, int] = {}
        by_agent: dict[str, _Facts] = {}
        source_sid: str | None = None
        first_ts: str | None = None
        for n, obj in self._raw(report):
            obj = _clean(obj)
            if source_sid is None and obj.get("sessionId"):
                source_sid = str(obj["sessionId"])
            if first_ts is None and obj.get("timestamp"):
                first_ts = obj["timestamp"]
            if not obj.get("isSidechain"):
                main.add(obj, n)
                continue
            # inline subagents: by agent id, else one per chain of parentUuid
            agent = obj.get("agentId")
            if agent:
                facts = by_agent.get(agent)
                if facts is None:
                    facts = by_agent[agent] = _Facts(agent, {"layout": "inline"}, window, report)
            else:
                parent = obj.get("parentUuid")
                idx = seg_of.get(parent) if isinstance(parent, str) else None
                if idx is None:
                    idx = len(segs)
                    segs.append(_Facts(f"sidechain-{idx}", {"layout": "inline"}, window, report))
                facts = segs[idx]
                if isinstance(obj.get("uuid"), str):
                    seg_of[obj["uuid"]] = idx
            facts.wanted = None  # read from the spill
            facts.add(obj)
            self.spill.add(facts, obj)
        self.source_sid = source_sid or path.stem
        self.first_ts = first_ts
        inline = [*segs, *by_agent.values()]
        files: list[_Facts] = []
        for file in _agent_files(path, self.source_sid) if subagents else []:
            meta: dict[str, Any] = {"layout": "file", "path": str(file.resolve())}
            facts = _Facts(file.stem.removeprefix("agent-"), meta, window, report)
            facts.file = file
            for n, obj in iter_json_file(file, report):
                facts.add(_clean(obj), n)
            sidecar = file.with_suffix(".meta.json")
            if sidecar.is_file():
                try:
                    meta["agent_meta"] = orjson.loads(sidecar.read_bytes())
                except (orjson.JSONDecodeError, OSError):
                    report.notes.append(f"{sidecar}: not valid JSON (ignored)")
            files.append(facts)
        self.threads = [*inline, *files]
        for facts in [main, *self.threads]:
            facts.close(partial(self.lines, facts, True))
        self.need = max(f.need for f in [main, *self.threads])

    def _raw(
        self, report: ImportReport, wanted: bytearray | None = None
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        if self.data is not None:
            return iter_json_lines(self.data, self.path, report, 0, wanted)
        # a last line still being written is read later (by the live job's tail)
        return JsonLinesFile(self.path, report, wanted).read(last=not self.live)

    def lines(self, facts: _Facts, every: bool = False) -> Iterator[dict[str, Any]]:
        """The lines of ``facts``'s thread that its conversion reads (``every``: all of
        them), read again (cleaned). Those it does not read are not even decoded."""
        wanted = None if every else facts.wanted
        if facts is self.main:
            for _, obj in self._raw(ImportReport(), wanted):
                if not obj.get("isSidechain"):
                    yield _clean(obj)
        elif facts.file is not None:
            for _, obj in iter_json_file(facts.file, ImportReport(), wanted):
                yield _clean(obj)
        else:
            for obj in self.spill.lines(facts):
                if every or obj.get("type") in _CONVERTED:
                    yield obj


def convert(path: Path, data: bytes | None = None, *, subagents: bool = True) -> Conversion:
    """Convert the session transcript ``path`` (and its subagents) into runs.

    Args:
        path: The session's ``.jsonl`` file.
        data: Its bytes, when already read.
        subagents: Also convert the subagent files beside it.
    """
    return Job(path, data, subagents=subagents).finish()


class Job(PieceJob):
    """One transcript's conversion, done a piece at a time, in memory bounded whatever the
    transcript's size.

    Making the job reads the transcript (and its subagents' files) once, keeping only what
    the conversion needs to know before its first event (:class:`_Facts`: the assistant
    lines of each API call are found again as the conversion reads, see
    :class:`_Grouper`). The events are then made in file order by :meth:`advance`, reading
    the lines again, the main run first; each run's events are final as soon as they are
    made, so a viewer can show them while the rest converts, and a writer can write them
    out and forget them (``into``). :meth:`finish` converts whatever is left and returns
    the :class:`Conversion` (the same as :func:`convert`'s).

    Its arguments are :class:`~regista.importers._common.PieceJob`'s (``path``: the
    session's ``.jsonl`` file; ``subagents``: the subagent files beside it). The
    subagents' runs are added to ``conv.runs`` once the main run is done.
    """

    def _start(self, path: Path, data: bytes | None, subagents: bool) -> None:
        live = self.live
        window = _WINDOW
        while True:
            gathered = _Gathered(path, data, subagents, window, live)
            if not gathered.need:
                break
            window = max(gathered.need, 2 * window)  # an answer's lines lie further apart
        self.window = window
        #: The main thread's lines, read as the transcript grows (when ``live``).
        self._tail = JsonLinesFile(path, ImportReport()) if live else None
        #: Transcript lines read for the main run as it grew (what :meth:`grow` costs).
        self.parsed = 0
        self._main: _Thread | None = None
        self._gathered = g = gathered
        report = g.report
        main = g.main
        main_sid = derived_session_id(g.source_sid, main.first_ts or g.first_ts)
        origin = {"format": FORMAT, "path": str(path.resolve()), "session_id": g.source_sid}

        # Which tool call (or compaction) started each thread.
        sids = {f.key: derived_session_id(f"{g.source_sid}:{f.key}", f.first_ts) for f in g.threads}
        links: dict[str, dict[str, Any]] = {}
        compact_usage: dict[str, dict[str, Any]] = {}
        owner: dict[str, str] = {}  # thread key -> tool_use_id / compaction key that started it
        prompts: list[tuple[str, str]] = []  # (tool_use_id, prompt) of subagent calls, in order
        for facts in [main, *g.threads]:
            for agent, tid in facts.owners.items():
                owner.setdefault(agent, tid)
            prompts += facts.prompts
        boundaries = list(main.boundaries)
        taken = set(owner.values())
        for facts in g.threads:
            key = facts.key
            agent_meta = facts.meta.get("agent_meta")
            tool_id = agent_meta.get("toolUseId") if isinstance(agent_meta, dict) else None
            if key not in owner and isinstance(tool_id, str):
                owner[key] = tool_id
            if key.startswith("acompact") and key not in owner and boundaries:
                owner[key] = boundaries.pop(0)
            if key not in owner:  # older layouts: the subagent's first prompt is the Task prompt
                prompt = facts.first_user or ""
                for tid, p in prompts:
                    if tid not in taken and p and p == prompt:
                        owner[key] = tid
                        break
            if key in owner:
                taken.add(owner[key])
                links[owner[key]] = {"session_id": sids[key], "agent_id": key}
                if owner[key].startswith("compact:"):
                    compact_usage[owner[key]] = facts.usage_total(partial(g.lines, facts, True))
        for facts in g.threads:
            if facts.key not in owner and not facts.key.startswith("sidechain"):
                report.notes.append(
                    f"subagent {facts.key}: no tool call starts it (kept as its own run)"
                )
        for facts in [main, *g.threads]:
            report.notes += facts.notes

        # Convert: parents before children, so a child knows its parent's step.
        self.todo: list[tuple[str, str, _Facts, dict[str, Any]]] = [("", main_sid, main, {})]
        self.todo += [(f.key, sids[f.key], f, f.meta) for f in g.threads]
        self.conv = Conversion(format=FORMAT, source=path, report=report)
        self.origin = origin
        self.owner = owner
        self.links = links
        self.compact_usage = compact_usage
        #: tool_use_id / compaction key -> (run sid, step) of the step that started a thread.
        self.starts: dict[str, tuple[str, int]] = {}
        self._thread: tuple[_Thread, str] | None = None
        self._follower: Follower | None = None
        if live and subagents:  # subagents that start while the transcript is followed
            from regista.importers._cc_follow import Follower

            self._follower = Follower(self, main, g.threads)

    def _main_lines(self) -> int:
        return int(self.todo[0][2].converted)

    def _spoolable(self, run: ImportedRun) -> bool:
        # a run whose parent step is not known yet is written once it is
        return run.parent is None or run.parent["step"] >= 0

    def _open(self, n: int) -> Iterator[None]:
        key, sid, facts, meta = self.todo[n]
        parent: dict[str, Any] | None = None
        if key and key in self.owner:
            run_sid, step = self.starts.get(self.owner[key], (self.main_sid, -1))
            parent = {"session_id": run_sid, "step": step, "tool_use_id": self.owner[key]}
        thread_meta = self.thread_meta(key, meta, parent)
        live = not key and self._tail is not None
        thread = _Thread(
            facts,
            self._tail_lines() if live else self._gathered.lines(facts),
            session_id=sid,
            metadata=thread_meta,
            links=self.links,
            window=self.window,
            compact_usage=self.compact_usage,
            import_report=None if key else report_of(self.conv.report),
            forked_from=None if key else _fork_link(facts.fork),
            follow=self._follower if live else None,
        )
        self.conv.runs.append(ImportedRun(sid, thread.b.events, parent, builder=thread.b))
        if not key:
            self._main = thread
        self._thread = (thread, sid)
        return thread.steps(live=live)

    def thread_meta(
        self, key: str, meta: dict[str, Any], parent: dict[str, Any] | None
    ) -> dict[str, Any]:
        """The ``session.start`` metadata of the thread ``key`` ("": the session)."""
        thread_meta: dict[str, Any] = {
            "imported_from": {**self.origin, **({"agent_id": key} if key else {})}
        }
        thread_meta.update({k: v for k, v in meta.items() if k != "layout"} if key else {})
        if key:
            thread_meta["subagent_layout"] = meta.get("layout")
        if parent is not None:
            thread_meta["parent"] = parent
        return thread_meta

    def _closed(self, n: int) -> None:
        assert self._thread is not None
        thread, sid = self._thread
        self.starts.update({k: (sid, step) for k, step in thread.started.items()})

    def _ended(self) -> None:
        _fix_parent_steps(self.conv, self.starts)

    def _tail_lines(self) -> Iterator[dict[str, Any]]:
        assert self._tail is not None
        for _, obj in self._tail.read(last=False):
            self.parsed += 1
            if not obj.get("isSidechain"):
                yield _clean(obj)

    def grow(self) -> None:
        """Convert the lines a transcript being written (``live``) was appended since it
        was last read, and only those: the main run's new events follow the ones made
        (its start stays that of the first reading). Subagents that started since are
        linked and followed (see :mod:`regista.importers._cc_follow`)."""
        thread = self._main
        assert thread is not None and self.done
        follower = self._follower
        if follower is not None:
            follower.discover()
        for obj in self._tail_lines():
            thread.feed(obj)
        thread.feed_answered()
        if follower is not None:
            follower.grow()

    def watched(self) -> list[Path]:
        return [] if self._follower is None else self._follower.watched()


def _fork_link(link: Any) -> dict[str, Any] | None:
    """The run a session was forked from, when ``regista fork … --resume-in claude`` wrote
    it (``registaFork`` on its first line, ``link``): its ``forked_from``."""
    if isinstance(link, dict) and isinstance(link.get("session_id"), str):
        at = link.get("at_step")
        if isinstance(at, int) and not isinstance(at, bool) and at >= 0:
            return link
    return None


def _agent_files(path: Path, source_sid: str) -> list[Path]:
    """Subagent transcripts of the session ``path``: nested and flat layouts."""
    found: list[Path] = []
    nested = path.parent / path.stem / "subagents"
    if nested.is_dir():
        found.extend(sorted(nested.glob("agent-*.jsonl")))
    for candidate in sorted(path.parent.glob("agent-*.jsonl")):
        if _first_session_id(candidate) == source_sid:
            found.append(candidate)
    return found


def _first_session_id(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            for raw in f:
                try:
                    obj = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(obj, dict) and obj.get("sessionId"):
                    return str(obj["sessionId"])
    except OSError:
        return None
    return None


def _fix_parent_steps(conv: Conversion, starts: dict[str, tuple[str, int]]) -> None:
    """A child converted before its parent's step was known gets the step now."""
    for run in conv.runs:
        parent = run.parent
        if parent is None or parent["step"] >= 0:
            continue
        found = starts.get(parent["tool_use_id"])
        if found is not None:
            parent["session_id"], parent["step"] = found
            run.events[0]["metadata"]["parent"] = parent


def discover(paths: Iterable[Path]) -> list[Path]:
    """Session transcripts under ``paths`` (files, session folders, or the projects root)."""
    return session_files(paths, _in_folder)


def _in_folder(folder: Path) -> list[Path]:
    # a subagent's transcript is imported with its parent
    return [
        f
        for f in sorted(folder.rglob("*.jsonl"))
        if not f.name.startswith("agent-") and "subagents" not in f.parts
    ]
