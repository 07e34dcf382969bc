"""A coding-agent session forked (or rewound) back into its own CLI.

``regista fork SESSION --at N --tool-result TEXT --resume-in claude`` reads a Claude Code
transcript or a Codex rollout, finds step ``N`` with the importer's own numbering (the
steps ``regista show`` and the TUI show), and writes a **new** session of the tool: a new
id, the history up to and including step ``N`` with the edit applied, where the tool
looks for it. The person then continues it with ``claude --resume ID`` or
``codex resume ID``. The original file is only read.

- **Claude Code**: ``<config>/projects/<folder of the cwd>/<new id>.jsonl`` (the folder is
  named as Claude Code names it: every character but ``[A-Za-z0-9]`` becomes ``-``, a name
  longer than 200 characters is cut and given a hash). Every line gets the new
  ``sessionId`` and fresh ``uuid`` / ``parentUuid`` links, so the copy shares no message id
  with its parent. Lines without a message envelope (file-history snapshots, titles,
  queue operations) are left out: they name the parent's files and messages.
- **Codex**: ``<codex home>/sessions/YYYY/MM/DD/rollout-<local time>-<new id>.jsonl``,
  beginning with the parent's ``session_meta`` under the new id with ``forked_from_id``
  (Codex's own fork link), then the parent's lines up to the cut.

The link back to the parent is one field the importers read (``registaFork`` on the
first Claude Code line, ``regista_fork`` in Codex's ``session_meta``): the fork's run then
has ``forked_from`` like a fork regista made, so the run tree and ``diff`` pair them.

What no fork restores: the files of the working tree. The transcript records where they
were (cwd, git branch; Codex: git commit and branch), which :class:`CliFork` reports.
"""

from __future__ import annotations

import os
import secrets
import shlex
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from regista.errors import UserError
from regista.store.homes import claude_home, codex_home

__all__ = [
    "TOOLS",
    "CliFork",
    "claude_home",
    "codex_home",
    "find_session",
    "fork_into_cli",
    "project_folder",
]

#: The CLIs a session can be written back into (``--resume-in``).
TOOLS = ("claude", "codex")
#: The format name of each CLI's sessions (as :mod:`regista.importers.detect` names them).
_FORMAT = {"claude": "claude-code", "codex": "codex"}
#: Claude Code cuts a project folder's name at this length and adds a hash.
_MAX_FOLDER = 200
#: Claude Code lines without a message envelope: they name the parent's files and
#: messages (snapshots for /rewind, titles, the prompt queue), so a fork leaves them out.
_NOT_COPIED = frozenset(
    {
        "file-history-snapshot",
        "summary",
        "custom-title",
        "ai-title",
        "last-prompt",
        "queue-operation",
    }
)
#: Codex's output items: one model step's answer (the importer groups them the same way).
_CODEX_OUTPUTS = frozenset(
    {"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
_CODEX_RESULTS = frozenset({"function_call_output", "custom_tool_call_output"})


def project_folder(cwd: str) -> str:
    """The name Claude Code gives the projects folder of ``cwd``.

    Each UTF-16 unit that is not an ASCII letter or digit becomes ``-`` (as its
    JavaScript ``replace(/[^a-zA-Z0-9]/g, "-")`` does); a name longer than 200 is cut to
    200 and followed by ``-`` and the base-36 of the absolute 32-bit string hash of ``cwd``.
    """
    raw = cwd.encode("utf-16-le")
    units = [int.from_bytes(raw[i : i + 2], "little") for i in range(0, len(raw), 2)]
    name = "".join(chr(u) if chr(u).isascii() and chr(u).isalnum() else "-" for u in units)
    if len(name) <= _MAX_FOLDER:
        return name
    h = 0
    for u in units:  # (h << 5) - h + u, kept to a signed 32-bit integer as `| 0` does
        h = ((h << 5) - h + u) & 0xFFFFFFFF
    if h >= 1 << 31:
        h -= 1 << 32
    return f"{name[:_MAX_FOLDER]}-{_base36(abs(h))}"


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def find_session(spec: str) -> tuple[Path, str]:
    """The transcript named by ``spec`` and its CLI (``claude`` or ``codex``).

    ``spec`` is a path, or a session id looked for in Claude Code's projects folders and
    in Codex's sessions (and archived sessions).

    Raises:
        UserError: Nothing is found, or the file is neither tool's session.
    """
    path = Path(spec).expanduser()
    if path.is_file():
        from regista.importers.detect import detect

        try:
            with open(path, "rb") as f:
                fmt = detect(f.read(1 << 20))
        except OSError as exc:
            raise UserError(f"{spec}: cannot be read ({exc.strerror or exc})") from None
        for tool, name in _FORMAT.items():
            if fmt == name:
                return path, tool
        raise UserError(f"{spec}: not a Claude Code transcript nor a Codex rollout")
    if "/" in spec or not spec.strip():
        raise UserError(f"{spec}: no such file")
    found: list[tuple[Path, str]] = []
    projects = claude_home() / "projects"
    if projects.is_dir():
        found += [(p, "claude") for p in sorted(projects.glob(f"*/{_glob_safe(spec)}.jsonl"))]
    for sub in ("sessions", "archived_sessions"):
        root = codex_home() / sub
        if root.is_dir():
            found += [
                (p, "codex") for p in sorted(root.rglob(f"rollout-*{_glob_safe(spec)}.jsonl"))
            ]
    if not found:
        raise UserError(
            f"no session {spec!r} in {projects} nor in {codex_home() / 'sessions'} "
            "(give the transcript's path, or set CLAUDE_CONFIG_DIR / CODEX_HOME)"
        )
    if len(found) > 1:
        listed = ", ".join(str(p) for p, _ in found[:3])
        raise UserError(f"session {spec!r} names {len(found)} files ({listed}): give the path")
    return found[0]


def _glob_safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "?" for c in text)


@dataclass
class CliFork:
    """A session written back into its CLI.

    Attributes:
        tool: ``claude`` or ``codex``.
        session_id: The new session's id.
        path: Its file.
        parent: The transcript it was forked from (untouched).
        parent_session_id: The parent's id in its CLI.
        at_step: The step it was forked at (``rewind``: the first step left out).
        edited: Whether a step was edited (a fork), or not (a rewind).
        cwd: The folder it continues in.
        git: What the transcript recorded of the working tree (``branch``, ``commit``, …).
        steps: How many of the parent's steps it holds.
        notes: What a person should know (recorded results kept with the edit, …).
    """

    tool: str
    session_id: str
    path: Path
    parent: Path
    parent_session_id: str
    at_step: int
    edited: bool
    cwd: str
    git: dict[str, str] = field(default_factory=dict)
    steps: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def command(self) -> str:
        """The one command that continues the session."""
        base = (
            f"claude --resume {self.session_id}"
            if self.tool == "claude"
            else f"codex resume {self.session_id}"
        )
        try:
            here = os.path.realpath(os.getcwd())
        except OSError:
            here = ""
        if os.path.realpath(self.cwd) == here:
            return base
        return f"cd {shlex.quote(self.cwd)} && {base}"

    def lines(self) -> list[str]:
        """What ``regista fork|rewind --resume-in`` prints."""
        what = f"fork at step {self.at_step}" if self.edited else f"rewind to step {self.at_step}"
        name = "Claude Code" if self.tool == "claude" else "Codex"
        out = [
            f"{what}: new {name} session {self.session_id} "
            f"(parent {self.parent_session_id}, untouched)",
            f"written: {self.path}",
            f"kept: steps 0-{self.steps - 1} of the parent"
            + (f", step {self.at_step} edited" if self.edited else "")
            if self.steps
            else "kept: no step of the parent (the conversation before step 0)",
        ]
        out += [f"note: {n}" for n in self.notes]
        tree = ", ".join(f"{k} {v}" for k, v in self.git.items())
        out.append(
            "not restored: the working tree's files; the session ran in "
            f"{self.cwd}{f' ({tree})' if tree else ''}"
        )
        out.append(f"continue: {self.command}")
        return out


def fork_into_cli(
    spec: str,
    at_step: int,
    edit: Any,
    *,
    resume_in: str,
    cwd: str | None = None,
    now: Callable[[], float] = time.time,
) -> CliFork:
    """Write the session ``spec`` forked at ``at_step`` back into its CLI.

    Args:
        spec: The transcript's path, or a session id under the tools' folders.
        at_step: The step to edit (with ``edit``), or for a rewind (``edit`` is ``None``)
            the first step left out: the CLI answers it anew.
        edit: A :class:`~regista.fork.ToolResultEdit`, a
            :class:`~regista.fork.ModelAnswerEdit`, or ``None`` (a rewind).
        resume_in: ``claude`` or ``codex``: the CLI the session is written for (it must be
            the one that recorded it).
        cwd: The folder the session continues in (default: the recorded one).
        now: The clock (the new file's name and the Codex session's time).

    Raises:
        UserError: The session, the step or the edit does not fit (one line says why).
    """
    if resume_in not in TOOLS:
        raise UserError(f"--resume-in: one of {', '.join(TOOLS)}, not {resume_in!r}")
    path, tool = find_session(spec)
    if tool != resume_in:
        other = "a Claude Code transcript" if tool == "claude" else "a Codex rollout"
        raise UserError(
            f"{path} is {other}: it resumes in {tool} (--resume-in {tool}); "
            "a session cannot move from one CLI to the other"
        )
    from regista.importers import convert
    from regista.importers._common import read_source

    data = read_source(path)
    conv = convert(_FORMAT[tool], path, data)
    steps = _steps(conv.main.events)
    if not 0 <= at_step < len(steps):
        raise UserError(
            f"step {at_step} does not exist: the session has steps 0..{len(steps) - 1}"
            if steps
            else "the session has no steps"
        )
    _check_edit(steps, at_step, edit)
    target = cwd
    if tool == "claude":
        return _fork_claude(path, data, steps, at_step, edit, target, conv.main.session_id)
    return _fork_codex(path, data, steps, at_step, edit, target, conv.main.session_id, now)


# -- steps, as the importer numbers them ------------------------------------------------


@dataclass
class _Step:
    kind: str  # model | tool | compaction
    event: dict[str, Any]
    #: For a tool step: the ids of the calls its model step made (itself included).
    siblings: list[str] = field(default_factory=list)


def _steps(events: list[dict[str, Any]]) -> list[_Step]:
    out: dict[int, _Step] = {}
    calls: list[str] = []
    for ev in events:
        step = ev.get("step")
        if not isinstance(step, int):
            continue
        kind = ev.get("type")
        if kind == "llm.response":
            out[step] = _Step("model", ev)
            content = (ev.get("response") or {}).get("content") or []
            calls = [str(b.get("id")) for b in content if b.get("type") == "tool_use"]
        elif kind == "tool.call":
            out[step] = _Step("tool", ev, list(calls))
        elif kind == "context.compaction":
            out[step] = _Step("compaction", ev)
    return [out[n] for n in sorted(out)]


def _check_edit(steps: list[_Step], at: int, edit: Any) -> None:
    from regista.fork import ModelAnswerEdit, ToolResultEdit

    step = steps[at]
    if step.kind == "compaction":
        raise UserError(f"step {at} is a compaction: fork at a model or a tool step")
    if edit is None:
        if step.kind == "tool":
            model = next(n for n in range(at, -1, -1) if steps[n].kind == "model")
            raise UserError(
                f"step {at} is a tool step: the CLI cannot run a tool again from its history. "
                f"Rewind to step {model} (the model call that asked for it), or fork "
                f"--at {at} --tool-result TEXT"
            )
        return
    if isinstance(edit, ToolResultEdit) and step.kind != "tool":
        raise UserError(f"step {at} is a model step: give it --answer, not --tool-result")
    if isinstance(edit, ModelAnswerEdit) and step.kind != "model":
        raise UserError(f"step {at} is a tool step: give it --tool-result, not --answer")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and "text" in b
        )
    return ""


def _parse_lines(data: bytes) -> list[dict[str, Any] | None]:
    """Each line decoded (``None`` for one that is not a JSON object: it is not copied)."""
    out: list[dict[str, Any] | None] = []
    for raw in data.splitlines():
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            obj = None
        out.append(obj if isinstance(obj, dict) else None)
    return out


def _link(parent_sid: str, tool_sid: str, path: Path, at_step: int, edit: Any) -> dict[str, Any]:
    """The ``forked_from`` the fork's run gets when it is imported."""
    return {
        "session_id": parent_sid,
        "at_step": at_step,
        "edit": edit.to_dict() if edit is not None else None,
        "source": {"session_id": tool_sid, "path": str(path.resolve())},
    }


def _write_new(path: Path, lines: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    with open(path, "xb") as f:  # a new id: never an existing file
        f.write(data)


# -- Claude Code ----------------------------------------------------------------------


def _fork_claude(
    path: Path,
    data: bytes,
    steps: list[_Step],
    at: int,
    edit: Any,
    cwd: str | None,
    parent_run: str,
) -> CliFork:
    from regista.fork import ModelAnswerEdit

    lines = _parse_lines(data)
    index_of = {
        o["uuid"]: i
        for i, o in enumerate(lines)
        if o is not None and isinstance(o.get("uuid"), str)
    }
    step = steps[at]
    notes: list[str] = []
    replace: dict[int, dict[str, Any] | None] = {}  # line -> new line (None: left out)
    if step.kind == "tool":
        tid = str(step.event.get("tool_use_id"))
        holders = _claude_result_lines(lines)
        cut = _last_result_line(step, at, holders, notes, "result", "transcript")
        if edit is not None:
            replace[holders[tid]] = _claude_edited_result(lines[holders[tid]], tid, edit)
    else:
        uuids = [u for u in step.event.get("uuids") or [] if u in index_of]
        if not uuids:
            raise UserError(f"step {at}'s lines are not found in the transcript")
        first = min(index_of[u] for u in uuids)
        if edit is None:
            cut = first - 1
        else:
            assert isinstance(edit, ModelAnswerEdit)
            cut = first
            replace[first] = _claude_answer_line(lines[first], edit)
            for u in uuids:
                if index_of[u] != first:
                    replace[index_of[u]] = None
    kept_steps = at + 1 if edit is not None else at
    if step.kind == "tool":
        kept_steps = max(
            kept_steps, *(s + 1 for s, st in enumerate(steps) if _is_call_of(st, step))
        )
    chosen: list[dict[str, Any]] = []
    for i, obj in enumerate(lines[: cut + 1]):
        if obj is None or obj.get("type") in _NOT_COPIED:
            continue
        new = replace.get(i, obj)
        if new is not None:
            chosen.append(new)
    if not any(o.get("type") in ("user", "assistant") for o in chosen):
        raise UserError(f"nothing of the conversation comes before step {at}: nothing to resume")
    recorded_cwd = next((o["cwd"] for o in reversed(chosen) if isinstance(o.get("cwd"), str)), None)
    target = os.path.abspath(os.path.expanduser(cwd)) if cwd else recorded_cwd
    if not target:
        raise UserError("the transcript records no working folder: give --cwd DIR")
    if os.path.isdir(target):
        target = os.path.realpath(target)  # Claude Code names the folder of the real path
    else:
        notes.append(f"{target} does not exist here: create it (or give --cwd) before resuming")
    new_sid = str(uuid.uuid4())
    parent_sid = next(
        (
            str(o["sessionId"])
            for o in lines
            if o is not None and isinstance(o.get("sessionId"), str)
        ),
        path.stem,
    )
    remap = {old: str(uuid.uuid4()) for o in chosen if isinstance(old := o.get("uuid"), str)}
    out: list[dict[str, Any]] = []
    for obj in chosen:
        new = {k: (remap.get(v, v) if isinstance(v, str) else v) for k, v in obj.items()}
        for key in ("parentUuid", "logicalParentUuid"):
            if isinstance(obj.get(key), str) and obj[key] not in remap:
                new[key] = None  # its parent was not copied: a root
        if "sessionId" in new:
            new["sessionId"] = new_sid
        if "cwd" in new:
            new["cwd"] = target
        out.append(new)
    out[0] = {**out[0], "registaFork": _link(parent_run, parent_sid, path, at, edit)}
    git: dict[str, str] = {}
    branch = next(
        (o["gitBranch"] for o in reversed(chosen) if isinstance(o.get("gitBranch"), str)), ""
    )
    if branch:
        git["branch"] = branch
    dest = claude_home() / "projects" / project_folder(target) / f"{new_sid}.jsonl"
    _write_new(dest, out)
    return CliFork(
        "claude",
        new_sid,
        dest,
        path,
        parent_sid,
        at,
        edit is not None,
        target,
        git,
        kept_steps,
        notes,
    )


def _is_call_of(candidate: _Step, step: _Step) -> bool:
    return candidate.kind == "tool" and str(candidate.event.get("tool_use_id")) in step.siblings


def _last_result_line(
    step: _Step, at: int, results: dict[str, int], notes: list[str], result: str, file: str
) -> int:
    """The last line a fork at tool step ``at`` keeps: its result's (``results``: line of
    each call's result), or a later one of another call of the same model answer, since
    the API wants every call of an answer to have its result (``notes`` says so).

    Raises:
        UserError: The step's call has no result in the ``file``.
    """
    tid = str(step.event.get("tool_use_id"))
    if tid not in results:
        raise UserError(
            f"step {at}'s tool call ({tid}) has no {result} in the {file}: "
            "the session stopped before it came back"
        )
    cut = results[tid]
    later = [t for t in step.siblings if t != tid and results.get(t, -1) > cut]
    if later:
        cut = max(results[t] for t in later)
        notes.append(
            f"the {len(later)} other call{'s' if len(later) > 1 else ''} of the same "
            f"model answer keep their recorded {result}s"
        )
    return cut


def _claude_result_lines(lines: list[dict[str, Any] | None]) -> dict[str, int]:
    """tool_use_id -> the line holding its result (the first such line)."""
    out: dict[str, int] = {}
    for i, obj in enumerate(lines):
        if obj is None or obj.get("type") != "user" or obj.get("isSidechain"):
            continue
        content = (
            (obj.get("message") or {}).get("content")
            if isinstance(obj.get("message"), dict)
            else None
        )
        if not isinstance(content, list):
            continue
        for b in content:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                out.setdefault(str(b.get("tool_use_id")), i)
    return out


def _claude_edited_result(obj: dict[str, Any] | None, tid: str, edit: Any) -> dict[str, Any]:
    assert obj is not None
    message = dict(obj["message"])
    blocks = []
    for b in message["content"]:
        if (
            isinstance(b, dict)
            and b.get("type") == "tool_result"
            and str(b.get("tool_use_id")) == tid
        ):
            b = {**b, "content": edit.content}
            if edit.is_error or "is_error" in b:
                b["is_error"] = edit.is_error
        blocks.append(b)
    message["content"] = blocks
    new = {**obj, "message": message}
    if "toolUseResult" in new:  # what the CLI shows for it: the edited text
        new["toolUseResult"] = _text_of(edit.content)
    return new


def _claude_answer_line(obj: dict[str, Any] | None, edit: Any) -> dict[str, Any]:
    assert obj is not None
    message = dict(obj.get("message") or {})
    message["content"] = edit.content
    has_tool = any(b.get("type") == "tool_use" for b in edit.content)
    message["stop_reason"] = edit.stop_reason or ("tool_use" if has_tool else "end_turn")
    return {**obj, "message": message}


# -- Codex -----------------------------------------------------------------------------


def _fork_codex(
    path: Path,
    data: bytes,
    steps: list[_Step],
    at: int,
    edit: Any,
    cwd: str | None,
    parent_run: str,
    now: Callable[[], float],
) -> CliFork:
    from regista.fork import ModelAnswerEdit

    lines = _parse_lines(data)
    first = next((o for o in lines if o is not None), None)
    if (
        first is None
        or first.get("type") != "session_meta"
        or not isinstance(first.get("payload"), dict)
    ):
        raise UserError(
            f"{path}: a rollout from before Codex's JSON-lines format (no session_meta line): "
            "today's codex cannot resume it, so it cannot be written back"
        )
    meta = dict(first["payload"])
    step = steps[at]
    notes: list[str] = []
    replace: dict[int, list[dict[str, Any]]] = {}
    dropped: set[int] = set()
    if step.kind == "tool":
        tid = str(step.event.get("tool_use_id"))
        outputs = {
            str(o["payload"].get("call_id")): i
            for i, o in reversed(list(enumerate(lines)))
            if o is not None
            and o.get("type") == "response_item"
            and isinstance(o.get("payload"), dict)
            and o["payload"].get("type") in _CODEX_RESULTS
        }
        cut = _last_result_line(step, at, outputs, notes, "output", "rollout")
        if edit is not None:
            line = lines[outputs[tid]]
            assert line is not None
            text = _text_of(edit.content)
            replace[outputs[tid]] = [{**line, "payload": {**line["payload"], "output": text}}]
            if edit.is_error:
                notes.append("Codex records no error flag on an output: the text is what it sees")
            dropped = {  # what the CLI shows of the call's run: the recorded output
                i
                for i, o in enumerate(lines)
                if o is not None
                and o.get("type") == "event_msg"
                and isinstance(o.get("payload"), dict)
                and str(o["payload"].get("call_id")) == tid
            }
        kept_steps = max(at + 1, *(s + 1 for s, st in enumerate(steps) if _is_call_of(st, step)))
    else:
        groups = _codex_answer_groups(lines)
        nth = sum(1 for s in steps[:at] if s.kind == "model")
        if nth >= len(groups):
            raise UserError(f"step {at}'s lines are not found in the rollout")
        group = groups[nth]
        if edit is None:
            cut = group[0] - 1
            kept_steps = at
        else:
            assert isinstance(edit, ModelAnswerEdit)
            cut = group[0]
            src = lines[group[0]]
            assert src is not None
            replace[group[0]] = _codex_answer_lines(src.get("timestamp"), edit)
            kept_steps = at + 1
    chosen: list[dict[str, Any]] = []
    for i, obj in enumerate(lines[: cut + 1]):
        if i == 0 or obj is None or i in dropped:
            continue
        chosen += replace.get(i, [obj])
    recorded_cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else None
    for o in chosen:
        p = o.get("payload")
        if (
            o.get("type") == "turn_context"
            and isinstance(p, dict)
            and isinstance(p.get("cwd"), str)
        ):
            recorded_cwd = p["cwd"]
    target = os.path.abspath(os.path.expanduser(cwd)) if cwd else recorded_cwd
    if not target:
        raise UserError("the rollout records no working folder: give --cwd DIR")
    if not os.path.isdir(target):
        notes.append(f"{target} does not exist here: create it (or give --cwd) before resuming")
    parent_sid = str(meta.get("id") or path.stem)
    new_sid = _uuid7(now())
    stamp = datetime.fromtimestamp(now(), tz=UTC)
    meta.update(
        id=new_sid,
        timestamp=stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z",
        cwd=target,
        forked_from_id=parent_sid,
        regista_fork=_link(parent_run, parent_sid, path, at, edit),
    )
    if cwd:
        for o in chosen:
            p = o.get("payload")
            if o.get("type") == "turn_context" and isinstance(p, dict) and "cwd" in p:
                o["payload"] = {**p, "cwd": target}
    if isinstance(meta.get("session_id"), str):  # 0.17x: the id its banner shows
        meta["session_id"] = new_sid
    out = [{**first, "payload": meta}, *chosen]
    if all(isinstance(o.get("ordinal"), int) for o in out):  # 0.17x numbers its lines
        out = [{**o, "ordinal": n} for n, o in enumerate(out)]
    local = datetime.fromtimestamp(now())
    dest = (
        codex_home()
        / "sessions"
        / local.strftime("%Y/%m/%d")
        / f"rollout-{local.strftime('%Y-%m-%dT%H-%M-%S')}-{new_sid}.jsonl"
    )
    _write_new(dest, out)
    git_meta = meta.get("git")
    git = {
        k: str(v)
        for k, v in (git_meta.items() if isinstance(git_meta, dict) else [])
        if k in ("branch", "commit_hash", "repository_url") and isinstance(v, str)
    }
    return CliFork(
        "codex",
        new_sid,
        dest,
        path,
        parent_sid,
        at,
        edit is not None,
        target,
        git,
        kept_steps,
        notes,
    )


def _codex_answer_groups(lines: list[dict[str, Any] | None]) -> list[list[int]]:
    """The lines of each model answer, in order: output items between two inputs, as the
    importer groups them into model steps."""
    groups: list[list[int]] = []
    current: list[int] = []
    for i, obj in enumerate(lines):
        if obj is None:
            continue
        kind = obj.get("type")
        found = obj.get("payload")
        p: dict[str, Any] = found if isinstance(found, dict) else {}
        item = p.get("type")
        if kind == "response_item" and (
            item in _CODEX_OUTPUTS or (item == "message" and p.get("role") == "assistant")
        ):
            current.append(i)
        elif (kind == "response_item" and (item == "message" or item in _CODEX_RESULTS)) or (
            kind == "compacted"
        ):
            if current:
                groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups


def _codex_answer_lines(ts: Any, edit: Any) -> list[dict[str, Any]]:
    """A model answer as Codex's response items: one assistant message, then the calls."""
    out: list[dict[str, Any]] = []
    text = "".join(b.get("text", "") for b in edit.content if b.get("type") == "text")
    if text:
        out.append(
            {
                "timestamp": ts,
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                },
            }
        )
    for b in edit.content:
        if b.get("type") == "tool_use":
            out.append(
                {
                    "timestamp": ts,
                    "type": "response_item",
                    "payload": {
                        "type": "function_call",
                        "name": b.get("name"),
                        "arguments": orjson.dumps(b.get("input") or {}).decode(),
                        "call_id": b.get("id"),
                    },
                }
            )
    return out


def _uuid7(at: float) -> str:
    """A UUIDv7 (Codex's session ids since late 2025): time-ordered, random below."""
    ms = int(at * 1000) & ((1 << 48) - 1)
    rand = secrets.randbits(74)
    value = (
        (ms << 80) | (0x7 << 76) | ((rand >> 62) << 64) | (0b10 << 62) | (rand & ((1 << 62) - 1))
    )
    return str(uuid.UUID(int=value))
