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
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from regista.harness_notes import asked
from regista.importers._builder import ImportReport, RunBuilder, derived_session_id
from regista.importers._common import (
    TOO_DEEP,
    Conversion,
    ImportedRun,
    read_json_lines,
    read_source,
    record_report,
)
from regista.trace.validate import MAX_DEPTH, deeper

__all__ = ["convert", "discover"]

FORMAT = "codex"
_OUTPUT_ITEMS = {"reasoning", "function_call", "custom_tool_call", "local_shell_call"}
_EXIT = re.compile(r"(?:^Exit code: |Process exited with code )(-?\d+)", re.M)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_SKIP_EVENTS = {
    "user_message",
    "agent_message",
    "agent_reasoning",
    "context_compacted",
    "collab_agent_spawn_end",  # read by _spawned
}
_SPAWN_TOOL = "spawn_agent"
_THREAD_ID = re.compile(r"[0-9A-Za-z-]{1,64}")

Item = tuple[str | None, str, dict[str, Any]]  # (timestamp, kind, payload)


def _items(data: bytes, path: Path, report: ImportReport) -> list[Item]:
    """Every record as ``(timestamp, kind, payload)``, whatever the era of the file."""
    stripped = data.lstrip()
    if stripped.startswith(b"{") and b"\n{" not in stripped[:4096].rstrip():
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError:
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("items"), list):
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
    out = []
    for _, obj in read_json_lines(data, path, report):
        ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
        kind = obj.get("type")
        payload = obj.get("payload")
        if isinstance(payload, dict) and isinstance(kind, str):
            out.append((ts, kind, payload))
        elif "record_type" in obj:
            report.skip("record_type/state")
        elif kind is None and not out and "id" in obj:  # the bare era's session header
            out.append((ts, "session_meta", obj))
        elif isinstance(kind, str):
            out.append((None, "response_item", obj))
        else:
            report.skip("unknown")
    return out


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


def _spawned(items: list[Item]) -> dict[str, str]:
    """``call_id`` -> the thread id of the subagent that ``spawn_agent`` call started.

    Read from the ``collab_agent_spawn_end`` event (``call_id``, ``new_thread_id``), else
    from the call's output (``{"agent_id": …}``).
    """
    out: dict[str, str] = {}
    spawn_calls: set[str] = set()
    for _, kind, p in items:
        if kind == "event_msg" and p.get("type") == "collab_agent_spawn_end":
            cid, tid = p.get("call_id"), p.get("new_thread_id")
            if isinstance(cid, str) and isinstance(tid, str) and _THREAD_ID.fullmatch(tid):
                out[cid] = tid
        elif kind == "response_item" and p.get("type") == "function_call":
            if p.get("name") == _SPAWN_TOOL and isinstance(p.get("call_id"), str):
                spawn_calls.add(p["call_id"])
        elif kind == "response_item" and p.get("type") == "function_call_output":
            cid, raw = p.get("call_id"), p.get("output")
            if not isinstance(cid, str) or cid not in spawn_calls or cid in out:
                continue
            if isinstance(raw, str):
                try:
                    doc = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                agent = doc.get("agent_id") if isinstance(doc, dict) else None
                if isinstance(agent, str) and _THREAD_ID.fullmatch(agent):
                    out[cid] = agent
    return out


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
    def __init__(
        self,
        items: list[Item],
        path: Path,
        report: ImportReport,
        links: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.items = items
        self.report = report
        #: call_id -> the subagent run a ``spawn_agent`` call started.
        self.links = links or {}
        #: call_id -> the step of the call that started a subagent.
        self.started: dict[str, int] = {}
        meta = next((p for _, k, p in items if k == "session_meta"), {})
        self.meta = meta
        source_id = meta.get("id") if isinstance(meta.get("id"), str) else None
        if source_id is None:
            found = _UUID.search(path.name)
            source_id = found.group(0) if found else path.stem
        self.source_id = source_id
        started = meta.get("timestamp") if isinstance(meta.get("timestamp"), str) else None
        started = started or next((ts for ts, _, _ in items if ts), None)
        instructions = meta.get("instructions")
        base = meta.get("base_instructions")
        if not isinstance(instructions, str) and isinstance(base, dict):
            instructions = base.get("text")
        self.model = next(
            (
                p["model"]
                for _, k, p in items
                if k == "turn_context" and isinstance(p.get("model"), str)
            ),
            "unknown",
        )
        metadata: dict[str, Any] = {
            "imported_from": {
                "format": FORMAT,
                "path": str(path.resolve()),
                "session_id": source_id,
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
            derived_session_id(f"codex:{source_id}", started),
            task=self._task(),
            model=self.model,
            provider="openai",
            started=started or "1970-01-01T00:00:00.000Z",
            metadata=metadata,
            instructions=instructions if isinstance(instructions, str) else None,
            forked_from=_fork_link(meta),
        )
        self.pending: list[dict[str, Any]] = []
        self.pending_ts: str | None = None
        self.input_ts: str | None = None
        self.pending_usage: dict[str, int] | None = None
        #: The provider's id of the answer being read (``token_usage_record.response_id``).
        self.pending_id: str | None = None
        self.last_response: dict[str, Any] | None = None
        self.calls: dict[str, tuple[int, str]] = {}
        self.results: dict[str, dict[str, Any]] = {}
        self.last_total: Any = None
        self.searches = 0

    def _task(self) -> str:
        for _, kind, p in self.items:
            message = p.get("message")
            if kind == "event_msg" and p.get("type") == "user_message" and isinstance(message, str):
                return message
            if kind == "response_item" and p.get("type") == "message" and p.get("role") == "user":
                text = "".join(_texts(p.get("content")))
                if _human(text):
                    return text
        return ""

    def run(self) -> list[dict[str, Any]]:
        model = self.model
        for ts, kind, p in self.items:
            if kind == "turn_context":
                if isinstance(p.get("model"), str):
                    model = p["model"]
            elif kind == "response_item":
                self._item(ts, p, model)
            elif kind == "event_msg":
                self._event(ts, p)
            elif kind == "compacted":
                self._flush(model)
                self._compacted(ts, p)
            elif kind == "token_usage_record":
                self._usage_record(p)
            elif kind == "session_meta":
                if p is not self.meta:
                    self.report.notes.append("a second session_meta (a fork's copied history)")
            else:
                self.report.skip(kind)
        self._flush(model)
        return self.b.finish()

    # -- items ---------------------------------------------------------------------------

    def _item(self, ts: str | None, p: dict[str, Any], model: str) -> None:
        kind = p.get("type") if isinstance(p.get("type"), str) else None
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
        else:
            self.report.skip(f"response_item/{kind}")

    def _tool_use(self, p: dict[str, Any]) -> dict[str, Any]:
        kind = p.get("type")
        call_id = p.get("call_id") if isinstance(p.get("call_id"), str) else None
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
        else:  # web_search_call: no call_id; its results are not in the rollout
            self.searches += 1
            action = p.get("action")
            inp, name = (action if isinstance(action, dict) else {}), "web_search"
            call_id = p.get("id") if isinstance(p.get("id"), str) else f"web_search_{self.searches}"
        if call_id is None:
            call_id = f"call_{len(self.calls) + self.searches}"
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
            self.calls[block["id"]] = (step, block["name"])
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
        found = self.calls.pop(call_id, None)
        if found is None:
            self.report.notes.append(
                f"an output ({call_id or 'no call_id'}) has no call: kept in the conversation only"
            )
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
        self.results[call_id] = self.b.events[-1]

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
                self.last_response = None
        elif kind == "exec_command_end":
            event = self.results.get(str(p.get("call_id")))
            code = p.get("exit_code")
            if event is not None and isinstance(code, int):
                event["exit_code"] = code
                event["is_error"] = code != 0
        elif kind == "turn_aborted":
            self.b.error(
                message=f"turn aborted: {p.get('reason')}",
                error_type="turn_aborted",
                ts=ts,
                step=None,
            )
        elif kind not in _SKIP_EVENTS:
            self.report.skip(f"event_msg/{kind}")

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
    path = Path(path)
    report = ImportReport()
    conv = Conversion(format=FORMAT, source=path, report=report)
    items = _items(read_source(path) if data is None else data, path, report)
    _convert_tree(conv, path, items, None, {str(path.resolve())}, subagents)
    record_report(conv)
    return conv


def _convert_tree(
    conv: Conversion,
    path: Path,
    items: list[Item],
    parent: dict[str, Any] | None,
    seen: set[str],
    subagents: bool,
) -> None:
    """Convert one rollout, then the subagents it spawned (parents before children)."""
    report = conv.report
    children: list[tuple[str, Path, list[Item]]] = []
    links: dict[str, dict[str, Any]] = {}
    spawned = _spawned(items) if subagents else {}
    for call_id, thread in spawned.items():
        file = _find_rollout(path, thread)
        if file is None or str(file.resolve()) in seen:
            if file is None:
                report.notes.append(
                    f"subagent thread {thread} (started by {call_id}): its rollout is not "
                    "under the same sessions folder"
                )
            continue
        seen.add(str(file.resolve()))
        child_items = _items(read_source(file), file, report)
        child = _Rollout(child_items, file, ImportReport())
        links[call_id] = {"session_id": child.b.session_id, "thread_id": thread}
        children.append((call_id, file, child_items))
    rollout = _Rollout(items, path, report, links)
    events = rollout.run()
    if parent is not None:
        events[0]["metadata"]["parent"] = parent
    conv.runs.append(ImportedRun(rollout.b.session_id, events, parent))
    for call_id, file, child_items in children:
        step = rollout.started.get(call_id, -1)
        link = {"session_id": rollout.b.session_id, "step": step, "tool_use_id": call_id}
        _convert_tree(conv, file, child_items, link, seen, subagents)


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
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_file() or (p.exists() and not p.is_dir()):  # a pipe too; a device is refused
            out.append(p)
            continue
        if not p.is_dir():
            raise FileNotFoundError(p)
        found = sorted(f for f in p.rglob("rollout-*") if f.suffix in (".jsonl", ".json"))
        threads = {m.group(0) for f in found if (m := _UUID.search(f.name))}
        # A subagent's rollout whose parent is also here is imported with its parent.
        out.extend(f for f in found if _parent_thread(_first_meta(f)) not in threads)
    return out


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
