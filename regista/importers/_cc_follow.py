"""Subagents that start while a Claude Code transcript is followed.

A session followed as it is written (:meth:`regista.importers.claude_code.Job.grow`) may
start a subagent after its first conversion: its transcript appears in
``<session>/subagents/`` and grows there. Each growth lists that folder once; a new
subagent's transcript is linked to the call that started it as a whole conversion links it
(the ``Task``/``Agent`` call whose prompt is the subagent's first prompt, or the one its
``.meta.json`` names, or the one whose result names its ``agentId``; a compaction agent,
the next compaction), and its run is converted and followed as it grows, until the call's
result comes (its ``session.end``).

Events are never changed once written, so the call's ``tool.call`` event waits (the run's
builder holds it, and the events after it) until its subagent is found, or its result
comes: the step shows with its link, the same event as a whole conversion of the finished
files writes. A call waits only when its CLI writes subagents into that folder (2.1 and
later; older ones wrote them inline, or beside the session, and are linked on reopening).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from regista.errors import TraceError
from regista.importers._builder import ImportReport, derived_session_id
from regista.importers._common import ImportedRun, JsonLinesFile
from regista.importers.claude_code import _add_usage, _clean, _Facts, _text, _Thread
from regista.tokens import token_totals

if TYPE_CHECKING:
    from regista.importers.claude_code import Job

__all__ = ["Follower"]


class _Call:
    """A subagent call not linked to its subagent yet."""

    __slots__ = ("background", "event", "held", "prompt", "sid", "step", "thread")

    def __init__(
        self, thread: _Thread, step: int, event: dict[str, Any], prompt: str, held: bool
    ) -> None:
        self.thread = thread
        self.sid = thread.b.session_id
        self.step = step
        self.event = event
        self.prompt = prompt
        self.held = held
        self.background = False


class _Sub:
    """A subagent transcript found while the session was followed."""

    def __init__(self, key: str, file: Path) -> None:
        self.key = key
        self.file = file
        self.tail = JsonLinesFile(file, ImportReport())
        #: Its lines read before its run started (cleaned).
        self.lines: list[dict[str, Any]] = []
        self.first_ts: str | None = None
        self.first_user: str | None = None
        self.usage: dict[str, dict[str, Any]] = {}
        self.owner: str | None = None
        self.thread: _Thread | None = None
        #: Its call's result came: the rest of its lines are read, and its run ends.
        self.ending = False
        self.done = False

    def read(self) -> int:
        """Take in the lines appended since (a run not started yet); how many."""
        n = 0
        for _, obj in self.tail.read(last=False):
            n += 1
            obj = _clean(obj)
            self.lines.append(obj)
            if self.first_ts is None and obj.get("timestamp"):
                self.first_ts = obj["timestamp"]
            kind = obj.get("type")
            message = obj.get("message")
            if kind == "user" and self.first_user is None:
                self.first_user = _text(message.get("content") if message else None)
            if kind == "assistant" and isinstance(usage := (message or {}).get("usage"), dict):
                _add_usage(self.usage, obj, usage)
        return n

    def meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"layout": "file", "path": str(self.file.resolve())}
        sidecar = self.file.with_suffix(".meta.json")
        with contextlib.suppress(orjson.JSONDecodeError, OSError):
            meta["agent_meta"] = orjson.loads(sidecar.read_bytes())
        return meta


def _holds(line: dict[str, Any]) -> bool:
    """Whether the CLI that wrote ``line`` writes subagents into ``subagents/`` (2.1 and
    later, or a version not said), where a subagent started later is looked for."""
    version = line.get("version")
    return not (isinstance(version, str) and version.startswith(("0.", "1.", "2.0.")))


class Follower:
    """The subagents of a followed session that start after its first conversion.

    A subagent already running when the session is opened (its transcript was written in
    the last :data:`~regista.importers.memory.LIVE_S`, no result names it, and no step
    but one of the session's starts it) is followed too: its run is left out of the first
    conversion and started as the session's conversion meets its call. So is a compaction
    agent's written then (its run starts at its compaction's step, whose number it names).

    Args:
        job: The session's conversion (followed).
        main: What the first reading learnt of the session's thread.
        threads: What it learnt of its subagents' (those it converts).
    """

    def __init__(self, job: Job, main: _Facts, threads: list[_Facts]) -> None:
        from regista.importers.memory import LIVE_S

        self.job = job
        self.folder = job.source.parent / job.source.stem / "subagents"
        self._subs: dict[str, _Sub] = {}
        self._calls: dict[str, _Call] = {}
        #: Subagent transcript lines read since the first conversion (each once).
        self.parsed = 0
        named = {agent for facts in [main, *threads] for agent in facts.owners}
        calls = {tid for tid, _ in main.prompts}
        now = time.time()
        running: set[str] = set()
        for facts in threads:
            file, key = facts.file, facts.key
            if file is None or file.parent != self.folder or key in named:
                continue
            tid = job.owner.get(key)
            if tid is not None and not tid.startswith("compact:") and tid not in calls:
                continue
            try:
                if now - file.stat().st_mtime >= LIVE_S:
                    continue
            except OSError:
                continue
            running.add(key)
            if tid is not None:
                del job.owner[key], job.links[tid]
            sub = self._subs[key] = _Sub(key, file)
            with contextlib.suppress(TraceError):  # gone since: nothing more to read
                self.parsed += sub.read()
        job.todo = [t for t in job.todo if t[0] not in running]
        self._known = {
            f.file.name for f in threads if f.file is not None and f.file.parent == self.folder
        }

    def watched(self) -> list[Path]:
        """The folder, and the transcripts of subagents still running."""
        return [self.folder, *(s.file for s in self._subs.values() if not s.done)]

    # -- told by the threads as they convert ---------------------------------------------

    def call(
        self, thread: _Thread, tid: str, block: dict[str, Any], step: int, line: dict[str, Any]
    ) -> None:
        """``thread`` made the subagent call ``tid`` (step ``step``), not linked yet."""
        inp = block.get("input")
        inp = inp if isinstance(inp, dict) else {}
        held = _holds(line)
        call = self._calls[tid] = _Call(
            thread, step, thread.b.events[-1], str(inp.get("prompt") or ""), held
        )
        call.background = inp.get("run_in_background") is True
        if held:
            self._hold(thread)
        for sub in self._subs.values():
            if sub.owner is None and self._owns(sub, tid, call):
                self._start(sub, tid, call)
                break

    def result(self, thread: _Thread, tid: str, obj: dict[str, Any]) -> None:
        """The call ``tid`` has its result (``obj``'s): a subagent it names is linked, the
        call no longer waits, and its subagent's run ends (unless it runs on, in the
        background)."""
        call = self._calls.get(tid)
        if call is not None:
            result = obj.get("toolUseResult")
            agent = result.get("agentId") if isinstance(result, dict) else None
            sub = self._subs.get(str(agent)) if agent else None
            if sub is not None and sub.owner is None and sub.first_ts is not None:
                self._start(sub, tid, call)
            else:
                del self._calls[tid]
                self._hold(call.thread)
            if call.background:
                return
        for sub in self._subs.values():
            if sub.owner == tid:
                sub.ending = True

    def answered(self, thread: _Thread) -> None:
        """The model answers again in ``thread``: its calls no longer wait for their
        subagents (the model went on without their results, so a subagent that has not
        written its first line by now may never; one found later still gets its run)."""
        held = [c for c in self._calls.values() if c.thread is thread and c.held]
        for call in held:
            call.held = False
        if held:
            self._hold(thread)

    def compaction(self, thread: _Thread, key: str) -> None:
        """``thread`` makes the compaction ``key`` (its next step): a compaction agent's
        transcript not linked yet is its (complete by then)."""
        for sub in self._subs.values():
            if sub.owner is None and sub.key.startswith("acompact") and sub.first_ts:
                thread.compact_usage[key] = token_totals(sub.usage.values()).usage_dict()
                call = _Call(thread, thread.b.step, {}, "", False)
                self._start(sub, key, call)
                self._end(sub)
                return

    # -- each growth -----------------------------------------------------------------------

    def discover(self) -> None:
        """Find the subagent transcripts that appeared (one listing of the folder), read
        those whose run has not started, and start those whose call is known."""
        try:
            with os.scandir(self.folder) as entries:
                names = [
                    e.name
                    for e in entries
                    if e.name.startswith("agent-")
                    and e.name.endswith(".jsonl")
                    and e.name not in self._known
                ]
        except OSError:
            names = []
        for name in sorted(names):
            self._known.add(name)
            key = name.removeprefix("agent-").removesuffix(".jsonl")
            self._subs[key] = _Sub(key, self.folder / name)
        for sub in list(self._subs.values()):
            if sub.owner is not None:
                continue
            try:
                self.parsed += sub.read()
            except TraceError:  # gone already: a whole conversion would not see it either
                del self._subs[sub.key]
                continue
            for tid, call in list(self._calls.items()):
                if self._owns(sub, tid, call):
                    self._start(sub, tid, call)
                    break

    def grow(self) -> None:
        """Convert what the running subagents' transcripts were appended since."""
        for sub in list(self._subs.values()):
            thread = sub.thread
            if thread is None or sub.done:
                continue
            if sub.ending:
                self._end(sub)
                continue
            try:
                for _, obj in sub.tail.read(last=False):
                    self.parsed += 1
                    thread.feed(_clean(obj))
            except TraceError:  # removed, or cut short: its run ends with what was read
                self._end(sub)
                continue
            thread.feed_answered()

    def _end(self, sub: _Sub) -> None:
        """Convert the rest of ``sub``'s transcript, and end its run."""
        assert sub.thread is not None
        with contextlib.suppress(TraceError):  # removed, or cut short: what was read
            for _, obj in sub.tail.read(last=True):
                self.parsed += 1
                sub.thread.feed(_clean(obj))
        sub.thread.end()
        sub.done = sub.ending = True

    # -- linking -----------------------------------------------------------------------------

    def _owns(self, sub: _Sub, tid: str, call: _Call) -> bool:
        """Whether ``sub`` is the subagent the call ``tid`` started, as a whole conversion
        tells (its ``.meta.json`` names the call, or its first prompt is the call's)."""
        if sub.first_ts is None or sub.key.startswith("acompact"):
            return False
        agent_meta = sub.meta().get("agent_meta")
        if isinstance(agent_meta, dict) and isinstance(agent_meta.get("toolUseId"), str):
            return bool(agent_meta["toolUseId"] == tid)
        return bool(call.prompt) and call.prompt == (sub.first_user or "")

    def _hold(self, thread: _Thread) -> None:
        """Hold ``thread``'s events from its first call still waiting for its subagent."""
        seqs = [c.event["seq"] for c in self._calls.values() if c.thread is thread and c.held]
        thread.b.hold = min(seqs) if seqs else None

    def _start(self, sub: _Sub, tid: str, call: _Call) -> None:
        """Link ``sub`` to the call (or compaction) ``tid`` and start its run."""
        job = self.job
        assert sub.first_ts is not None
        sid = derived_session_id(f"{job._gathered.source_sid}:{sub.key}", sub.first_ts)
        link = {"session_id": sid, "agent_id": sub.key}
        job.links[tid] = link
        if call.event:  # (one written already keeps none: a step never changes)
            call.event["subagent"] = link
            call.thread.started[tid] = call.step
        job.starts[tid] = (call.sid, call.step)
        sub.owner = tid
        if self._calls.pop(tid, None) is not None:
            self._hold(call.thread)
        parent = {"session_id": call.sid, "step": call.step, "tool_use_id": tid}
        meta = sub.meta()
        facts = _Facts(sub.key, meta, job.window, ImportReport())
        facts.wanted = None
        lines = sub.lines
        for obj in lines:
            facts.add(obj)
        facts.close(lambda: iter(lines))
        thread = sub.thread = _Thread(
            facts,
            _drain(lines),
            session_id=sid,
            metadata=job.thread_meta(sub.key, meta, parent),
            links=job.links,
            window=job.window,
            compact_usage=job.compact_usage,
            follow=self,
        )
        run = ImportedRun(sid, thread.b.events, parent, builder=thread.b)
        job.conv.runs.append(run)
        job.followed.append(run)
        for _ in thread.steps(live=True):
            pass


def _drain(lines: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The lines, each forgotten once given."""
    lines.reverse()
    while lines:
        yield lines.pop()
