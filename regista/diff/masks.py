"""Masks: the parts of a request that a client varies by itself, which a strict match ignores.

Coding agents put their surroundings into the prompt: Claude Code the date, the working
folder, the git status, the platform and the home folder; Codex the same in its
``<environment_context>`` message, and fresh ids on every input item. A recording made
yesterday, or in another folder, differs from today's request only there. A :class:`Mask`
names one such part:

- a *text* mask is a regular expression over the text a model reads (the system prompt, and
  the text of the messages: ``text`` blocks, string contents, tool results); each of its
  groups (the whole match when it has none) is the volatile span, replaced by
  ``«masked:NAME»`` before the strict digest is taken;
- a *path* mask (``where = "$.messages[*].id"``) replaces the value at a JSON path of the
  request's digest form, when it matches its ``pattern`` in full.

Masks only cover spans: the text around a span still has to match, and what is served back
is the recording, untouched. Differences that a mask covers are still shown, marked
``masked`` (:meth:`MaskSet.masked_changes`), never dropped without a word.

The built-in set (:data:`BUILTIN_MASKS`) covers the clients of the conformance matrix. A user
adds masks in a TOML file (:func:`load_mask_file`; by default ``masks.toml`` beside the
traces)::

    [[mask]]
    name = "build-id"
    where = "text"                # text | system | messages | $.json.path
    pattern = 'Build id: (\\d+)'
    why = "our agent puts its build number in the prompt"
    evidence = "step 0: '4711' in one run, '4712' in the other"   # optional
"""

from __future__ import annotations

import re
import re._constants as _sre_constants  # type: ignore[import-not-found]
import re._parser as _sre_parse  # type: ignore[import-not-found]
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regista.diff.structural import Change
from regista.errors import UserError

__all__ = [
    "BUILTIN_MASKS",
    "DEFAULT_MASK_FILE",
    "DIVERGED",
    "EXACT",
    "MASKED",
    "VERDICTS",
    "Mask",
    "MaskFileError",
    "MaskHit",
    "MaskSet",
    "load_mask_file",
    "mask_set",
    "pair_verdict",
    "pair_verdicts",
    "split_changes",
    "verdict_counts",
    "verdict_summary",
]

#: A replayed step's verdict: its request matched byte for byte (``exact``), only once the
#: masks were applied (``masked``), or not at all (``diverged``).
EXACT = "exact"
MASKED = "masked"
DIVERGED = "diverged"
VERDICTS = (EXACT, MASKED, DIVERGED)


def verdict_counts(verdicts: dict[int, str] | Sequence[str]) -> str:
    """``"5 exact, 1 masked"``: how many steps got each verdict (those that did)."""
    values = list(verdicts.values()) if isinstance(verdicts, dict) else list(verdicts)
    counts = [(v, values.count(v)) for v in VERDICTS]
    return ", ".join(f"{n} {v}" for v, n in counts if n) or "no step played"


def verdict_summary(verdicts: dict[int, str] | Sequence[str]) -> dict[str, int]:
    """How many steps got each verdict: ``{"exact": 5, "masked": 1, "diverged": 0}``."""
    values = list(verdicts.values()) if isinstance(verdicts, dict) else list(verdicts)
    return {v: values.count(v) for v in VERDICTS}


#: The mask file looked for beside the traces when none is named.
DEFAULT_MASK_FILE = "masks.toml"

_TEXT_WHERE = ("text", "system", "messages", "tools")
_KEYS = {"name", "where", "pattern", "why", "client", "evidence"}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}")
_PATH_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_\-]*|\*)|\[(\*|\d+)\]")
#: Largest mask file read (a mask file is a few lines written by a person or a tool).
MAX_MASK_FILE = 1 << 20


class MaskFileError(UserError):
    """A mask file that cannot be used (names the file, and the mask when it is one)."""


def placeholder(name: str) -> str:
    """What a masked span reads as in the digest form."""
    return f"«masked:{name}»"


@dataclass(frozen=True)
class Mask:
    """One volatile part of a request.

    Attributes:
        name: A short name, unique in a set (``cc-date``).
        where: ``text`` (system prompt, message text and tool descriptions), ``system``,
            ``messages``, ``tools`` (tool descriptions: not in the strict digest, but in a
            run diff), or a JSON path of the request (``$.messages[*].id``).
        pattern: For a text mask, the expression whose groups (or whole match) are masked;
            for a path mask, what the value must match in full (empty: any value).
        why: Why the part is volatile, for people.
        client: The client that varies it (``Claude Code``), when it is one.
        evidence: One line of evidence (what differed where), when known.
    """

    name: str
    where: str
    pattern: str
    why: str
    client: str = ""
    evidence: str = ""
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)
    path: tuple[str | int | None, ...] = field(init=False, repr=False, compare=False)
    #: Text every match begins with (its literal prefix): a text without it is skipped
    #: before the expression runs (most texts of a long history hold no volatile part).
    needle: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"name {self.name!r}: letters, digits, '-', '_' and '.' (at most 64)")
        if not self.why.strip():
            raise ValueError("'why' must say why the part is volatile")
        try:
            regex = re.compile(self.pattern)
        except (re.error, RecursionError, OverflowError) as exc:
            raise ValueError(f"pattern {self.pattern!r}: {exc}") from None
        path: tuple[str | int | None, ...] = ()
        if self.where.startswith("$"):
            path = _parse_path(self.where)
        elif self.where not in _TEXT_WHERE:
            raise ValueError(
                f"where {self.where!r}: one of {', '.join(_TEXT_WHERE)}, or a JSON path "
                "starting with '$' ($.messages[*].id)"
            )
        elif not self.pattern or regex.fullmatch(""):
            raise ValueError(f"pattern {self.pattern!r} matches empty text: it would mask nothing")
        object.__setattr__(self, "regex", regex)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "needle", _literal_prefix(self.pattern))

    @property
    def is_path(self) -> bool:
        return bool(self.path)

    def applies_to(self, part: str) -> bool:
        """Whether this text mask reads ``part`` (``system`` or ``messages``)."""
        return not self.is_path and self.where in ("text", part)

    def covers_path(self, path: str) -> bool:
        """Whether this path mask names ``path`` (``$.messages[3].id``, a run diff's path)."""
        if not self.is_path:
            return False
        steps = "".join(
            r"\[\d+\]"
            if s is None
            else rf"\[{s}\]"
            if isinstance(s, int)
            else (r"\.[^.\[]+" if s == "*" else r"\." + re.escape(s))
            for s in self.path
        )
        return re.fullmatch(r"\$" + steps, path) is not None

    def as_toml(self) -> str:
        """This mask as a ``[[mask]]`` table of a mask file."""
        lines = ["[[mask]]", f"name = {_toml_str(self.name)}", f"where = {_toml_str(self.where)}"]
        lines.append(f"pattern = {_toml_str(self.pattern)}")
        lines.append(f"why = {_toml_str(self.why)}")
        if self.client:
            lines.append(f"client = {_toml_str(self.client)}")
        if self.evidence:
            lines.append(f"evidence = {_toml_str(self.evidence)}")
        return "\n".join(lines) + "\n"


def _literal_prefix(pattern: str) -> str:
    """The literal text every match of ``pattern`` begins with ("" when unsure)."""
    try:
        parsed = _sre_parse.parse(pattern)
    except Exception:  # compiled fine above; the parser's internals are not the point
        return ""
    if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
        return ""
    out: list[str] = []
    for op, arg in parsed:
        if op is _sre_constants.AT and not out:
            continue  # \A, ^: no text
        if op is not _sre_constants.LITERAL:
            break
        out.append(chr(arg))
    return "".join(out)


def _toml_str(value: str) -> str:
    # A literal string keeps a regular expression readable; a basic one when it cannot.
    if "'" not in value and "\n" not in value and "\r" not in value:
        return f"'{value}'"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + escaped.replace("\r", "\\r").replace("\t", "\\t") + '"'


def _parse_path(where: str) -> tuple[str | int | None, ...]:
    """``$.messages[*].id`` → ``("messages", None, "id")`` (``None``: every item, ``"*"``:
    every key)."""
    steps: list[str | int | None] = []
    pos = 1
    while pos < len(where):
        m = _PATH_STEP.match(where, pos)
        if m is None:
            raise ValueError(
                f"where {where!r}: not a JSON path of '.name', '[N]' and '[*]' steps "
                f"(stuck at character {pos + 1})"
            )
        if m.group(1) is not None:
            steps.append(m.group(1))
        else:
            steps.append(None if m.group(2) == "*" else int(m.group(2)))
        pos = m.end()
    if not steps:
        raise ValueError(f"where {where!r}: a JSON path needs at least one step")
    return tuple(steps)


@dataclass(frozen=True)
class MaskHit:
    """One masked value: where, by which mask, and what it was."""

    path: str
    mask: str
    value: str


# -- the built-in set --------------------------------------------------------------------------

_CC = "Claude Code"
_CX = "Codex"

# Claude Code's environment block is in the system prompt; a program on the Claude Agent SDK
# with its own system prompt gets it as a message: these masks read both ("text").
_CLAUDE_CODE: tuple[Mask, ...] = (
    Mask(
        "cc-date",
        "messages",
        r"# currentDate\nToday's date is (\d{4}-\d{2}-\d{2})\.",
        "Claude Code tells the model today's date in a <system-reminder>",
        _CC,
    ),
    Mask(
        "cc-date-changed",
        "messages",
        r"The date has changed\. Today's date is now (\d{4}-\d{2}-\d{2})\.",
        "Claude Code says so when the date changes during a session",
        _CC,
    ),
    Mask(
        "cc-date-end",
        "messages",
        r"\n\nToday's date is (\d{4}-\d{2}-\d{2})\.\Z",
        "Claude Code started by the Agent SDK ends its reminder message with today's date",
        _CC,
    ),
    Mask(
        "cc-cwd",
        "text",
        r"\n - Primary working directory: ([^\n]+)",
        "Claude Code names the folder it was started in",
        _CC,
    ),
    Mask(
        "cc-git-repo",
        "text",
        r"\n - Is a git repository: (true|false)",
        "Claude Code says whether that folder is a git repository",
        _CC,
    ),
    Mask(
        "cc-platform",
        "text",
        r"\n - Platform: ([^\n]+)\n - Shell: ([^\n]+)\n - OS Version: ([^\n]+)",
        "Claude Code names the platform, shell and OS version it runs on",
        _CC,
    ),
    Mask(
        "cc-memory-dir",
        "text",
        r"persistent file-based memory at `([^`\n]+)`",
        "Claude Code's memory folder is under $HOME and named after the working folder",
        _CC,
    ),
    Mask(
        "cc-git-status",
        "text",
        r"gitStatus: This is the git status at the start of the conversation\.[^\n]*\n\n"
        r"(Current branch: [\s\S]*?Recent commits:\n(?:[0-9a-f]{7,40} [^\n]*(?:\n|$))*)",
        "Claude Code snapshots the branch, status and recent commits of its folder",
        _CC,
    ),
    Mask(
        "cc-month",
        "tools",
        r"The current month is ([A-Z][a-z]+ \d{4})",
        "Claude Code's WebSearch tool is told the current month (a run diff's tools)",
        _CC,
    ),
    Mask(
        "cc-user-id",
        "$.params.metadata.user_id",
        r'\{"device_id":"[0-9a-f]+","account_uuid":"[^"]*","session_id":"[0-9a-f-]+"\}',
        "Claude Code sends its install's device id and a fresh session id (a run diff's params)",
        _CC,
    ),
    Mask(
        "cc-env-v1",
        "text",
        r"<env>\nWorking directory: ([^\n]*)\nIs directory a git repo: ([^\n]*)\n"
        r"Platform: ([^\n]*)\nOS Version: ([^\n]*)\nToday's date: ([^\n]*)\n</env>",
        "Claude Code 1.x puts its folder, platform and date in an <env> block",
        _CC,
    ),
)


def _codex_tag(tag: str, why: str) -> Mask:
    return Mask(f"codex-{tag.replace('_', '-')}", "text", rf"<{tag}>([^<]*)</{tag}>", why, _CX)


# Codex's environment message: each tag is masked only inside <environment_context>.
_CODEX_TAGS: tuple[Mask, ...] = (
    _codex_tag("cwd", "Codex names the folder it was started in"),
    _codex_tag("current_date", "Codex tells the model today's date"),
    _codex_tag("timezone", "Codex names the machine's time zone"),
    _codex_tag("shell", "Codex names the user's shell"),
    _codex_tag("root", "Codex lists its workspace roots (the working folder)"),
    _codex_tag("approval_policy", "Codex states the approval policy it was started with"),
    _codex_tag("sandbox_mode", "Codex states the sandbox it was started with"),
    _codex_tag("network_access", "Codex states whether the sandbox has network access"),
    _codex_tag("writable_roots", "Codex lists the folders the sandbox may write"),
)

#: Volatile parts of the clients in the conformance matrix. The Claude Agent SDK drives the
#: Claude Code CLI, so Claude Code's masks cover it; the OpenAI Agents SDK, pydantic-ai and
#: LangChain put nothing of their surroundings into a request by themselves.
BUILTIN_MASKS: tuple[Mask, ...] = (
    *_CLAUDE_CODE,
    *_CODEX_TAGS,
    Mask(
        "codex-skill-root",
        "text",
        r"\n- `r\d+` = `([^`\n]+)`",
        "Codex lists its skill folders under $CODEX_HOME",
        _CX,
    ),
    Mask(
        "codex-exec-timing",
        "messages",
        r"\AChunk ID: ([0-9a-f]{6})\nWall time: (\d+(?:\.\d+)?) seconds\nProcess ",
        "Codex heads each command's output with a random chunk id and the time it took "
        "(the command's exit code and output still count)",
        _CX,
    ),
    Mask(
        "codex-item-id",
        "$.messages[*].content[*].item.id",
        r"[a-z]+_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}",
        "Codex gives the items it makes itself (additional_tools, …) a fresh time-based id; "
        "the model reads the items, not their ids",
        _CX,
    ),
    Mask(
        "codex-cache-key",
        "$.params.prompt_cache_key",
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        "Codex keys the provider's cache by its session id (a run diff's params)",
        _CX,
    ),
    Mask(
        "codex-client-metadata",
        "$.params.client_metadata.*",
        "",
        "Codex sends its installation, session and turn ids and times as metadata the "
        "model never reads (a run diff's params)",
        _CX,
    ),
)

_CODEX_SCOPE = re.compile(r"<environment_context>[\s\S]*?</environment_context>")
_SCOPED = {m.name for m in _CODEX_TAGS}


# -- applying masks ----------------------------------------------------------------------------


class MaskSet:
    """The masks a replay applies, built-in ones first.

    Args:
        masks: The masks, in the order they apply.
        sources: Where they came from, for people (``built-in``, a file's path).
    """

    def __init__(self, masks: Iterable[Mask] = (), sources: Sequence[str] = ()) -> None:
        self.masks = list(masks)
        self.sources = list(sources)
        seen: set[str] = set()
        for m in self.masks:
            if m.name in seen:
                raise MaskFileError(f"mask {m.name!r} is defined twice")
            seen.add(m.name)
        self._system = _TextMasker([m for m in self.masks if m.applies_to("system")])
        self._messages = _TextMasker([m for m in self.masks if m.applies_to("messages")])
        self._paths = [m for m in self.masks if m.is_path]

    def __len__(self) -> int:
        return len(self.masks)

    def __bool__(self) -> bool:
        return bool(self.masks)

    def apply(self, form: dict[str, Any]) -> tuple[dict[str, Any], list[MaskHit]]:
        """``form`` (a digest form: ``system`` and ``messages``) with its volatile spans
        replaced by placeholders, and what was masked. ``form`` is not changed."""
        hits: list[MaskHit] = []
        if not self.masks:
            return form, hits
        out = dict(form)
        system = form.get("system")
        if isinstance(system, str) and self._system.masks:
            out["system"] = _note(self._system(system), "system", hits)
        messages = form.get("messages")
        if isinstance(messages, list) and self._messages.masks:
            out["messages"] = [
                _mask_message(m, self._messages, i, hits) for i, m in enumerate(messages)
            ]
        for mask in self._paths:
            out = _mask_path(out, mask, mask.path, (), hits)
        return out, hits

    def masked_changes(
        self, recorded: list[MaskHit], live: list[MaskHit], old: str = "recorded", new: str = "live"
    ) -> list[str]:
        """One line per masked value that differs between two requests, e.g.
        ``messages[0].content[0].text: masked cc-date (…): recorded '…', live '…'``."""
        why = {m.name: m.why for m in self.masks}

        def keyed(hits: list[MaskHit]) -> dict[tuple[str, str, int], str]:
            count: dict[tuple[str, str], int] = {}
            out: dict[tuple[str, str, int], str] = {}
            for h in hits:
                n = count.get((h.path, h.mask), 0)
                count[(h.path, h.mask)] = n + 1
                out[(h.path, h.mask, n)] = h.value
            return out

        a, b = keyed(recorded), keyed(live)
        lines = []
        for key in sorted(set(a) & set(b), key=lambda k: (k[0], k[1], k[2])):
            if a[key] != b[key]:
                path, name, _ = key
                lines.append(
                    f"{path}: masked {name} ({why.get(name, '')}): {old} {_short(a[key])}, "
                    f"{new} {_short(b[key])}"
                )
        return lines

    def describe(self) -> list[str]:
        """One line per mask, for ``regista masks`` and ``regista replay``."""
        return [f"{m.name:<20} {m.client or 'user':<12} {m.where:<18} {m.why}" for m in self.masks]


def _short(value: str, limit: int = 60) -> str:
    return repr(value if len(value) <= limit else value[: limit - 1] + "…")


def _mask_text(text: str, masks: list[Mask], path: str, hits: list[MaskHit]) -> str:
    scoped = "<environment_context>" in text
    for mask in masks:
        if mask.needle and mask.needle not in text:
            continue
        if mask.name in _SCOPED:
            if not scoped:
                continue
            text = _CODEX_SCOPE.sub(
                lambda s, mask=mask: _sub(s.group(0), mask, path, hits),  # type: ignore[misc]
                text,
            )
        else:
            text = _sub(text, mask, path, hits)
    return text


def _sub(text: str, mask: Mask, path: str, hits: list[MaskHit]) -> str:
    regex = mask.regex
    if regex.search(text) is None:
        return text
    mark = placeholder(mask.name)
    parts: list[str] = []
    last = 0
    for m in regex.finditer(text):
        spans = [m.span(g) for g in range(1, regex.groups + 1)] if regex.groups else [m.span()]
        for start, end in spans:
            if start < 0 or start < last:  # a group that did not take part, or overlaps
                continue
            parts.append(text[last:start])
            parts.append(mark)
            hits.append(MaskHit(path, mask.name, text[start:end]))
            last = end
    parts.append(text[last:])
    return "".join(parts)


#: Texts a :class:`MaskSet` remembers the masking of (a history repeats on every call).
_CACHE = 4096

Found = tuple[str, tuple[tuple[str, str], ...]]


class _TextMasker:
    """Masks texts with one list of masks, remembering the last texts it saw: a client
    sends its whole history on every call, and only the new messages cost anything."""

    def __init__(self, masks: list[Mask]) -> None:
        self.masks = masks
        self._seen: dict[str, Found] = {}

    def __call__(self, text: str) -> Found:
        found = self._seen.get(text)
        if found is None:
            local: list[MaskHit] = []
            masked = _mask_text(text, self.masks, "", local)
            found = (text if masked == text else masked, tuple((h.mask, h.value) for h in local))
            if len(self._seen) >= _CACHE:
                self._seen.clear()
            self._seen[text] = found
        return found


def _note(found: Found, path: str, hits: list[MaskHit]) -> str:
    masked, named = found
    hits.extend(MaskHit(path, name, value) for name, value in named)
    return masked


def _mask_message(message: Any, masker: _TextMasker, i: int, hits: list[MaskHit]) -> Any:
    if not isinstance(message, dict):
        return message
    content = message.get("content")
    if isinstance(content, str):
        found = masker(content)
        if not found[1]:
            return message
        return {**message, "content": _note(found, f"messages[{i}].content", hits)}
    if isinstance(content, list):
        blocks = [_mask_block(b, masker, i, (j,), hits) for j, b in enumerate(content)]
        if all(x is y for x, y in zip(blocks, content, strict=True)):
            return message
        return {**message, "content": blocks}
    return message


def _block_path(i: int, at: tuple[int, ...], leaf: str) -> str:
    return f"messages[{i}]" + "".join(f".content[{j}]" for j in at) + leaf


def _mask_block(
    block: Any, masker: _TextMasker, i: int, at: tuple[int, ...], hits: list[MaskHit]
) -> Any:
    """A content block with the text a model reads masked: ``text``, and a tool result's
    content (a string or text blocks). Tool inputs and ids are the model's own: untouched."""
    if not isinstance(block, dict):
        return block
    out = block
    text = block.get("text")
    if isinstance(text, str):
        found = masker(text)
        if found[1]:
            out = {**out, "text": _note(found, _block_path(i, at, ".text"), hits)}
    if block.get("type") == "tool_result":
        inner = block.get("content")
        if isinstance(inner, str):
            found = masker(inner)
            if found[1]:
                out = {**out, "content": _note(found, _block_path(i, at, ".content"), hits)}
        elif isinstance(inner, list):
            blocks = [_mask_block(b, masker, i, (*at, k), hits) for k, b in enumerate(inner)]
            if not all(x is y for x, y in zip(blocks, inner, strict=True)):
                out = {**out, "content": blocks}
    return out


def _mask_path(
    value: Any,
    mask: Mask,
    steps: tuple[str | int | None, ...],
    path: tuple[str | int, ...],
    hits: list[MaskHit],
) -> Any:
    """``value`` with what ``steps`` name masked (the same object when nothing was)."""
    if not steps:
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            text = str(value)
            if not mask.pattern or mask.regex.fullmatch(text):
                where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
                hits.append(MaskHit(where.lstrip("."), mask.name, text))
                return placeholder(mask.name)
        return value
    step, rest = steps[0], steps[1:]
    if step == "*":
        if isinstance(value, dict):
            d = {k: _mask_path(v, mask, rest, (*path, k), hits) for k, v in value.items()}
            return value if all(d[k] is v for k, v in value.items()) else d
        return value
    if isinstance(step, str):
        if isinstance(value, dict) and step in value:
            new = _mask_path(value[step], mask, rest, (*path, step), hits)
            return value if new is value[step] else {**value, step: new}
        return value
    if not isinstance(value, list):
        return value
    if step is None:
        key = rest[0] if rest else None
        if isinstance(key, str) and key != "*":
            # only the items that hold the next key can change: a long history's other
            # items are passed over without a call each
            at = [i for i, v in enumerate(value) if isinstance(v, dict) and key in v]
        else:
            at = list(range(len(value)))
        items = list(value)
        for i in at:
            items[i] = _mask_path(value[i], mask, rest, (*path, i), hits)
        return value if all(items[i] is value[i] for i in at) else items
    if step < len(value):
        new = _mask_path(value[step], mask, rest, (*path, step), hits)
        if new is value[step]:
            return value
        out = list(value)
        out[step] = new
        return out
    return value


# -- the mask file -----------------------------------------------------------------------------


def load_mask_file(path: str | Path) -> list[Mask]:
    """The masks of a TOML mask file (``[[mask]]`` tables; see the module docstring).

    Raises:
        MaskFileError: The file cannot be read, is not TOML, or a mask in it is wrong; the
            message names the file and the mask.
    """
    p = Path(path)
    try:
        with p.open("rb") as f:
            data = f.read(MAX_MASK_FILE + 1)
    except OSError as exc:
        raise MaskFileError(f"mask file {p}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > MAX_MASK_FILE:
        raise MaskFileError(f"mask file {p}: larger than {MAX_MASK_FILE // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MaskFileError(f"mask file {p}: not UTF-8 text (byte {exc.start + 1})") from None
    return parse_masks(text, str(p))


def parse_masks(text: str, source: str = "mask file") -> list[Mask]:
    """The masks of mask-file text (see :func:`load_mask_file`)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MaskFileError(f"mask file {source}: not valid TOML: {exc}") from None
    except RecursionError:
        raise MaskFileError(f"mask file {source}: not valid TOML: nested too deeply") from None
    extra = sorted(set(doc) - {"mask"})
    if extra:
        raise MaskFileError(
            f"mask file {source}: unknown key {extra[0]!r}; masks are [[mask]] tables"
        )
    tables = doc.get("mask", [])
    if not isinstance(tables, list):
        raise MaskFileError(f"mask file {source}: 'mask' must be [[mask]] tables")
    masks: list[Mask] = []
    for i, table in enumerate(tables):
        where = f"mask file {source}, mask {i + 1}"
        if not isinstance(table, dict):
            raise MaskFileError(f"{where}: must be a table")
        if isinstance(table.get("name"), str):
            where += f" ({table['name']!r})"
        unknown = sorted(set(table) - _KEYS)
        if unknown:
            raise MaskFileError(
                f"{where}: unknown key {unknown[0]!r}; a mask takes {', '.join(sorted(_KEYS))}"
            )
        for key in ("name", "pattern", "why"):
            if key not in table:
                raise MaskFileError(f"{where}: needs {key!r}")
        for key, value in table.items():
            if not isinstance(value, str):
                raise MaskFileError(f"{where}: {key!r} must be a string")
        if any(m.name == table["name"] for m in masks):
            raise MaskFileError(f"{where}: another mask is named {table['name']!r}")
        try:
            masks.append(
                Mask(
                    table["name"],
                    table.get("where", "text"),
                    table["pattern"],
                    table["why"],
                    table.get("client", ""),
                    table.get("evidence", ""),
                )
            )
        except ValueError as exc:
            raise MaskFileError(f"{where}: {exc}") from None
    return masks


def mask_set(
    file: str | Path | None = None,
    *,
    beside: str | Path | None = None,
    builtin: bool = True,
) -> MaskSet:
    """The masks a replay applies: the built-in set (unless ``builtin`` is false), then
    ``file``, or else ``masks.toml`` in the folder ``beside`` when there is one.

    Raises:
        MaskFileError: The file is wrong, or a mask is named twice.
    """
    masks: list[Mask] = list(BUILTIN_MASKS) if builtin else []
    sources = ["built-in"] if builtin else []
    chosen = Path(file) if file is not None else None
    if chosen is None and beside is not None:
        candidate = Path(beside) / DEFAULT_MASK_FILE
        chosen = candidate if candidate.is_file() else None
    if chosen is not None:
        user = load_mask_file(chosen)
        names = {m.name for m in masks}
        for m in user:
            if m.name in names:
                raise MaskFileError(
                    f"mask file {chosen}: mask {m.name!r} is already a built-in mask; "
                    "give it another name"
                )
        masks += user
        sources.append(str(chosen))
    return MaskSet(masks, sources)


def pair_verdict(pair: Any, masks: MaskSet | None = None) -> str:
    """An aligned step pair's verdict (:class:`~regista.diff.AlignedPair`): ``exact`` (the
    same), ``masked`` (both sides are there and differ only where ``masks`` cover) or
    ``diverged``."""
    if pair.kind == "same":
        return EXACT
    if (
        masks
        and pair.a is not None
        and pair.b is not None
        and pair.changes
        and not split_changes(pair.changes, masks)[0]
    ):
        return MASKED
    return DIVERGED


def pair_verdicts(diff: Any, masks: MaskSet | None = None) -> list[str]:
    """Each aligned step pair's :func:`pair_verdict`, of a run diff."""
    return [pair_verdict(pair, masks) for pair in diff.pairs]


def split_changes(
    changes: Sequence[Change], masks: MaskSet, old: str = "A", new: str = "B"
) -> tuple[list[Change], list[str]]:
    """The changes of a run diff that masks do not explain, and one ``masked`` line per
    change they do (a text of the system prompt or of a message whose two sides are the
    same once masked)."""
    real: list[Change] = []
    masked: list[str] = []
    why = {m.name: m.why for m in masks.masks}
    for change in changes:
        if change.op == "changed":
            at = "$" + change.path.removeprefix("request")
            named = next(
                (
                    m
                    for m in masks.masks
                    if m.covers_path(at)
                    and all(
                        isinstance(v, str) and (not m.pattern or m.regex.fullmatch(v))
                        for v in (change.old, change.new)
                    )
                ),
                None,
            )
            if named is not None:
                masked.append(
                    f"{change.path}: masked {named.name} ({why[named.name]}): "
                    f"{old} {_short(change.old)}, {new} {_short(change.new)}"
                )
                continue
        part = "system" if change.path.endswith(".system") else "messages"
        if re.fullmatch(r"request\.tools\[\d+\]\.description", change.path):
            part = "tools"
        texts = [m for m in masks.masks if m.applies_to(part)]
        if (
            change.op == "changed"
            and texts
            and isinstance(change.old, str)
            and isinstance(change.new, str)
            and ("messages" in change.path or part != "messages")
        ):
            hits_a: list[MaskHit] = []
            hits_b: list[MaskHit] = []
            if _mask_text(change.old, texts, change.path, hits_a) == _mask_text(
                change.new, texts, change.path, hits_b
            ):
                masked += masks.masked_changes(hits_a, hits_b, old, new)
                continue
        real.append(change)
    return real, masked
