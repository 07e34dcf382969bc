"""A trace read for a listing of its steps (``regista show``), without the event models.

``regista show`` reads every event of a trace that may be hundreds of megabytes long and
prints a line per step. For a line written by regista, validating each event into its
pydantic model has nothing to do: every field is there, of the exact type its annotation
names; and importing pydantic and building the models costs more than reading a small
trace. So a listing checks just that, with the table below, and gives such a line as a
:class:`Listed` view: its fields as attributes, the decoded dict itself as their store. Any
other line (a field missing or of another type, which pydantic would convert or refuse; a
kind it does not know) is read the usual way, by :func:`regista.trace.lines.parse_line`
(which imports the models then): its event is the model's, its error the model's.

:data:`FIELDS` restates each model's fields and types; a test derives the same table from
the models' annotations, so the two cannot drift apart. Nested payloads are checked by
:func:`regista.trace.validate.check_event`, as for any event.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from types import NoneType
from typing import TYPE_CHECKING, Any

from regista.trace.names import (
    CONTEXT_COMPACTION,
    ERROR,
    LLM_REQUEST,
    LLM_RESPONSE,
    PERMISSION_DECISION,
    SESSION_END,
    SESSION_START,
    TOOL_CALL,
    TOOL_RESULT,
)

__all__ = [
    "FIELDS",
    "LEFT_OUT",
    "RECORDED",
    "RECORD_DEPTH",
    "Listed",
    "Listing",
    "built",
    "listed",
    "modelled",
    "modelled_all",
    "records",
]


class Listed:
    """A listed event: its fields (and any extra ones) as read-only attributes, named as its
    model names them; nested values are the decoded JSON."""

    __dict__: dict[str, Any]

    if TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any: ...

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a listed {self.__dict__.get('type')} event is read-only")

    def __repr__(self) -> str:
        return f"Listed({self.__dict__!r})"


def _of(*types: type) -> frozenset[type]:
    return frozenset(types)


_S, _I, _F, _B = _of(str), _of(int), _of(float), _of(bool)
_SN, _IN, _FN, _BN = (
    _of(str, NoneType),
    _of(int, NoneType),
    _of(float, NoneType),
    _of(bool, NoneType),
)
_D, _DN, _L, _LS = _of(dict), _of(dict, NoneType), _of(list), _of(list, str)
_SOURCE = frozenset(("live", "recorded", "edit"))

#: Each kind's fields in its model's order: ``(name, accepted types, allowed values or
#: None, a list whose items must be objects)``. The types are those a value takes as it
#: is: ``float`` alone for a ``float`` (pydantic converts an ``int``), ``dict`` for
#: ``dict[str, Any]``, ``list`` for ``list[dict[str, Any]]``.
FIELDS: dict[str, tuple[tuple[str, frozenset[type], frozenset[str] | None, bool], ...]] = {
    kind: (
        ("schema_version", _I, None, False),
        ("session_id", _S, None, False),
        ("seq", _I, None, False),
        ("ts", _S, None, False),
        ("type", _S, frozenset((kind,)), False),
        *rest,
    )
    for kind, rest in {
        SESSION_START: (
            ("task", _S, None, False),
            ("instructions", _SN, None, False),
            ("model", _S, None, False),
            ("provider", _S, None, False),
            ("tools", _L, None, True),
            ("policy", _SN, None, False),
            ("context", _DN, None, False),
            ("max_turns", _I, None, False),
            ("max_tokens", _I, None, False),
            ("params", _D, None, False),
            ("agent_ref", _SN, None, False),
            ("replay_of", _SN, None, False),
            ("forked_from", _DN, None, False),
            ("metadata", _D, None, False),
            ("regista_version", _S, None, False),
        ),
        LLM_REQUEST: (
            ("step", _I, None, False),
            ("turn", _I, None, False),
            ("request_hash", _S, None, False),
            ("model", _S, None, False),
            ("system", _SN, None, False),
            ("tools", _L, None, True),
            ("tool_choice", _DN, None, False),
            ("max_tokens", _I, None, False),
            ("params", _D, None, False),
            ("messages_prefix", _I, None, False),
            ("messages", _L, None, True),
        ),
        LLM_RESPONSE: (
            ("step", _I, None, False),
            ("turn", _I, None, False),
            ("response", _D, None, False),
            ("provider", _S, None, False),
            ("source", _S, _SOURCE, False),
            ("cost_usd", _FN, None, False),
            ("duration_ms", _F, None, False),
            ("matched", _BN, None, False),
        ),
        TOOL_CALL: (
            ("step", _I, None, False),
            ("turn", _I, None, False),
            ("tool_use_id", _S, None, False),
            ("name", _S, None, False),
            ("input", _D, None, False),
        ),
        PERMISSION_DECISION: (
            ("step", _I, None, False),
            ("tool_use_id", _S, None, False),
            ("allowed", _B, None, False),
            ("reason", _SN, None, False),
            ("by", _S, frozenset(("policy", "default", "recorded")), False),
        ),
        TOOL_RESULT: (
            ("step", _I, None, False),
            ("tool_use_id", _S, None, False),
            ("name", _S, None, False),
            ("content", _LS, None, True),
            ("is_error", _B, None, False),
            ("source", _S, _SOURCE, False),
            ("duration_ms", _F, None, False),
        ),
        CONTEXT_COMPACTION: (
            ("step", _I, None, False),
            ("turn", _I, None, False),
            ("replaced", _L, None, True),
            ("summary", _S, None, False),
            ("request_hash", _S, None, False),
            ("tokens_before", _I, None, False),
            ("provider", _S, None, False),
            ("source", _S, _SOURCE, False),
            ("usage", _D, None, False),
            ("cost_usd", _FN, None, False),
            ("duration_ms", _F, None, False),
        ),
        ERROR: (
            ("step", _IN, None, False),
            ("where", _S, frozenset(("provider", "tool", "agent", "replay")), False),
            ("error_type", _S, None, False),
            ("message", _S, None, False),
        ),
        SESSION_END: (
            ("stop_reason", _S, None, False),
            ("output", _SN, None, False),
            ("turns", _I, None, False),
            ("steps", _I, None, False),
            ("tool_calls", _I, None, False),
            ("usage", _D, None, False),
            ("cost_usd", _FN, None, False),
            ("duration_ms", _F, None, False),
            ("error", _SN, None, False),
            ("replay", _DN, None, False),
        ),
    }.items()
}

#: What a listing reads of no request: its head ends before ``messages_prefix`` and leaves
#: out ``system`` and ``tools`` (see :func:`regista.trace.lines.parse_line`), each then
#: given its default; its ``messages`` are an empty list.
LEFT_OUT: dict[str, tuple[tuple[str, Any], ...]] = {
    LLM_REQUEST: (("system", None), ("tools", list), ("messages_prefix", 0))
}


class _Fields:
    """The check both :func:`listed` and :func:`modelled` make of a line's field values:
    each of its field's exact type, one of its ``Literal``'s values, lists of objects."""

    __slots__ = ("lists", "literals", "seen", "types")

    def __init__(self, fields: Sequence[Any]) -> None:
        self.types = tuple(f[1] for f in fields)
        #: The value types of lines found to need no conversion, field by field.
        self.seen: set[tuple[type, ...]] = set()
        #: ``(index, allowed values)`` of the fields whose value is one of a
        #: ``Literal``'s (but ``type``: the kind was found by it).
        self.literals = [
            (i, f[2]) for i, f in enumerate(fields) if f[2] is not None and f[0] != "type"
        ]
        #: The indexes of the fields whose lists must hold only objects.
        self.lists = [i for i, f in enumerate(fields) if f[3]]

    def accepts(self, values: tuple[Any, ...]) -> bool:
        """Whether ``values`` (one per field, in order) need neither conversion nor refusal."""
        key = tuple(map(type, values))
        if key not in self.seen:
            if not all(t in ok for t, ok in zip(key, self.types, strict=True)):
                return False
            self.seen.add(key)
        for i, allowed in self.literals:
            if values[i] not in allowed:  # a str: its type was checked
                return False
        for i in self.lists:
            value = values[i]
            if type(value) is list:
                for item in value:
                    if type(item) is not dict:
                        return False
        return True


class _Kind(_Fields):
    """What :func:`listed` knows of one kind of event."""

    __slots__ = ("filled", "left_out", "values")

    def __init__(self, kind: str) -> None:
        left_out = dict(LEFT_OUT.get(kind, ()))
        fields = [f for f in FIELDS[kind] if f[0] not in left_out]
        super().__init__(fields)
        #: The values of the fields, in order, from a line's dict (``KeyError``: one is
        #: missing); the fields are at least two (the envelope's).
        self.values = itemgetter(*(f[0] for f in fields))
        self.filled = tuple(left_out.items())
        self.left_out = frozenset(left_out)


_KINDS = {kind: _Kind(kind) for kind in FIELDS}

#: The kinds of event whose lines are read whole as typed records (:func:`records`): those
#: a trace holds most of, but requests (read from their heads) and compactions (few, long).
RECORDED = (LLM_RESPONSE, TOOL_CALL, PERMISSION_DECISION, TOOL_RESULT, ERROR)
#: How many levels of objects and lists a payload (a call's input, an answer, a result's
#: content) may hold and be read as a typed record: deeper ones are read the usual way.
#: (Each level doubles the time the decoder takes to be made: 6 takes about 8 ms.)
RECORD_DEPTH = 6
_records: Any = None


def records() -> Any:
    """A decoder of one line of the kinds :data:`RECORDED` into a typed record: a frozen
    ``msgspec.Struct`` per kind, whose fields are its model's (:data:`FIELDS`, but ``type``,
    a class attribute the line's ``type`` picked), checked as they are decoded, in C.

    A request is decoded from its head (its fields but those :data:`LEFT_OUT`, and its
    messages: these are the record's class's, empty).

    It takes the lines :func:`listed` takes (every field, of the exact type :data:`FIELDS`
    says; the current schema; no step below 0), but not those with a field it does not know
    (an extra field: pydantic keeps it), a number outside 64 bits (``orjson`` makes it a
    float) or a payload nested deeper than :data:`RECORD_DEPTH`; and it takes a whole number
    for a ``float``, converted as pydantic converts it (:func:`listed` leaves that line to
    the models). It raises ``msgspec.ValidationError`` or ``msgspec.DecodeError`` for any
    other line: read it the usual way. Nested payloads are left to
    :func:`~regista.trace.validate.check_event`, as for any event.
    ``tests/trace/test_listing_light.py`` keeps the two ways equal.
    """
    global _records
    if _records is None:
        _records = _make_records()
    return _records


def _make_records() -> Any:
    from typing import Annotated, Literal, Union

    import msgspec

    from regista.trace.names import SCHEMA_VERSION

    whole = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
    value: Any = Union[None, bool, whole, float, str]  # noqa: UP007 (a runtime type)
    for _ in range(RECORD_DEPTH):
        value = Union[None, bool, whole, float, str, list[value], dict[str, value]]  # noqa: UP007
    obj = dict[str, value]
    step = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]
    plain: dict[frozenset[type], Any] = {
        _I: whole,
        _IN: whole | None,
        _S: str,
        _SN: str | None,
        _F: float,
        _FN: float | None,
        _B: bool,
        _BN: bool | None,
        _D: obj,
        _DN: obj | None,
        _L: list[obj],
        _LS: Union[str, list[obj]],  # noqa: UP007
    }
    kinds = []
    for kind in (*RECORDED, LLM_REQUEST):
        # a request's head (see LEFT_OUT): the fields left out, and its messages, are the
        # class's, as listed fills them
        left_out: dict[str, Any] = {}
        if kind == LLM_REQUEST:
            left_out = {
                name: () if default is list else default for name, default in LEFT_OUT[kind]
            }
            left_out["messages"] = ()
        fields: list[tuple[str, Any]] = []
        for name, types, allowed, _ in FIELDS[kind]:
            if name == "type" or name in left_out:
                continue  # the tag, or the class's
            if name == "schema_version":
                annotation: Any = Literal[SCHEMA_VERSION]
            elif name == "step":
                annotation = step | None if NoneType in types else step
            elif allowed is not None:
                annotation = Literal[tuple(sorted(allowed))]
            else:
                annotation = plain[types]
            fields.append((name, annotation))
        title = "".join(part.title() for part in kind.replace(".", "_").split("_"))
        kinds.append(
            msgspec.defstruct(
                f"{title}Record",
                fields,
                namespace={"type": kind, **left_out},
                tag_field="type",
                tag=kind,
                forbid_unknown_fields=True,
                frozen=True,
                gc=False,  # it holds decoded JSON only: no reference cycle
            )
        )
    return msgspec.json.Decoder(Union[tuple(kinds)]).decode  # noqa: UP007


_new = object.__new__
_set = object.__setattr__


def listed(data: dict[str, Any]) -> Listed | None:
    """``data`` (a decoded, migrated line; for a request, read as :data:`LEFT_OUT` says) as
    a :class:`Listed` view when it has every field of its event, each needing no
    conversion; else ``None`` (validate it). Other keys are extra fields, kept as pydantic
    keeps them (as attributes)."""
    name = data.get("type")
    kind = _KINDS.get(name) if type(name) is str else None
    if kind is None:
        return None
    try:
        values = kind.values(data)
    except KeyError:
        return None
    if not kind.accepts(values):
        return None
    if kind.filled and not kind.left_out.isdisjoint(data):
        return None  # read whole: the values of these are for the models to judge
    for name, default in kind.filled:
        data[name] = default() if default is list else default
    event = _new(Listed)
    _set(event, "__dict__", data)
    return event


def modelled(data: dict[str, Any]) -> Any:
    """``data`` (a decoded, migrated and completed line) as its event model, built without
    pydantic when validation would leave every value as it is (as :func:`listed` judges:
    each field of its exact type, no extra key, no missing field but those whose default
    is a constant or an empty list or object); else ``None`` (validate it).

    The model is what ``EventAdapter.validate_python(data)`` gives (its fields in the
    same order, the same fields set, no extra): a test keeps the two equal. Its nested
    values are the decoded ones rather than copies, read-only as every loaded event's.
    """
    name = data.get("type")
    kind = (_MODELS or _know_models()).get(name) if type(name) is str else None
    if kind is None:
        return None
    keys = tuple(data)
    plan = kind.plans.get(keys)
    if plan is None:
        plan = kind.plans[keys] = kind.plan(keys)
    if plan is not True:  # some fields left out, or written in another order
        if plan is False:
            return None
        data = {name: data[name] if present else fill() for name, present, fill in plan}
    if not kind.accepts(tuple(data.values())):  # the model's fields, in its order
        return None
    event: Any = _new(kind.model)
    _set(event, "__dict__", data)
    _set_fields_set(event, set(keys))
    _set_extra(event, {})
    _set_private(event, None)
    return event


def built(kind: str, fields: dict[str, Any]) -> Any:
    """The model of event ``kind`` holding ``fields`` (every field of its model, in its
    order, each of the type :data:`FIELDS` says: the caller checked them), built as
    :func:`modelled` builds it."""
    event: Any = _new((_MODELS or _know_models())[kind].model)
    _set(event, "__dict__", fields)
    _set_fields_set(event, set(fields))
    _set_extra(event, {})
    _set_private(event, None)
    return event


def modelled_all(kind: str, lines: list[dict[str, Any]]) -> list[Any] | None:
    """:func:`modelled` of each of ``lines`` (decoded, current-schema lines of event
    ``kind``), made a field at a time for them all (``map`` and sets, in C): their models,
    when every line holds its model's fields in its order, no other, each as
    :func:`modelled` takes it; else ``None`` (read them one at a time).

    Only the kind's own fields are checked, as by :func:`modelled`: the nested payloads
    (:func:`~regista.trace.validate.check_event`), the depth and the step are the
    reader's to check.
    """
    model = (_MODELS or _know_models()).get(kind)
    if model is None or not lines:
        return None
    names = model.names
    if not all(map(names.__eq__, map(tuple, lines))):  # (a dict's keys, in order)
        return None
    seen, types = model.seen, model.types
    for key in set(map(tuple, map(map, repeat(type), map(dict.values, lines)))):
        if key not in seen:
            if not all(t in ok for t, ok in zip(key, types, strict=True)):
                return None
            seen.add(key)
    for i, allowed in model.literals:  # strs: their type was checked
        if not allowed.issuperset(map(itemgetter(names[i]), lines)):
            return None
    for i in model.lists:
        for value in map(itemgetter(names[i]), lines):
            if type(value) is list and not all(type(item) is dict for item in value):
                return None
    # The models, as modelled builds each: the dict itself, every field set, no extra.
    n = len(lines)
    events: list[Any] = list(map(_new, repeat(model.model, n)))
    _each(map(_set, events, repeat("__dict__"), lines))
    _each(map(_set_fields_set, events, map(set.copy, repeat(model.fields_set, n))))
    _each(map(_set_extra, events, map(dict, repeat((), n))))
    _each(map(_set_private, events, repeat(None, n)))
    return events


def _each(calls: Any) -> None:
    """Run the calls of a ``map``, keeping nothing."""
    deque(calls, 0)


class _Model(_Fields):
    """What :func:`modelled` knows of one kind of event: its model, its fields' check
    (from :data:`FIELDS`), and what to do with each order of keys met (``plans``)."""

    __slots__ = ("fields_set", "model", "names", "plans")

    def __init__(self, kind: str, model: type) -> None:
        super().__init__(FIELDS[kind])
        self.model = model
        #: The model's fields, in its order.
        self.names: tuple[str, ...] = tuple(model.model_fields)  # type: ignore[attr-defined]
        #: What a model of every field is made with (a copy of it).
        self.fields_set = set(self.names)
        #: For each tuple of keys met: ``True`` (the model's fields in its order: the
        #: dict is the model's), ``False`` (validate), or how to build the model's dict:
        #: ``(name, present, default factory)`` per field.
        self.plans: dict[tuple[str, ...], Any] = {}

    def plan(self, keys: tuple[str, ...]) -> Any:
        fields = self.model.model_fields  # type: ignore[attr-defined]
        if keys == tuple(fields):
            return True
        if not set(keys) <= set(fields):
            return False  # extra fields: pydantic keeps them apart
        plan: list[tuple[str, bool, Any]] = []
        for name, info in fields.items():
            if name in keys:
                plan.append((name, True, None))
                continue
            factory = info.default_factory
            if factory is list or factory is dict:
                plan.append((name, False, factory))
            elif factory is None and type(info.default) in _CONSTANT:
                plan.append((name, False, _constant(info.default)))
            else:
                return False  # no default (refused), or one made anew (a timestamp)
        return tuple(plan)


def _constant(value: Any) -> Any:
    return lambda: value


_CONSTANT = frozenset((NoneType, bool, int, float, str))
_MODELS: dict[str, _Model] = {}
_set_fields_set: Any = None
_set_extra: Any = None
_set_private: Any = None


def _know_models() -> dict[str, _Model]:
    global _set_fields_set, _set_extra, _set_private
    from pydantic import BaseModel

    slots = vars(BaseModel)  # the models' slots, set through their descriptors
    _set_fields_set = slots["__pydantic_fields_set__"].__set__
    _set_extra = slots["__pydantic_extra__"].__set__
    _set_private = slots["__pydantic_private__"].__set__
    from regista.trace.events import EVENT_CLASSES

    for kind, model in EVENT_CLASSES.items():
        _MODELS[kind] = _Model(kind, model)
    return _MODELS


class Listing:
    """A trace read for a listing of its steps (see the module's doc).

    Attributes:
        events: Its events in order: :class:`Listed` views, or models for the lines read
            the usual way (both have the same attributes).
        path: The trace file.
        truncated: Whether a half-written last line was dropped.
    """

    def __init__(self, events: list[Any], path: Path, truncated: bool) -> None:
        self.events = events
        self.path = path
        self.truncated = truncated

    @classmethod
    def load(cls, path: str | Path) -> Listing:
        """Read ``path`` for a listing (another tool's session is converted, as by
        ``Trace.load``).

        Raises:
            TraceError: The file is missing or empty.
            TraceFormatError: A line (other than a half-written last one) is corrupt.
            UnsupportedSchemaVersion: The trace is newer than this regista.
        """
        from regista.trace.lines import read_events

        events, truncated = read_events(path, messages=False, light=True)
        return cls(events, Path(path), truncated)

    @property
    def start(self) -> Any:
        """The ``session.start`` event."""
        return self.events[0]

    @property
    def end(self) -> Any:
        """The ``session.end`` event, or ``None`` for a session that did not finish."""
        last = self.events[-1]
        return last if last.type == SESSION_END else None
