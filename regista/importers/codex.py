"""Codex CLI rollouts (``~/.codex/sessions/…/rollout-*.jsonl``) as regista runs.

Three shapes are read: the wrapped JSON lines (``{"timestamp", "type", "payload"}`` with
``session_meta``, ``response_item``, ``event_msg``, ``turn_context``, ``compacted``), the older
bare lines (a bare session header, then bare response items), and the first CLI's single
JSON document (``{"session": …, "items": […]}``). The model's output items between two
inputs (assistant messages, reasoning, tool calls) make one model step; each call is a tool
step, paired with its output by ``call_id``. The model comes from ``turn_context``, the usage
from ``token_count`` events. A subagent's rollout (``spawn_agent``) becomes a run linked to
the step that started it. See docs/importers.md for what is and is not recorded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from regista.harness_notes import asked
from regista.importers._builder import ImportReport, RunBuilder, derived_session_id
from regista.importers._common import (
    TOO_DEEP,
    Conversion,
    ImportedRun,
    JsonLinesFile,
    PieceJob,
    iter_json_lines,
    read_source,
    report_of,
    session_files,
)
from regista.trace.formats import HEAD_BYTES, is_pipe
from regista.trace.validate import MAX_DEPTH, deeper

__all__ = ["Job", "convert", "discover"]

FORMAT = "codex"
_OUTPUT_ITEMS = {"reasoning", "function_call", "custom_tool_call", "local_shell_call"}
_EXIT = re.compile(r"(?:^Exit code: |Process exited with code )(-?\d+)", re.M)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_SKIP_EVENTS = {
    "user_message",
    "agent_message",
    "agent_reasoning",
    "context_compacted",
    "collab_agent_spawn_end",  # read by _Spawned
}
#: The events the conversion reads (the others are counted, or read by the first pass).
_EVENTS = {"token_count", "turn_aborted", "task_complete"}
#: The other records the conversion reads.
_READ = {"response_item", "turn_context", "compacted", "token_usage_record"}
_SPAWN_TOOL = "spawn_agent"
_THREAD_ID = re.compile(r"[0-9A-Za-z-]{1,64}")

Item = tuple[str | None, str, dict[str, Any]]  # (timestamp, kind, payload)


def _looks_document(head: bytes) -> bool:
    """Whether a rollout starting with ``head`` may be the first CLI's single document."""
    stripped = head.lstrip()
    return stripped.startswith(b"{") and b"\n{" not in stripped[:4096].rstrip()


def _first_line_is_json(head: bytes) -> bool:
    """Whether the first line of a file starting with ``head`` (longer than it) is a JSON
    value of its own: the file is then JSON lines, not one document (which would end
    there); a first line longer than ``head`` is not known to be."""
    stripped = head.lstrip()
    end = stripped.find(b"\n")
    if end < 0:
        return False
    try:
        orjson.loads(stripped[:end])
    except orjson.JSONDecodeError:
        return False
    return True


def _document(data: bytes, path: Path, report: ImportReport) -> list[Item] | None:
    """The records of the first CLI's single JSON document, if ``data`` is one."""
    if not _looks_document(data):
        return None
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if not (isinstance(doc, dict) and isinstance(doc.get("items"), list)):
        return None
    found = doc.get("session")
    session: dict[str, Any] = found if isinstance(found, dict) else {}
    ts = session.get("timestamp") if isinstance(session.get("timestamp"), str) else None
    out: list[Item] = [(ts, "session_meta", session)]
    for n, it in enumerate(doc["items"]):
        if not isinstance(it, dict):
            continue
        if deeper(it, MAX_DEPTH - 1):  # an item is a level down in the document
            report.bad_lines.append((str(path), 1, f"items[{n}]: {TOO_DEEP}"))
            continue
        out.append((None, "response_item", it))
    if deeper(session, MAX_DEPTH - 1):
        report.bad_lines.append((str(path), 1, f"session: {TOO_DEEP}"))
        out[0] = (ts, "session_meta", {})
    return out


class _Source:
    """A rollout's records, as ``(timestamp, kind, payload)`` whatever the era of the file,
    read as often as the conversion needs, a block at a time (the first CLI's single
    document is read whole).

    Args:
        path: The rollout.
        data: Its bytes, when already read (a pipe's).
        live: It is being written: a last line with no newline yet is not read.
    """

    def __init__(self, path: Path, data: bytes | None, report: ImportReport, live: bool) -> None:
        self.path = path
        if data is None and is_pipe(path):
            data = read_source(path)
        head = data if data is not None else read_source(path, HEAD_BYTES)
        if data is None and len(head) < HEAD_BYTES:
            data = head  # a small file: read whole
            if live:  # a last line still being written is read later
                data = data[: data.rfind(b"\n") + 1]
        self.doc: list[Item] | None = None
        if _looks_document(head) and (data is not None or not _first_line_is_json(head)):
            data = data if data is not None else read_source(path)
            self.doc = _document(data, path, report)
        self.data = None if self.doc is not None else data
        self.live = live
        #: Lines read as the rollout grew (when ``live``).
        self.parsed = 0
        self._tail: JsonLinesFile | None = None
        self._any = False  # a record was read (the bare era's header is the first)
        self.lineno = 0

    def items(self, report: ImportReport, wanted: bytearray | None = None) -> Iterator[Item]:
        """Every record, from the start (:attr:`lineno`: the line of the last one), or
        those of the lines ``wanted`` (``wanted[n]`` for line ``n``; the others are not
        decoded)."""
        if self.doc is not None:
            yield from self.doc
            return
        lines: Iterator[tuple[int, dict[str, Any]]]
        if self.data is not None:
            lines = iter_json_lines(self.data, self.path, report, 0, wanted)
        else:
            lines = JsonLinesFile(self.path, report, wanted).read(last=not self.live)
        first = [True]
        for lineno, obj in lines:
            item = _item(obj, report, first)
            if item is not None:
                self.lineno = lineno
                yield item

    def appended(self) -> Iterator[Item]:
        """The records written since the last call (the first: every record), read from
        the file; a last line with no newline yet is left for the next call."""
        if self.doc is not None or is_pipe(self.path):
            if not self._any:
                self._any = True
                yield from self.items(ImportReport())
            return
        if self._tail is None:
            self._tail = JsonLinesFile(self.path, ImportReport())
        first = [not self._any]
        for _, obj in self._tail.read(last=False):
            self.parsed += 1
            item = _item(obj, self._tail.report, first)
            if item is not None:
                self._any = True
                yield item


def _item(obj: dict[str, Any], report: ImportReport, first: list[bool]) -> Item | None:
    """The record of one line (``first[0]``: none was read before it), or ``None`` (the
    line is skipped, and counted)."""
    ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
    kind = obj.get("type")
    payload = obj.get("payload")
    was_first = first[0]
    first[0] = False
    if isinstance(payload, dict) and isinstance(kind, str):
        return ts, kind, payload
    if "record_type" in obj:
        report.skip("record_type/state")
    elif kind is None and was_first and "id" in obj:  # the bare era's session header
        return ts, "session_meta", obj
    elif isinstance(kind, str):
        return None, "response_item", obj
    else:
        report.skip("unknown")
    first[0] = was_first
    return None


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]


def _output(value: Any) -> tuple[str | list[dict[str, Any]], int | None, float | None]:
    """A tool output as (content, exit code, duration in ms when it says)."""
    exit_code: int | None = None
    duration: float | None = None
    if isinstance(value, dict):  # {"content": …, "success": false} as sent on the wire
        success = value.get("success")
        value = value.get("content", "")
        if success is False:
            exit_code = 1
    if isinstance(value, list):
        blocks: list[dict[str, Any]] = []
        for b in value:
            if not isinstance(b, dict):
                continue
            if isinstance(b.get("text"), str):
                blocks.append({"type": "text", "text": b["text"]})
            elif b.get("type") == "input_image":
                blocks.append(
                    {"type": "image", "source": {"type": "url", "url": b.get("image_url")}}
                )
        return blocks, exit_code, duration
    if not isinstance(value, str):
        return "", exit_code, duration
    text = value
    if text.startswith("{") and '"metadata"' in text:
        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError:
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("output"), str):
            found = doc.get("metadata")
            meta: dict[str, Any] = found if isinstance(found, dict) else {}
            code = meta.get("exit_code")
            secs = meta.get("duration_seconds")
            return (
                doc["output"],
                code if isinstance(code, int) else exit_code,
                float(secs) * 1000 if isinstance(secs, int | float) else None,
            )
    m = _EXIT.search(text[:2000])
    if m:
        exit_code = int(m.group(1))
    return text, exit_code, duration


def _human(text: str) -> bool:
    """User text a person typed (not the harness's injected context)."""
    return bool(asked(text))


def _usage(info: dict[str, Any]) -> dict[str, int]:
    def n(key: str) -> int:
        v = info.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) else 0

    # Codex's input_tokens count the cached and cache-written ones too; the trace's (the
    # Messages API's) count only the rest.
    cached = n("cached_input_tokens")
    written = n("cache_write_input_tokens")
    return {
        "input_tokens": max(n("input_tokens") - cached - written, 0),
        "output_tokens": n("output_tokens"),
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": cached,
        "reasoning_output_tokens": n("reasoning_output_tokens"),
    }


class _Spawned:
    """``call_id`` -> the thread id of the subagent that ``spawn_agent`` call started
    (:attr:`threads`), learnt record by record.

    Read from the ``collab_agent_spawn_end`` event (``call_id``, ``new_thread_id``), else
    from the call's output (``{"agent_id": …}``).
    """

    def __init__(self) -> None:
        self.threads: dict[str, str] = {}
        self._calls: set[str] = set()

    def add(self, kind: str, p: dict[str, Any]) -> None:
        out = self.threads
        if kind == "event_msg" and p.get("type") == "collab_agent_spawn_end":
            cid, tid = p.get("call_id"), p.get("new_thread_id")
            if isinstance(cid, str) and isinstance(tid, str) and _THREAD_ID.fullmatch(tid):
                out[cid] = tid
        elif kind == "response_item" and p.get("type") == "function_call":
            if p.get("name") == _SPAWN_TOOL and isinstance(p.get("call_id"), str):
                self._calls.add(p["call_id"])
        elif kind == "response_item" and p.get("type") == "function_call_output":
            cid, raw = p.get("call_id"), p.get("output")
            if not isinstance(cid, str) or cid not in self._calls or cid in out:
                return
            if isinstance(raw, str):
                try:
                    doc = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    return
                agent = doc.get("agent_id") if isinstance(doc, dict) else None
                if isinstance(agent, str) and _THREAD_ID.fullmatch(agent):
                    out[cid] = agent


class _Calls:
    """The ids of the calls not answered yet (:attr:`open`, an id -> what the
    conversion keeps of it), and the id a call gets (:meth:`id_of`)."""

    def __init__(self) -> None:
        self.open: dict[str, Any] = {}
        self.searches = 0

    def id_of(self, p: dict[str, Any]) -> str:
        """The id of the call item ``p`` (a web search is counted)."""
        call_id = p.get("call_id") if isinstance(p.get("call_id"), str) else None
        if p.get("type") == "web_search_call":  # no call_id; its results are not in the rollout
            self.searches += 1
            call_id = p.get("id") if isinstance(p.get("id"), str) else f"web_search_{self.searches}"
        if call_id is None:
            call_id = f"call_{len(self.open) + self.searches}"
        return str(call_id)


def _is_answer(kind: Any, p: dict[str, Any]) -> bool:
    """Whether the response item is part of a model's answer."""
    if kind == "message":
        return p.get("role") == "assistant"
    return kind in _OUTPUT_ITEMS or kind == "web_search_call"


def _is_input(kind: Any, p: dict[str, Any]) -> bool:
    """Whether the response item is an input (which closes the answer being read)."""
    if kind == "message":
        return p.get("role") != "assistant"
    return kind in ("function_call_output", "custom_tool_call_output")


class _Survey:
    """What converting one rollout needs before its first event, gathered in one pass over
    its records, which are not kept: its start, model and task, the subagents it spawned,
    which outputs find their call and which exit codes come after their output (so the
    run's ``session.start`` can say what the conversion will note before the rest is
    written: the pass follows :class:`_Rollout`'s pairing record for record).

    Attributes:
        report: What reading it skipped, and the notes its conversion makes.
        patches: The n-th tool result (of those paired with a call) -> the exit code an
            ``exec_command_end`` after it gives it.
    """

    def __init__(self, path: Path, data: bytes | None, *, live: bool = False) -> None:
        self.path = path
        self.report = report = ImportReport()
        self.source = _Source(path, data, report, live)
        self.meta: dict[str, Any] | None = None
        self.first_ts: str | None = None
        self.model: str | None = None
        self.task: str | None = None
        self.spawned = _Spawned()
        self.compactions = 0
        self.records = 0
        self.patches: dict[int, Any] = {}
        calls = _Calls()
        pending: list[str] = []
        results: dict[str, int] = {}  # call_id -> the latest of its results, numbered
        paired = 0
        #: The lines the conversion reads (``None``: all, a document's).
        self.wanted: bytearray | None = bytearray() if self.source.doc is None else None
        for ts, kind, p in self.source.items(report):
            self.records += 1
            if self.wanted is not None and (
                kind in _READ or (kind == "event_msg" and str(p.get("type")) in _EVENTS)
            ):
                self._want(self.source.lineno)
            if self.first_ts is None and ts:
                self.first_ts = ts
            self.spawned.add(kind, p)
            if kind == "response_item":
                item = p.get("type") if isinstance(p.get("type"), str) else None
                if _is_answer(item, p):
                    if item not in ("reasoning", "message"):
                        pending.append(calls.id_of(p))
                elif _is_input(item, p):
                    calls.open.update(dict.fromkeys(pending))  # the answer's calls, made
                    pending = []
                    if item == "message":
                        if self.task is None and p.get("role") == "user":
                            text = "".join(_texts(p.get("content")))
                            if _human(text):
                                self.task = text
                    elif (cid := str(p.get("call_id") or "")) in calls.open:
                        del calls.open[cid]
                        results[cid] = paired
                        paired += 1
                    else:
                        report.notes.append(
                            f"an output ({cid or 'no call_id'}) has no call: kept in the "
                            "conversation only"
                        )
                else:
                    report.skip(f"response_item/{item}")
            elif kind == "event_msg":
                event = p.get("type") if isinstance(p.get("type"), str) else None
                message = p.get("message")
                if self.task is None and event == "user_message" and isinstance(message, str):
                    self.task = message
                if event == "exec_command_end":
                    k = results.get(str(p.get("call_id")))
                    if k is not None and isinstance(p.get("exit_code"), int):
                        self.patches[k] = p["exit_code"]
                elif event not in _SKIP_EVENTS and event not in ("token_count", "turn_aborted"):
                    report.skip(f"event_msg/{event}")  # task_complete too: it adds no event
            elif kind == "turn_context":
                if self.model is None and isinstance(p.get("model"), str):
                    self.model = p["model"]
            elif kind == "compacted":
                self.compactions += 1
                calls.open.update(dict.fromkeys(pending))
                pending = []
            elif kind == "session_meta":
                if self.meta is None:
                    self.meta = p
                else:
                    report.notes.append("a second session_meta (a fork's copied history)")
            elif kind != "token_usage_record":
                report.skip(kind)
        meta = self.meta or {}
        source_id = meta.get("id") if isinstance(meta.get("id"), str) else None
        if source_id is None:
            found = _UUID.search(path.name)
            source_id = found.group(0) if found else path.stem
        self.source_id: str = source_id
        started = meta.get("timestamp") if isinstance(meta.get("timestamp"), str) else None
        self.started = started or self.first_ts
        self.session_id = derived_session_id(f"codex:{source_id}", self.started)

    def _want(self, lineno: int) -> None:
        wanted = self.wanted
        assert wanted is not None
        if lineno >= len(wanted):
            wanted.extend(bytes(lineno + 1 - len(wanted) + (len(wanted) >> 2)))
        wanted[lineno] = 1


def _fork_link(meta: dict[str, Any]) -> dict[str, Any] | None:
    """The run a rollout was forked from, when ``regista fork … --resume-in codex`` wrote
    it (``regista_fork`` in its ``session_meta``): its ``forked_from``."""
    link = meta.get("regista_fork")
    if isinstance(link, dict) and isinstance(link.get("session_id"), str):
        at = link.get("at_step")
        if isinstance(at, int) and not isinstance(at, bool) and at >= 0:
            return link
    return None


def _parent_thread(meta: dict[str, Any]) -> str | None:
    """``source.subagent.thread_spawn.parent_thread_id`` of a subagent's ``session_meta``."""
    source = meta.get("source")
    spawn = (source.get("subagent") or {}) if isinstance(source, dict) else {}
    spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
    if isinstance(spawn, dict) and isinstance(spawn.get("parent_thread_id"), str):
        return str(spawn["parent_thread_id"])
    return None


class _Rollout:
    """Converts the records of one rollout into a run, record by record (what it notes
    and skips was counted by its :class:`_Survey`)."""

    def __init__(
        self,
        survey: _Survey,
        links: dict[str, dict[str, Any]] | None = None,
        import_report: dict[str, Any] | None = None,
    ) -> None:
        #: call_id -> the subagent run a ``spawn_agent`` call started.
        self.links = links or {}
        #: call_id -> the step of the call that started a subagent.
        self.started: dict[str, int] = {}
        self.patches = survey.patches
        meta = survey.meta or {}
        instructions = meta.get("instructions")
        base = meta.get("base_instructions")
        if not isinstance(instructions, str) and isinstance(base, dict):
            instructions = base.get("text")
        self.model = survey.model or "unknown"
        metadata: dict[str, Any] = {
            "imported_from": {
                "format": FORMAT,
                "path": str(survey.path.resolve()),
                "session_id": survey.source_id,
            }
        }
        for key in ("cwd", "originator", "cli_version", "model_provider", "forked_from_id"):
            if isinstance(meta.get(key), str):
                metadata[key] = meta[key]
        git = meta.get("git")
        if isinstance(git, dict):
            metadata["git"] = git
            if isinstance(git.get("branch"), str):
                metadata["git_branch"] = git["branch"]
        source = meta.get("source")
        if source is not None:
            metadata["source"] = source
            parent_thread = _parent_thread(meta)
            if parent_thread is not None:
                metadata["parent_thread_id"] = parent_thread
        self.b = RunBuilder(
            survey.session_id,
            task=survey.task or "",
            model=self.model,
            provider="openai",
            started=survey.started or "1970-01-01T00:00:00.000Z",
            metadata=metadata,
            instructions=instructions if isinstance(instructions, str) else None,
            import_report=import_report,
            forked_from=_fork_link(meta),
            compacts=survey.compactions > 0,
        )
        self.pending: list[dict[str, Any]] = []
        self.pending_ts: str | None = None
        self.input_ts: str | None = None
        self.pending_usage: dict[str, int] | None = None
        #: The provider's id of the answer being read (``token_usage_record.response_id``).
        self.pending_id: str | None = None
        self.last_response: dict[str, Any] | None = None
        self.calls = _Calls()
        self.paired = 0  # tool results paired with their call
        self.last_total: Any = None
        #: The last record read ends a model answer (a token count after it, or an input).
        self.answered = True

    def steps(self, items: Iterator[Item], *, live: bool = False) -> Iterator[None]:
        """Convert the records one by one (yielding after each); the last closes the run
        (``live``: the rollout is being written: the run stays open, an answer with no
        count after it yet is held, and :meth:`feed` converts the records appended later).
        What a record adds is final once the next is asked for, but for a model call whose
        usage may come later (held by the builder, see :attr:`RunBuilder.hold`)."""
        for item in items:
            self.feed(item)
            yield None
        if live:
            self.feed_answered()
            return
        self._flush(self.model)
        self.b.finish()

    def feed(self, item: Item) -> None:
        """Convert the next record."""
        ts, kind, p = item
        if kind == "turn_context":
            if isinstance(p.get("model"), str):
                self.model = p["model"]
        elif kind == "response_item":
            self._item(ts, p, self.model)
        elif kind == "event_msg":
            self._event(ts, p)
        elif kind == "compacted":
            self._flush(self.model)
            self._compacted(ts, p)
        elif kind == "token_usage_record":
            self._usage_record(p)

    def feed_answered(self) -> None:
        """Close the answer being read if its count came (a rollout being written has no
        next record yet)."""
        if self.answered:
            self._flush(self.model)

    # -- items ---------------------------------------------------------------------------

    def _item(self, ts: str | None, p: dict[str, Any], model: str) -> None:
        kind = p.get("type") if isinstance(p.get("type"), str) else None
        self.answered = not _is_answer(kind, p)
        if kind == "message" and p.get("role") == "assistant":
            self._out(ts, [{"type": "text", "text": t} for t in _texts(p.get("content"))])
        elif kind == "reasoning":
            texts = _texts(p.get("summary")) + _texts(p.get("content"))
            block: dict[str, Any] = {
                "type": "thinking",
                "thinking": "\n\n".join(texts),
                "signature": "",
            }
            if isinstance(p.get("encrypted_content"), str):
                block["encrypted_content"] = p["encrypted_content"]
            self._out(ts, [block])
        elif kind in _OUTPUT_ITEMS or kind == "web_search_call":
            self._out(ts, [self._tool_use(p)])
        elif kind == "message":
            self._flush(model)
            role = p.get("role")
            texts = _texts(p.get("content"))
            if role == "user" and _human("".join(texts)):
                self.b.new_turn()
            origin = None if role == "user" else str(role)
            self.b.user_blocks([{"type": "text", "text": t} for t in texts], origin)
            self.input_ts = ts or self.input_ts
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._flush(model)
            self._result(ts, p)
            self.input_ts = ts or self.input_ts
        # other items are skipped (counted by the survey)

    def _tool_use(self, p: dict[str, Any]) -> dict[str, Any]:
        kind = p.get("type")
        call_id = self.calls.id_of(p)
        if kind == "function_call":
            raw = p.get("arguments")
            try:
                args = orjson.loads(raw) if isinstance(raw, str) else raw
            except orjson.JSONDecodeError:
                args = None
            # the input sits a few levels down in the events: leave them room
            if isinstance(args, dict) and deeper(args, MAX_DEPTH - 10):
                args = None  # kept as the text it came as: too deep to be a tool's input
            inp = args if isinstance(args, dict) else {"arguments": raw}
            name = p.get("name")
        elif kind == "custom_tool_call":
            inp, name = {"input": p.get("input")}, p.get("name")
        elif kind == "local_shell_call":
            action = p.get("action")
            inp, name = (action if isinstance(action, dict) else {}), "local_shell"
        else:  # web_search_call
            action = p.get("action")
            inp, name = (action if isinstance(action, dict) else {}), "web_search"
        return {
            "type": "tool_use",
            "id": call_id,
            "name": str(name or "?"),
            "input": inp,
            "kind": kind,
        }

    def _out(self, ts: str | None, blocks: list[dict[str, Any]]) -> None:
        self.pending.extend(blocks)
        self.pending_ts = ts or self.pending_ts

    def _flush(self, model: str) -> None:
        if not self.pending:
            return
        kinds = [b.pop("kind", None) for b in self.pending]
        response: dict[str, Any] = {
            "id": self.pending_id,
            "model": model,
            "role": "assistant",
            "content": self.pending,
            "stop_reason": None,
            "stop_sequence": None,
        }
        if self.pending_usage is not None:
            response["usage"] = self.pending_usage
        self.b.model_step(
            model=model,
            response=response,
            request_ts=self.input_ts or self.pending_ts,
            response_ts=self.pending_ts,
        )
        self.last_response = self.b.events[-1] if self.pending_usage is None else None
        # its usage may come after the step (held until the next one: see _event)
        self.b.hold = None if self.last_response is None else self.last_response["seq"]
        for block, kind in zip(self.pending, kinds, strict=True):
            if block.get("type") != "tool_use":
                continue
            step = self.b.tool_call(
                tool_use_id=block["id"],
                name=block["name"],
                input=block["input"],
                ts=self.pending_ts,
            )
            link = self.links.get(block["id"])
            if link is not None:
                self.b.events[-1]["subagent"] = link
                self.started[block["id"]] = step
            self.calls.open[block["id"]] = (step, block["name"])
            if kind == "web_search_call":
                self.b.tool_result(
                    step=step,
                    tool_use_id=block["id"],
                    name=block["name"],
                    content="",
                    is_error=False,
                    ts=self.pending_ts,
                    extra={"unknown": ["content"]},
                )
        self.pending = []
        self.pending_usage = None
        self.pending_id = None
        self.input_ts = None

    def _result(self, ts: str | None, p: dict[str, Any]) -> None:
        call_id = str(p.get("call_id") or "")
        content, exit_code, duration = _output(p.get("output"))
        self.b.user_blocks([{"type": "tool_result", "tool_use_id": call_id, "content": content}])
        found = self.calls.open.pop(call_id, None)
        if found is None:  # kept in the conversation only (noted by the survey)
            return
        step, name = found
        extra: dict[str, Any] = {"exit_code": exit_code} if exit_code is not None else {}
        if call_id in self.links:
            extra["subagent"] = self.links[call_id]
        self.b.tool_result(
            step=step,
            tool_use_id=call_id,
            name=name,
            content=content,
            is_error=exit_code not in (None, 0),
            ts=ts,
            duration_ms=duration,
            extra=extra,
        )
        code = self.patches.get(self.paired)  # an exec_command_end after the output
        self.paired += 1
        if code is not None:
            event = self.b.events[-1]
            event["exit_code"] = code
            event["is_error"] = code != 0

    def _usage_record(self, p: dict[str, Any]) -> None:
        """One answer's usage and id (Codex 0.1xx writes one per response; its
        ``token_count`` event that follows says the same)."""
        usage = p.get("usage")
        rid = p.get("response_id")
        if not isinstance(usage, dict):
            return
        if self.pending:
            self.pending_usage = _usage(usage)
            self.pending_id = rid if isinstance(rid, str) else None
        elif self.last_response is not None:  # recorded after the step was closed
            response = self.last_response["response"]
            response["usage"] = _usage(usage)
            if isinstance(rid, str) and response.get("id") is None:
                response["id"] = rid

    def _event(self, ts: str | None, p: dict[str, Any]) -> None:
        kind = p.get("type") if isinstance(p.get("type"), str) else None
        if kind in ("token_count", "task_complete", "turn_aborted"):
            self.answered = True
        if kind == "token_count":
            info = p.get("info")
            if not isinstance(info, dict):
                return
            total = info.get("total_token_usage")
            last = info.get("last_token_usage")
            if total is not None and total == self.last_total:
                return  # the same count written twice
            self.last_total = total
            if not isinstance(last, dict):
                return
            usage = _usage(last)
            if self.pending:
                self.pending_usage = usage
            elif self.last_response is not None:  # counted after the step was closed
                self.b.late_usage(self.last_response, usage)
                self.last_response = self.b.hold = None
        elif kind == "turn_aborted":
            self.b.error(
                message=f"turn aborted: {p.get('reason')}",
                error_type="turn_aborted",
                ts=ts,
                step=None,
            )
        # exec_command_end was read by the survey; other events are skipped (and counted)

    def _compacted(self, ts: str | None, p: dict[str, Any]) -> None:
        message = p.get("message")
        summary = message if isinstance(message, str) else ""
        after: list[dict[str, Any]] = []
        history = p.get("replacement_history")
        if isinstance(history, list):
            for it in history:
                if isinstance(it, dict) and it.get("type") == "message":
                    role = "assistant" if it.get("role") == "assistant" else "user"
                    texts = _texts(it.get("content"))
                    after.append(
                        {"role": role, "content": [{"type": "text", "text": t} for t in texts]}
                    )
        elif summary:
            after = [{"role": "user", "content": [{"type": "text", "text": summary}]}]
        self.b.compaction(summary=summary, tokens_before=0, ts=ts, after=after)


def convert(path: Path, data: bytes | None = None, *, subagents: bool = True) -> Conversion:
    """Convert the rollout ``path`` into a run (and its subagents' rollouts into theirs).

    Args:
        path: The ``rollout-*.jsonl`` file.
        data: Its bytes, when already read.
        subagents: Also convert the rollouts of the subagents its ``spawn_agent`` calls
            started, found beside it or under the same sessions root.
    """
    return Job(path, data, subagents=subagents).finish()


class Job(PieceJob):
    """One rollout's conversion (and its subagents'), done a piece at a time, in memory
    bounded whatever the rollout's size.

    Making the job reads the rollout, and those of the subagents it spawned, once
    (:class:`_Survey`: what each run's ``session.start`` says, its import report included,
    and what the conversion must know before it meets it). The events are then made in
    file order by :meth:`advance`, reading the records again, parents before children,
    each run's as it goes (see :class:`~regista.importers._common.PieceJob`).

    Its arguments are :class:`~regista.importers._common.PieceJob`'s (``path``: the
    ``rollout-*.jsonl`` file; ``subagents``: the rollouts of the subagents it spawned).
    """

    def _start(self, path: Path, data: bytes | None, subagents: bool) -> None:
        report = ImportReport()
        self.conv = Conversion(format=FORMAT, source=path, report=report)
        main = _Survey(path, data, live=self.live)
        report.bad_lines += main.report.bad_lines
        #: (key, session id, survey, (links, the parent's index, the call that started it))
        self.todo: list[tuple[str, str, _Survey, tuple[Any, ...]]] = []
        self._plan(main, None, None, {str(path.resolve())}, subagents)
        self._started: dict[int, dict[str, int]] = {}
        self._rollout: _Rollout | None = None
        self._main: _Rollout | None = None

    def _plan(
        self,
        survey: _Survey,
        parent: int | None,
        call_id: str | None,
        seen: set[str],
        subagents: bool,
    ) -> None:
        """Add the rollout ``survey`` read, then the subagents it spawned, to :attr:`todo`
        (its report's notes and lines in the order a conversion meets them)."""
        report = self.conv.report
        children: list[tuple[str, _Survey]] = []
        links: dict[str, dict[str, Any]] = {}
        for cid, thread in (survey.spawned.threads if subagents else {}).items():
            file = _find_rollout(survey.path, thread)
            if file is None or str(file.resolve()) in seen:
                if file is None:
                    report.notes.append(
                        f"subagent thread {thread} (started by {cid}): its rollout is not "
                        "under the same sessions folder"
                    )
                continue
            seen.add(str(file.resolve()))
            child = _Survey(file, None)
            report.bad_lines += child.report.bad_lines
            links[cid] = {"session_id": child.session_id, "thread_id": thread}
            children.append((cid, child))
        report.notes += survey.report.notes
        for kind, n in survey.report.skipped.items():
            report.skipped[kind] = report.skipped.get(kind, 0) + n
        n = len(self.todo)
        self.todo.append((survey.source_id, survey.session_id, survey, (links, parent, call_id)))
        for cid, child in children:
            self._plan(child, n, cid, seen, subagents)

    @property
    def parsed(self) -> int:
        """Rollout lines read for the main run as it grew (what :meth:`grow` costs)."""
        return self.todo[0][2].source.parsed

    def _main_lines(self) -> int:
        return self.todo[0][2].records

    def _open(self, n: int) -> Iterator[None]:
        _, sid, survey, (links, parent_n, call_id) = self.todo[n]
        parent: dict[str, Any] | None = None
        if parent_n is not None:
            step = self._started[parent_n].get(call_id, -1)
            parent = {"session_id": self.todo[parent_n][1], "step": step, "tool_use_id": call_id}
        rollout = _Rollout(survey, links, report_of(self.conv.report) if n == 0 else None)
        if parent is not None:
            rollout.b.events[0]["metadata"]["parent"] = parent
        self.conv.runs.append(ImportedRun(sid, rollout.b.events, parent, builder=rollout.b))
        self._rollout = rollout
        live = n == 0 and self.live
        if n == 0:
            self._main = rollout
        if live:
            items = survey.source.appended()
        else:  # the lines it reads: the others are not decoded again
            items = survey.source.items(ImportReport(), survey.wanted)
        return rollout.steps(items, live=live)

    def _closed(self, n: int) -> None:
        assert self._rollout is not None
        self._started[n] = self._rollout.started

    def grow(self) -> None:
        """Convert the records a rollout being written (``live``) was appended since it was
        last read, and only those: the main run's new events follow the ones made (its
        start, and the subagents' runs, stay those of the first reading)."""
        rollout = self._main
        assert rollout is not None and self.done
        for item in self.todo[0][2].source.appended():
            rollout.feed(item)
        rollout.feed_answered()


def _find_rollout(beside: Path, thread: str) -> Path | None:
    """The rollout of thread ``thread``: beside ``beside``, else under its sessions root.

    Codex names a rollout ``rollout-<time>-<thread id>.jsonl`` and files it by day
    (``sessions/YYYY/MM/DD``); a subagent that started after midnight is in the next day's
    folder.
    """
    pattern = f"rollout-*{thread}.jsonl"
    found = sorted(beside.parent.glob(pattern))
    if found:
        return found[0]
    parents = beside.resolve().parents
    if len(parents) >= 3 and all(p.name.isdigit() for p in (parents[0], parents[1], parents[2])):
        found = sorted(parents[3].glob(f"*/*/*/{pattern}"))
        if found:
            return found[0]
    return None


def discover(paths: Iterable[Path]) -> list[Path]:
    """Rollout files under ``paths`` (files, a day's folder, or ``~/.codex/sessions``)."""
    return session_files(paths, _in_folder)


def _in_folder(folder: Path) -> list[Path]:
    found = sorted(f for f in folder.rglob("rollout-*") if f.suffix in (".jsonl", ".json"))
    threads = {m.group(0) for f in found if (m := _UUID.search(f.name))}
    # A subagent's rollout whose parent is also here is imported with its parent.
    return [f for f in found if _parent_thread(_first_meta(f)) not in threads]


def _first_meta(path: Path) -> dict[str, Any]:
    """The ``session_meta`` payload on the first line of a rollout (``{}`` if none)."""
    try:
        with open(path, "rb") as f:
            first = f.readline()
        obj = orjson.loads(first)
    except (OSError, orjson.JSONDecodeError):
        return {}
    if isinstance(obj, dict) and obj.get("type") == "session_meta":
        payload = obj.get("payload")
        return payload if isinstance(payload, dict) else {}
    return {}
