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

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from regista.harness_notes import asked
from regista.importers._builder import ImportReport, RunBuilder, derived_session_id
from regista.importers._common import (
    Conversion,
    ImportedRun,
    read_json_file,
    read_json_lines,
    read_source,
    report_of,
)
from regista.tokens import token_totals
from regista.trace.names import USAGE_COUNTS
from regista.trace.validate import block_problem

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


Lines = list[tuple[int, dict[str, Any]]]


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
    for key in _STR_FIELDS:
        if key in obj and not isinstance(obj[key], str):
            del obj[key]
    if "message" in obj and not isinstance(obj["message"], dict):
        obj["message"] = {}
    msg = obj.get("message")
    if msg:
        for key in ("id", "model", "stop_reason", "stop_sequence"):
            if key in msg and not isinstance(msg[key], str):
                msg[key] = None
        usage = msg.get("usage")
        if usage is not None:
            if not isinstance(usage, dict):
                del msg["usage"]
            else:
                msg["usage"] = {
                    k: v
                    for k, v in usage.items()
                    if k not in USAGE_COUNTS or (isinstance(v, int) and not isinstance(v, bool))
                }
    return obj


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


# -- one thread of lines → one run ---------------------------------------------------------


class _Thread:
    """Converts the lines of one conversation thread (a session or one subagent)."""

    def __init__(
        self,
        lines: Lines,
        *,
        session_id: str,
        metadata: dict[str, Any],
        links: dict[str, dict[str, Any]],
        groups: dict[str, list[dict[str, Any]]],
        compact_usage: dict[str, dict[str, Any]] | None = None,
        import_report: dict[str, Any] | None = None,
        forked_from: dict[str, Any] | None = None,
    ) -> None:
        self.lines = lines
        self.links = links
        self.groups = groups
        self.compact_usage = compact_usage or {}
        #: tool_use_id / compaction key -> the step that started a subagent.
        self.started: dict[str, int] = {}
        self.tool_steps: dict[str, tuple[int, str]] = {}
        first_ts = next((o.get("timestamp") for _, o in lines if o.get("timestamp")), None)
        task = next((_text(o["message"].get("content")) for _, o in lines if _is_prompt(o)), "")
        model = next(
            (
                m
                for _, o in lines
                if o.get("type") == "assistant"
                and (m := (o.get("message") or {}).get("model"))
                and m != "<synthetic>"
            ),
            "unknown",
        )
        meta = dict(metadata)
        for key, field in (("cwd", "cwd"), ("git_branch", "gitBranch"), ("version", "version")):
            values = _distinct(o.get(field) for _, o in lines)
            if values:
                meta[key] = values[0]
                if len(values) > 1:
                    meta[key + "_changes"] = values
        # A summary line titles the session holding the message it names (``leafUuid``):
        # Claude Code writes those of earlier sessions at the top of a new one's file.
        uuids = {u for _, o in lines if isinstance(u := o.get("uuid"), str)}
        titles = [
            o.get("summary")
            for _, o in lines
            if o.get("type") == "summary"
            and ("leafUuid" not in o or (isinstance(o["leafUuid"], str) and o["leafUuid"] in uuids))
        ]
        if titles:
            meta["title"] = titles[-1]
        self.b = RunBuilder(
            session_id,
            task=task,
            model=str(model),
            provider="anthropic",
            started=first_ts or "1970-01-01T00:00:00.000Z",
            metadata=meta,
            import_report=import_report,
            forked_from=forked_from,
        )

    def run(self) -> list[dict[str, Any]]:
        """Convert every line; the run's events."""
        for _ in self.steps():
            pass
        return self.b.events

    def steps(self) -> Iterator[None]:
        """Convert the lines one by one (yielding after each); the last closes the run.

        What a line adds is final once the next is asked for, so a reader may write out
        ``self.b.events`` as they come.
        """
        groups = self.groups
        done: set[str] = set()
        last_input_ts: str | None = None
        boundary: dict[str, Any] | None = None
        for _, obj in self.lines:
            kind = obj.get("type")
            ts = obj.get("timestamp")
            summary_line = kind == "user" and obj.get("isCompactSummary")
            if boundary is not None and kind in ("user", "assistant") and not summary_line:
                self._compact(boundary, "", None)  # a boundary with no summary after it
                boundary = None
            if kind == "user":
                if obj.get("isCompactSummary"):
                    summary = _text((obj.get("message") or {}).get("content"))
                    self._compact(boundary, summary, ts)
                    boundary = None
                else:
                    self._user(obj)
                last_input_ts = ts or last_input_ts
            elif kind == "assistant":
                message = obj.get("message") or {}
                mid = message.get("id") or f"line:{obj.get('uuid')}"
                if mid in done:
                    continue
                done.add(mid)
                self._assistant(obj, groups.get(mid) or [obj], last_input_ts)
                last_input_ts = None
            elif kind == "system":
                subtype = obj.get("subtype")
                if subtype == "compact_boundary":
                    boundary = obj
                elif subtype == "api_error" or obj.get("level") == "error":
                    self.b.error(
                        message=str(obj.get("content") or subtype or "error"),
                        error_type=str(subtype or "system_error"),
                        ts=ts,
                        step=None,
                    )
                # other subtypes are skipped (counted by _survey)
            # summary lines naming one of its messages are the session's title, kept in the
            # metadata; other types
            # are skipped (counted by _survey)
            yield None
        if boundary is not None:
            self._compact(boundary, "", None)
        self.b.finish()

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
            self.tool_steps[tid] = (step, name)

    def _compact(self, boundary: dict[str, Any] | None, summary: str, ts: str | None) -> None:
        meta = (boundary or {}).get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        extra: dict[str, Any] = {}
        if isinstance(meta.get("trigger"), str):
            extra["trigger"] = meta["trigger"]
        key = f"compact:{(boundary or {}).get('uuid')}"
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


def _segments(lines: Lines) -> list[Lines]:
    """Inline sidechain lines grouped into one list per subagent run."""
    by_agent: dict[str, Lines] = {}
    seg_of: dict[str, int] = {}
    segs: list[Lines] = []
    for item in lines:
        obj = item[1]
        agent = obj.get("agentId")
        if agent:
            by_agent.setdefault(str(agent), []).append(item)
            continue
        parent = obj.get("parentUuid")
        idx = seg_of.get(parent) if isinstance(parent, str) else None
        if idx is None:
            idx = len(segs)
            segs.append([])
        segs[idx].append(item)
        if isinstance(obj.get("uuid"), str):
            seg_of[obj["uuid"]] = idx
    return segs + list(by_agent.values())


def _first_prompt(lines: Lines) -> str:
    for _, obj in lines:
        if obj.get("type") == "user":
            return _text((obj.get("message") or {}).get("content"))
    return ""


def _first_ts(lines: Lines) -> str | None:
    return next((o.get("timestamp") for _, o in lines if o.get("timestamp")), None)


def _survey(lines: Lines, report: ImportReport) -> dict[str, list[dict[str, Any]]]:
    """One cheap pass over a thread's lines, before any event is made.

    Returns its assistant lines grouped by message id, and counts in ``report`` what the
    conversion will skip or leave unpaired (so the run's ``session.start`` can say it
    before the rest is written). It follows :meth:`_Thread.steps` line for line.
    """
    groups: dict[str, list[dict[str, Any]]] = {}
    for _, obj in lines:
        if obj.get("type") == "assistant":
            mid = (obj.get("message") or {}).get("id")
            if mid:
                groups.setdefault(mid, []).append(obj)
    pending: set[str] = set()
    done: set[str] = set()
    left_out = 0
    for _, obj in lines:
        kind = obj.get("type")
        if kind in ("user", "assistant"):
            message = obj.get("message")
            left_out += _left_out(message.get("content")) if isinstance(message, dict) else 0
        if kind == "user":
            if obj.get("isCompactSummary"):
                continue
            for block in _blocks((obj.get("message") or {}).get("content")):
                if block.get("type") != "tool_result":
                    continue
                tid = str(block.get("tool_use_id") or "")
                if tid in pending:
                    pending.discard(tid)
                else:
                    report.notes.append(
                        f"a tool result ({tid or 'no id'}) has no tool call in its thread: "
                        "kept in the conversation only"
                    )
        elif kind == "assistant":
            message = obj.get("message") or {}
            mid = message.get("id") or f"line:{obj.get('uuid')}"
            if mid in done:
                continue
            done.add(mid)
            if obj.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
                continue
            for line in groups.get(mid) or [obj]:
                for block in _blocks((line.get("message") or {}).get("content")):
                    if block.get("type") == "tool_use":
                        pending.add(str(block.get("id") or ""))
        elif kind == "system":
            subtype = obj.get("subtype")
            if subtype not in ("compact_boundary", "api_error") and obj.get("level") != "error":
                report.skip(f"system/{subtype}")
        elif kind != "summary":
            report.skip(str(kind))
    if left_out:
        report.notes.append(
            f"{left_out} malformed content block{'s' if left_out > 1 else ''} left out"
        )
    return groups


def convert(path: Path, data: bytes | None = None, *, subagents: bool = True) -> Conversion:
    """Convert the session transcript ``path`` (and its subagents) into runs.

    Args:
        path: The session's ``.jsonl`` file.
        data: Its bytes, when already read.
        subagents: Also convert the subagent files beside it.
    """
    return Job(path, data, subagents=subagents).finish()


class Job:
    """One transcript's conversion, done a piece at a time.

    Making the job reads the transcript (and its subagents' files) and works out everything
    that needs the whole of it: the assistant lines of each API call, which tool call
    started which subagent, what will be skipped. The events are then made in file order
    by :meth:`advance`, the main run first; the main run's events are final as soon as they
    are made, so a viewer can show them while the rest converts. :meth:`finish` converts
    whatever is left and returns the :class:`Conversion` (the same as :func:`convert`'s).

    Attributes:
        conv: The conversion; ``conv.runs[0]`` (the main run) grows as the job advances,
            the subagents' runs are added once the whole job is done.
        done: Every run is converted.
    """

    def __init__(self, path: Path, data: bytes | None = None, *, subagents: bool = True) -> None:
        path = Path(path)
        report = ImportReport()
        parsed = (
            read_json_file(path, report) if data is None else read_json_lines(data, path, report)
        )
        lines = [(n, _clean(o)) for n, o in parsed]
        del parsed
        source_sid = next((str(o["sessionId"]) for _, o in lines if o.get("sessionId")), path.stem)
        main_lines = [it for it in lines if not it[1].get("isSidechain")]
        side_lines = [it for it in lines if it[1].get("isSidechain")]
        main_sid = derived_session_id(source_sid, _first_ts(main_lines) or _first_ts(lines))
        origin = {"format": FORMAT, "path": str(path.resolve()), "session_id": source_sid}

        # Every thread to convert: (key, lines, metadata); the main session first.
        threads: list[tuple[str, Lines, dict[str, Any]]] = []
        for n, seg in enumerate(_segments(side_lines)):
            agent = next((str(o["agentId"]) for _, o in seg if o.get("agentId")), None)
            threads.append((agent or f"sidechain-{n}", seg, {"layout": "inline"}))
        for file in _agent_files(path, source_sid) if subagents else []:
            sub = [(n, _clean(o)) for n, o in read_json_lines(read_source(file), file, report)]
            agent = file.stem.removeprefix("agent-")
            meta: dict[str, Any] = {"layout": "file", "path": str(file.resolve())}
            sidecar = file.with_suffix(".meta.json")
            if sidecar.is_file():
                try:
                    meta["agent_meta"] = orjson.loads(sidecar.read_bytes())
                except (orjson.JSONDecodeError, OSError):
                    report.notes.append(f"{sidecar}: not valid JSON (ignored)")
            threads.append((agent, sub, meta))

        # Which tool call (or compaction) started each thread.
        sids = {
            key: derived_session_id(f"{source_sid}:{key}", _first_ts(ls)) for key, ls, _ in threads
        }
        links: dict[str, dict[str, Any]] = {}
        compact_usage: dict[str, dict[str, Any]] = {}
        owner: dict[str, str] = {}  # thread key -> tool_use_id / compaction key that started it
        prompts: list[tuple[str, str]] = []  # (tool_use_id, prompt) of subagent calls, in order
        boundaries: list[str] = []
        for _, ls, _ in [("", main_lines, {}), *threads]:
            for _, obj in ls:
                result = obj.get("toolUseResult")
                if isinstance(result, dict) and result.get("agentId"):
                    for block in _blocks((obj.get("message") or {}).get("content")):
                        if block.get("type") == "tool_result":
                            owner.setdefault(str(result["agentId"]), str(block.get("tool_use_id")))
                if obj.get("type") == "assistant":
                    for block in _blocks((obj.get("message") or {}).get("content")):
                        if block.get("type") == "tool_use" and block.get("name") in _SUBAGENT_TOOLS:
                            inp = block.get("input")
                            prompt = inp.get("prompt") if isinstance(inp, dict) else None
                            prompts.append((str(block.get("id")), str(prompt or "")))
        for _, obj in main_lines:
            if obj.get("type") == "system" and obj.get("subtype") == "compact_boundary":
                boundaries.append(f"compact:{obj.get('uuid')}")
        taken = set(owner.values())
        for key, ls, meta in threads:
            agent_meta = meta.get("agent_meta")
            tool_id = agent_meta.get("toolUseId") if isinstance(agent_meta, dict) else None
            if key not in owner and isinstance(tool_id, str):
                owner[key] = tool_id
            if key.startswith("acompact") and key not in owner and boundaries:
                owner[key] = boundaries.pop(0)
            if key not in owner:  # older layouts: the subagent's first prompt is the Task prompt
                prompt = _first_prompt(ls)
                for tid, p in prompts:
                    if tid not in taken and p and p == prompt:
                        owner[key] = tid
                        break
            if key in owner:
                taken.add(owner[key])
                links[owner[key]] = {"session_id": sids[key], "agent_id": key}
                if owner[key].startswith("compact:"):
                    compact_usage[owner[key]] = _usage_of(ls)
        for key, _ls, _ in threads:
            if key not in owner and not key.startswith("sidechain"):
                report.notes.append(f"subagent {key}: no tool call starts it (kept as its own run)")

        # Convert: parents before children, so a child knows its parent's step.
        self.todo: list[tuple[str, str, Lines, dict[str, Any]]] = [("", main_sid, main_lines, {})]
        self.todo += [(k, sids[k], ls, m) for k, ls, m in threads]
        self.groups = [_survey(ls, report) for _, _, ls, _ in self.todo]
        self.conv = Conversion(format=FORMAT, source=path, report=report)
        self.main_sid = main_sid
        self.origin = origin
        self.owner = owner
        self.links = links
        self.compact_usage = compact_usage
        #: tool_use_id / compaction key -> (run sid, step) of the step that started a thread.
        self.starts: dict[str, tuple[str, int]] = {}
        self.done = False
        self._next = 0
        self._main_done = 0  # lines of the main thread converted
        self._current: tuple[_Thread, str, dict[str, Any] | None, Iterator[None]] | None = None

    @property
    def source(self) -> Path:
        return self.conv.source

    @property
    def main_progress(self) -> float:
        """How much of the main run is converted, from 0 to 1."""
        if self._next > 0:
            return 1.0
        return min(self._main_done / max(len(self.todo[0][2]), 1), 1.0)

    def _open(self, n: int) -> None:
        key, sid, ls, meta = self.todo[n]
        parent: dict[str, Any] | None = None
        if key and key in self.owner:
            run_sid, step = self.starts.get(self.owner[key], (self.main_sid, -1))
            parent = {"session_id": run_sid, "step": step, "tool_use_id": self.owner[key]}
        thread_meta: dict[str, Any] = {
            "imported_from": {**self.origin, **({"agent_id": key} if key else {})}
        }
        thread_meta.update({k: v for k, v in meta.items() if k != "layout"} if key else {})
        if key:
            thread_meta["subagent_layout"] = meta.get("layout")
        if parent is not None:
            thread_meta["parent"] = parent
        thread = _Thread(
            ls,
            session_id=sid,
            metadata=thread_meta,
            links=self.links,
            groups=self.groups[n],
            compact_usage=self.compact_usage,
            import_report=None if key else report_of(self.conv.report),
            forked_from=None if key else fork_link(ls),
        )
        self.conv.runs.append(ImportedRun(sid, thread.b.events, parent))
        self._current = (thread, sid, parent, thread.steps())

    def advance(self, lines: int) -> bool:
        """Convert about ``lines`` more transcript lines; returns :attr:`done`."""
        while lines > 0 and not self.done:
            if self._current is None:
                self._open(self._next)
            assert self._current is not None
            thread, sid, _, steps = self._current
            for _ in steps:
                lines -= 1
                if self._next == 0:
                    self._main_done += 1
                if lines <= 0:
                    break
            else:
                self.starts.update({k: (sid, step) for k, step in thread.started.items()})
                self._current = None
                self._next += 1
                if self._next == len(self.todo):
                    _fix_parent_steps(self.conv, self.starts)
                    self.done = True
        return self.done

    def finish(self) -> Conversion:
        """Convert what is left; the whole conversion."""
        while not self.done:
            self.advance(1 << 30)
        return self.conv


def fork_link(lines: Lines) -> dict[str, Any] | None:
    """The run a session was forked from, when ``regista fork … --resume-in claude`` wrote
    it (``registaFork`` on its first line): its ``forked_from``."""
    for _, obj in lines[:1]:
        link = obj.get("registaFork")
        if isinstance(link, dict) and isinstance(link.get("session_id"), str):
            at = link.get("at_step")
            if isinstance(at, int) and not isinstance(at, bool) and at >= 0:
                return link
    return None


def _usage_of(lines: Lines) -> dict[str, Any]:
    """Token counts of a thread's model calls, each call counted once."""
    per_call: dict[str, dict[str, Any]] = {}
    for _, obj in lines:
        msg = obj.get("message") or {}
        usage = msg.get("usage")
        if obj.get("type") == "assistant" and isinstance(usage, dict):
            mid = str(msg.get("id") or obj.get("uuid"))
            if mid not in per_call or _out(usage) >= _out(per_call[mid]):
                per_call[mid] = usage
    return token_totals(per_call.values()).usage_dict()


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
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_file() or (p.exists() and not p.is_dir()):  # a pipe too; a device is refused
            out.append(p)
            continue
        if not p.is_dir():
            raise FileNotFoundError(p)
        for f in sorted(p.rglob("*.jsonl")):
            if f.name.startswith("agent-") or "subagents" in f.parts:
                continue
            out.append(f)
    return out
