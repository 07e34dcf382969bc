"""The compact form of ``llm.request`` lines (schema 2), and how a reader rebuilds them.

An agent's requests repeat what the trace already holds: the same system prompt and tool
schemas on every call, and each tool's output both in its ``tool.result`` and again in the
next request. Since schema 2 an ``llm.request`` line leaves those out:

- ``system`` and ``tools`` are written on the first request and again, both of them, whenever
  either changed; a line without them has the previous request's.
- A ``tool_result`` block in ``messages`` whose ``content`` equals the ``content`` of the
  latest ``tool.result`` event with its ``tool_use_id`` is written without ``content``, and
  that id is listed in ``result_refs``.

:class:`RequestEncoder` makes lines so (the writer); :class:`RequestDecoder` puts back what
was left out (the reader), so a loaded event holds the request exactly as it was sent, and
its ``request_hash`` proves it. Both work on the plain dicts of the lines, in ``seq`` order.
"""

from __future__ import annotations

from hashlib import blake2b
from typing import Any, Protocol

import orjson

from regista.trace.canonical import same_json
from regista.trace.names import LLM_REQUEST, TOOL_RESULT
from regista.trace.validate import MAX_DEPTH, deeper

__all__ = [
    "REFERABLE_DEPTH",
    "REQUEST_CONTEXT",
    "RESOLVED",
    "RequestDecoder",
    "RequestEncoder",
    "Resolver",
    "TraceRefError",
    "complete_request",
    "fill_results",
    "put_back",
    "referred",
]

#: The fields of an ``llm.request`` that are written only when they change.
REQUEST_CONTEXT = ("system", "tools")

#: How deeply a tool result's content may nest to be referred to by a request: put back,
#: it sits five levels down (``messages``, a message, its ``content``, a block), and the
#: request must nest no more than ``MAX_DEPTH`` levels, as every event.
REFERABLE_DEPTH = MAX_DEPTH - 5

_MISSING: Any = object()


class Resolver(Protocol):
    """Completes decoded lines from what came before them (see ``parse_line``, which
    gives it only the lines of :data:`RESOLVED`: nothing else refers, or is referred to)."""

    def resolve(self, data: dict[str, Any]) -> None: ...


#: The kinds of lines a :class:`Resolver` is given: the requests it completes and the tool
#: results they refer to (a tuple: a line's ``type``, hashable or not, is looked for in it).
RESOLVED = (LLM_REQUEST, TOOL_RESULT)


class TraceRefError(ValueError):
    """A compact ``llm.request`` refers to something the trace does not hold."""


class RequestEncoder:
    """Writes ``llm.request`` lines compactly; told of every line of one trace that
    reached the disk (:meth:`commit`, :meth:`note_result`), in order.

    An agent passes the same ``system`` and ``tools`` objects on every call, and a
    request's tool results are the objects its ``tool.result`` lines were written with:
    both are recognised by identity first. Other values are compared as JSON: ``system``
    and ``tools`` by their serialised bytes (equal bytes are what the reader would put
    back; a system prompt that is a string, as its own text), tool results value by value.
    A caller may make a new ``tools`` list for every call (a proxy parses each request
    afresh), so the JSON of the tools written last is kept to compare with.

    A tool result whose content would nest too deeply inside a request (see
    :data:`REFERABLE_DEPTH`) is never referred to: the request's line then holds it, and
    is refused as too deep, as the whole request would be.

    ``referred_kept``: a trace whose requests each hold only the messages added since the
    one before (an import) mostly refers to a result once: only the last ``referred_kept``
    results referred to are kept in memory (a result not referred to yet always is), so
    the results of a long session are not all kept until its end. What is written never
    depends on that number: a result no longer kept is known by a digest of its JSON, and
    a request that holds it again (Codex sends recent results again; a resumed rollout
    repeats a result's line) still refers to it. Before, such a result was referred to if
    it was still kept, and written whole if not: the bytes changed with the cache's size.
    A request's result that is not the very object recorded is compared with it by the
    same digest (:func:`_digest`), kept or not, so that keeping it changes no answer.
    """

    def __init__(self, referred_kept: int | None = None) -> None:
        self._system: Any = _MISSING
        self._tools: Any = _MISSING
        #: The JSON of the ``tools`` written last (``None``: not made yet).
        self._context: bytes | None = None
        self._results: dict[str, Any] = {}
        self._pending: tuple[Any, Any, bytes | None] = (_MISSING, _MISSING, None)
        #: How many results already referred to stay referable (``None``: all of them).
        self._kept = referred_kept
        #: Ids of the results referred to, the latest last.
        self._referred: dict[str, None] = {}
        self._pending_refs: list[str] = []
        #: The digests of the results referred to that are no longer kept, by id.
        self._gone: dict[str, bytes] = {}

    def commit(self) -> None:
        """The line :meth:`encode` made last is on disk (a failed write is not)."""
        self._system, self._tools, self._context = self._pending
        if self._kept is not None and self._pending_refs:
            referred = self._referred
            for uid in self._pending_refs:
                referred.pop(uid, None)
                referred[uid] = None
            while len(referred) > self._kept:
                oldest = next(iter(referred))
                del referred[oldest]
                content = self._results.pop(oldest, _MISSING)
                if content is not _MISSING and (digest := _digest(content)) is not None:
                    self._gone[oldest] = digest
        self._pending_refs = []

    def note_result(self, tool_use_id: str, content: Any) -> None:
        """A ``tool.result`` line was written."""
        self._referred.pop(tool_use_id, None)  # not referred to yet: kept until it is
        self._gone.pop(tool_use_id, None)
        if type(content) is str or deeper(content, REFERABLE_DEPTH) is False:
            self._results[tool_use_id] = content
        else:  # nor may an earlier result with this id be referred to: it is not the latest
            self._results.pop(tool_use_id, None)

    def encode(self, line: dict[str, Any]) -> dict[str, Any]:
        """The compact form of a full ``llm.request`` line (``line`` is not changed)."""
        system, tools = line["system"], line["tools"]
        out = dict(line)
        if system is self._system and tools is self._tools:
            del out["system"], out["tools"]
            # kept even when equal: the next request most likely passes these same objects
            self._pending = (system, tools, self._context)
        else:
            same, context = self._same_context(system, tools)
            if same:
                del out["system"], out["tools"]
            self._pending = (system, tools, context)
        self._pending_refs = []
        if self._results or self._gone:
            refer = self._refer(line["messages"], self._results, self._gone)
            if refer is not None:
                out["messages"], out["result_refs"] = refer
                self._pending_refs = refer[1]
        return out

    def _same_context(self, system: Any, tools: Any) -> tuple[bool, bytes | None]:
        """Whether ``system`` and ``tools`` are the ones written last, as JSON; and the JSON
        of ``tools`` (``None`` when orjson cannot make it)."""
        try:
            made = orjson.dumps(tools)
        except TypeError:  # not JSON: compare value by value
            same = same_json(system, self._system) and same_json(tools, self._tools)
            return same, None
        if self._system is _MISSING or not _same_value(system, self._system):
            return False, made
        if self._context is None:
            try:
                self._context = orjson.dumps(self._tools)
            except TypeError:
                return same_json(tools, self._tools), made
        return made == self._context, made

    def _refer(
        self, messages: list[Any], results: dict[str, Any], gone: dict[str, bytes]
    ) -> tuple[list[Any], list[str]] | None:
        """``messages`` with the tool results of ``results`` (and of ``gone``, by their
        digests) left out, and their ids; ``None`` when none is left out. Runs on every
        request: the common block (not a tool result) costs two lookups, and a result sent
        as the object it was recorded with is known by identity."""
        refs: list[str] | None = None
        out: list[Any] | None = None
        bare: set[str] | None = None
        j = -1  # counted by hand: enumerate costs more on this path
        for m in messages:
            j += 1
            if type(m) is not dict:
                continue
            content = m.get("content")
            if type(content) is not list:
                continue
            blocks: list[Any] | None = None
            i = -1
            for b in content:
                i += 1
                if type(b) is not dict or b.get("type") != "tool_result":
                    continue
                uid: Any = b.get("tool_use_id")
                if type(uid) is not str:
                    continue  # never referred to, nor referable
                mine = b.get("content", _MISSING)
                if mine is _MISSING:
                    if bare is None:
                        bare = set()
                    bare.add(uid)
                    continue
                recorded = results.get(uid, _MISSING)
                if recorded is not mine and not self._same_result(mine, recorded, gone.get(uid)):
                    continue
                if blocks is None:
                    blocks = content.copy()
                short = b.copy()
                del short["content"]
                blocks[i] = short
                if refs is None:
                    refs = [uid]
                elif uid not in refs:
                    refs.append(uid)
            if blocks is not None:
                if out is None:
                    out = messages.copy() if type(messages) is list else list(messages)
                m = m.copy()  # a copy keeps "content" where it was, as the reader expects
                m["content"] = blocks
                out[j] = m
        if refs is None or out is None:
            return None
        if bare is not None and not bare.isdisjoint(refs):
            # A block without content of its own would take a referred one on reading:
            # never refer to an id that such a block carries.
            return self._refer(
                messages,
                {k: v for k, v in results.items() if k not in bare},
                {k: v for k, v in gone.items() if k not in bare},
            )
        return out, refs

    def _same_result(self, mine: Any, recorded: Any, digest: bytes | None) -> bool:
        """Whether a request's result ``mine`` is the one recorded: ``recorded`` (when
        kept) or the result whose digest is ``digest``. With results dropped from memory
        (``referred_kept``) both are compared by digest, so that whether one was kept never
        changes the answer."""
        if recorded is _MISSING:
            return digest is not None and _digest(mine) == digest
        if self._kept is None:
            return same_json(mine, recorded)
        theirs = _digest(recorded)
        return theirs is not None and _digest(mine) == theirs


def _digest(content: Any) -> bytes | None:
    """A digest of ``content``'s JSON, keys sorted (``None``: not JSON): equal for values
    equal as JSON (:func:`~regista.trace.canonical.same_json`: ``1`` and ``1.0``, ``1`` and
    ``True`` differ) that a transcript can hold (no NaN, no integer beyond 64 bits)."""
    try:
        data = orjson.dumps(content, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return None
    return blake2b(data, digest_size=16).digest()


def _same_value(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` serialise to the same JSON (one object, or equal strings:
    a string's JSON is its text)."""
    if a is b or (type(a) is str and type(b) is str and a == b):
        return True
    try:
        return orjson.dumps(a) == orjson.dumps(b)
    except TypeError:  # not JSON: compare value by value
        return same_json(a, b)


class RequestDecoder:
    """Rebuilds compact ``llm.request`` lines; fed every event of one trace in order."""

    def __init__(self) -> None:
        self._context: dict[str, Any] | None = None
        self._results: dict[str, Any] = {}
        #: The validated ``tools`` of the request whose line wrote the current context
        #: (:meth:`checked`), paired with that line's decoded list.
        self._checked: tuple[Any, Any] = (_MISSING, _MISSING)

    def resolve(self, data: dict[str, Any]) -> None:
        """Complete ``data`` (a decoded, migrated event) in place.

        Raises:
            TraceRefError: It refers to a request or a tool result that came before it
                in no line.
        """
        kind = data.get("type")
        if kind == TOOL_RESULT:
            uid = data.get("tool_use_id")
            if type(uid) is str and "content" in data:
                self._results[uid] = data["content"]
        elif kind == LLM_REQUEST:
            context = complete_request(data, self._context, self._results.get)
            if context is not None:
                self._context = context

    def noted(self, ids: Any, contents: Any) -> None:
        """``tool.result`` lines of these ``ids`` (strs) and ``contents``, in order: what
        :meth:`resolve` keeps of them."""
        self._results.update(zip(ids, contents, strict=True))

    def taken(self, refs: Any) -> tuple[Any, Any, dict[str, Any]] | None:
        """What a compact request (a line without ``system`` and ``tools``; ``refs``: its
        ``result_refs``, or ``None``) takes from the lines before it, without changing
        it: the system prompt, the validated tools (:meth:`validated_tools`) and the
        contents of the results it refers to (see :func:`referred`). ``None`` when it
        takes them otherwise, or cannot: :meth:`resolve` it, which says why."""
        context = self._context
        if context is None:
            return None
        tools = self.validated_tools(context["tools"])
        if tools is None:
            return None
        contents: dict[str, Any] = {}
        if refs is not None:
            try:
                contents = referred(refs, self._results.get)
            except TraceRefError:
                return None
        return context["system"], tools, contents

    def checked(self, tools: Any, validated: Any) -> None:
        """``tools``, a decoded list, was validated (and checked) as ``validated``."""
        self._checked = (tools, validated)

    def validated_tools(self, tools: Any) -> Any:
        """The validated list for ``tools`` when it is the very list validated last (a
        request that took its tools from an earlier line), else ``None``."""
        decoded, validated = self._checked
        return validated if tools is decoded else None


def complete_request(
    data: dict[str, Any], context: dict[str, Any] | None, lookup: Any
) -> dict[str, Any] | None:
    """Complete one decoded ``llm.request`` line in place.

    Args:
        data: The line's dict (migrated to the current schema).
        context: ``system`` and ``tools`` of the latest earlier request that wrote them.
        lookup: ``lookup(tool_use_id)`` gives the content of the latest earlier
            ``tool.result`` with that id, or ``None``.

    Returns:
        The context of the requests after it when this line wrote any of it, else ``None``.

    Raises:
        TraceRefError: It leaves out what no earlier line holds.
    """
    has_system, has_tools = "system" in data, "tools" in data
    if not (has_system and has_tools):
        if context is None:
            missing = ", ".join(k for k in REQUEST_CONTEXT if k not in data)
            raise TraceRefError(f"no {missing}, and no earlier llm.request to take it from")
        if not has_system:
            data["system"] = context["system"]
        if not has_tools:
            data["tools"] = context["tools"]
    if "result_refs" in data:
        fill_results(data, data.pop("result_refs"), lookup)
    if has_system or has_tools:
        return {"system": data["system"], "tools": data["tools"]}
    return None


def fill_results(data: dict[str, Any], refs: Any, lookup: Any) -> None:
    """Put the referred tool results back into ``data["messages"]``.

    Args:
        data: A decoded ``llm.request`` line without its ``result_refs``.
        refs: The ``result_refs`` it had.
        lookup: ``lookup(tool_use_id)`` gives the recorded content, or ``None``.

    Raises:
        TraceRefError: A ref is not a tool_use_id of an earlier ``tool.result``.
    """
    contents = referred(refs, lookup)
    messages = data.get("messages")
    if type(messages) is not list:
        return  # validation says what is wrong
    put_back(messages, contents)


def referred(refs: Any, lookup: Any) -> dict[str, Any]:
    """The contents of the tool results ``refs`` (a request's ``result_refs``) names, by
    id (``lookup``: see :func:`fill_results`).

    Raises:
        TraceRefError: A ref is not a tool_use_id of an earlier ``tool.result``.
    """
    if type(refs) is not list:
        raise TraceRefError("result_refs must be a list of tool_use_ids")
    for uid in refs:
        if type(uid) is not str:
            raise TraceRefError("result_refs must be a list of tool_use_ids")
    contents: dict[str, Any] = {}
    for uid in refs:
        content = lookup(uid)
        if content is None:
            raise TraceRefError(f"result_refs names {uid!r}, which no earlier tool.result has")
        if type(content) is not str and deeper(content, REFERABLE_DEPTH) is not False:
            raise TraceRefError(
                f"result_refs names {uid!r}, whose content would nest more than "
                f"{MAX_DEPTH} levels deep in the request"
            )
        contents[uid] = content
    return contents


def put_back(messages: list[Any], contents: dict[str, Any]) -> None:
    """Put ``contents`` (see :func:`referred`) back into the tool results of ``messages``
    that left them out."""
    for m in messages:
        blocks = m.get("content") if type(m) is dict else None
        if type(blocks) is not list:
            continue
        for i, b in enumerate(blocks):
            if (
                type(b) is dict
                and b.get("type") == "tool_result"
                and "content" not in b
                and type(uid := b.get("tool_use_id")) is str
                and uid in contents
            ):
                blocks[i] = _with_content(b, contents[uid])


def _with_content(block: dict[str, Any], content: Any) -> dict[str, Any]:
    """``block`` with ``content`` put back where the writer had it (after ``tool_use_id``)."""
    out: dict[str, Any] = {}
    for k, v in block.items():
        out[k] = v
        if k == "tool_use_id":
            out["content"] = content
    return out
