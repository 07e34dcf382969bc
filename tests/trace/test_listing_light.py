"""A trace read for ``regista show`` without the event models: the same events, the same
errors, and no pydantic imported."""

from __future__ import annotations

import os
import random
import warnings
from pathlib import Path
from types import NoneType, UnionType
from typing import Any, Literal, Union, get_args, get_origin

import msgspec
import orjson
import pytest
from files import SAMPLES as SAMPLE_TRACES
from files import found
from fresh import fresh_python

from regista.errors import RegistaError
from regista.trace.events import EVENT_CLASSES
from regista.trace.listing import FIELDS, LEFT_OUT, Listed, Listing, listed
from regista.trace.reader import Trace

SAMPLES = found(SAMPLE_TRACES)


def _accepted(annotation: Any) -> tuple[frozenset[type], frozenset[str] | None, bool]:
    """What a field of ``annotation`` takes as it is, read from the annotation."""
    if annotation is Any:
        raise AssertionError("no event field is Any")
    if annotation in (int, float, bool, str):
        return frozenset((annotation,)), None, False
    if annotation is None or annotation is NoneType:
        return frozenset((NoneType,)), None, False
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return frozenset((str,)), frozenset(args), False
    if origin is dict:
        assert args == (str, Any)
        return frozenset((dict,)), None, False
    if origin is list:
        assert args == (dict[str, Any],)
        return frozenset((list,)), None, True
    assert origin in (Union, UnionType), annotation
    parts = [_accepted(a) for a in args]
    assert all(p[1] is None for p in parts)
    return frozenset().union(*(p[0] for p in parts)), None, any(p[2] for p in parts)


def test_the_table_says_what_the_models_say() -> None:
    assert set(FIELDS) == set(EVENT_CLASSES)
    for kind, cls in EVENT_CLASSES.items():
        fields = cls.model_fields
        assert [f[0] for f in FIELDS[kind]] == list(fields), kind
        for name, types, allowed, of_objects in FIELDS[kind]:
            assert (types, allowed, of_objects) == _accepted(fields[name].annotation), name
        for name, default in LEFT_OUT.get(kind, ()):
            made = default() if callable(default) else default
            assert made == fields[name].get_default(call_default_factory=True)


def _light_event(ev: Any) -> bool:
    """Whether ``ev`` was read without the models: a listed view or a typed record."""
    return isinstance(ev, Listed | msgspec.Struct)


def _fields(ev: Any) -> bytes:
    """An event's fields (and extras) as canonical JSON, whatever its class; its ``ts`` left
    out (a line without one is stamped when read)."""
    if isinstance(ev, Listed):
        data = dict(vars(ev))
    elif isinstance(ev, msgspec.Struct):  # a typed record: some fields are its class's
        data = {name: getattr(ev, name) for name, *_ in FIELDS[ev.type]}
    else:
        data = ev.model_dump()
    data.pop("ts", None)
    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS)


def _outcome(load: Any) -> tuple[Any, ...]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run = load()
    except RegistaError as exc:
        return ("error", type(exc).__name__, str(exc))
    return ("read", [_fields(ev) for ev in run.events], run.truncated)


@pytest.mark.parametrize("path", [*SAMPLES, "odd", "odd-fork", "odd-unfinished", "odd-shuffled"])
def test_a_listing_reads_the_events_the_models_read(path: Path | str, tmp_path: Path) -> None:
    if isinstance(path, str):
        from show_odd import odd_trace

        path = odd_trace(
            tmp_path / "odd.jsonl",
            fork="fork" in path,
            end="unfinished" not in path,
            shuffled="shuffled" in path,
        )
    listing = Listing.load(path)
    assert _outcome(lambda: listing) == _outcome(lambda: Trace.load(path, messages=False))
    assert listing.start.type == "session.start" and listing.path == path
    if path in SAMPLES:  # written by regista: nothing for the models to do
        assert all(map(_light_event, listing.events))


def _line_changes(rng: random.Random, line: dict[str, Any]) -> dict[str, Any]:
    """``line`` with one top-level field changed the way a hand or another writer would."""
    keys = list(line)
    key = rng.choice(keys)
    value = line[key]
    out = dict(line)
    how = rng.randrange(9)
    if how == 0:
        del out[key]
    elif how == 1:
        out["extra_" + key] = value  # an extra field after the others
    elif how == 2:
        out = {key: value, **{k: v for k, v in line.items() if k != key}}  # moved first
    elif how == 3 and isinstance(value, bool | int | float) and value is not None:
        out[key] = str(value)
    elif how == 4 and isinstance(value, int) and not isinstance(value, bool):
        out[key] = rng.choice([float(value), value + 0.5, bool(value % 2), 2**62])
    elif how == 5 and isinstance(value, float):
        out[key] = rng.choice([int(value), True, None])
    elif how == 6 and isinstance(value, list):
        out[key] = [*value, rng.choice([1, "x", None, []])]
    elif how == 7:
        out[key] = rng.choice([None, "", "live", "policy", "scripted", 0, [], {}, [{}]])
    else:
        out[key] = rng.choice([{}, [], None, "edit", -1])
    return out


def test_a_listing_reads_changed_lines_as_the_models_read_them(tmp_path: Path) -> None:
    """Seeded: one field of one line changed (a type pydantic converts or refuses, a field
    missing, extra or out of order); the listing gives the models' events or error."""
    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "1212")) + 31)
    n = int(os.environ.get("REGISTA_FUZZ_ITERATIONS", "150"))
    sources = [p.read_bytes().splitlines() for p in SAMPLES]
    path = tmp_path / "t.jsonl"
    listed_ok = 0
    for _ in range(n):
        lines = list(rng.choice(sources))
        k = rng.randrange(len(lines))
        lines[k] = orjson.dumps(_line_changes(rng, orjson.loads(lines[k])))
        path.write_bytes(b"\n".join(lines) + b"\n")
        models = _outcome(lambda: Trace.load(path, messages=False))
        assert _outcome(lambda: Listing.load(path)) == models, lines[k][:300]
        listed_ok += models[0] == "read"
    assert listed_ok > n // 4  # both ways read many of them, not only refuse


def test_extra_fields_are_kept_as_attributes_and_views_are_read_only() -> None:
    line = orjson.loads(
        next(ln for ln in SAMPLES[0].read_bytes().splitlines() if b'"llm.response"' in ln)
    )
    event = listed({**line, "stream": True, "server": {"address": "127.0.0.1", "port": 9}})
    assert event is not None
    assert (event.stream, event.server["port"], event.provider) == (True, 9, line["provider"])
    with pytest.raises(AttributeError, match="read-only"):
        event.provider = "x"
    assert listed({**line, "duration_ms": 3}) is None  # pydantic makes it 3.0: left to it
    assert listed({**line, "source": "elsewhere"}) is None


def test_show_of_a_clean_trace_imports_no_models() -> None:
    code = (
        "import sys\n"
        "from regista.cli.main import main\n"
        "try:\n"
        f"    main(['show', {str(SAMPLES[0])!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('pydantic', 'regista.trace.events', 'regista.types')"
        " if m in sys.modules))\n"
    )
    out = fresh_python(code)
    assert "compaction" in out  # the table was printed
    assert out.rstrip().endswith("[]")


def _model_state(ev: Any) -> tuple[Any, ...]:
    """Everything a validated model holds: its class, its fields in order, the fields set,
    the extra and private values."""
    return (
        type(ev),
        list(ev.__dict__.items()),
        ev.__pydantic_fields_set__,
        ev.__pydantic_extra__,
        ev.__pydantic_private__,
    )


def test_a_model_built_without_pydantic_is_the_one_it_validates() -> None:
    """Seeded: every line of the samples, and lines with one field changed (a type pydantic
    converts or refuses, a field missing, extra or out of order). ``modelled`` gives the
    model ``EventAdapter`` validates, or ``None`` (the reader then validates it)."""
    from pydantic import ValidationError

    from regista.trace.events import EventAdapter
    from regista.trace.listing import modelled

    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "1212")) + 37)
    n = int(os.environ.get("REGISTA_FUZZ_ITERATIONS", "150"))
    from regista.trace.compact import RequestDecoder

    lines = []
    for path in SAMPLES:  # completed as the reader completes them (compact requests)
        decoder = RequestDecoder()
        for raw in path.read_bytes().splitlines():
            lines.append(orjson.loads(raw))
            decoder.resolve(lines[-1])
    changed = [_line_changes(rng, rng.choice(lines)) for _ in range(n * 10)]
    built = 0
    for i, line in enumerate([*lines, *changed]):
        try:
            want: Any = _model_state(EventAdapter.validate_python(orjson.loads(orjson.dumps(line))))
        except ValidationError:
            want = None
        got = modelled(orjson.loads(orjson.dumps(line)))
        if got is None:
            assert i >= len(lines), line  # a line regista wrote is never left to pydantic
            continue
        if "ts" not in line:  # stamped when validated: never built without pydantic
            raise AssertionError(line)
        assert _model_state(got) == want, line
        assert got.model_dump_json() == EventAdapter.validate_python(line).model_dump_json()
        built += 1
    assert built > len(lines) + n  # many changed lines are built too, not only refused


def test_the_reader_reads_the_same_events_with_and_without_pydantic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from regista.trace import lines

    fast = [Trace.load(p) for p in SAMPLES]
    monkeypatch.setattr(lines, "modelled", lambda data: None)
    monkeypatch.setattr(lines, "_modelled_piece", lambda *args: [])  # a few lines at a time
    for trace, path in zip(fast, SAMPLES, strict=True):
        slow = Trace.load(path)
        assert [_model_state(ev) for ev in trace.events] == [_model_state(ev) for ev in slow.events]
        assert trace.summary() == slow.summary()


def _read_as(raw: bytes) -> tuple[Any, ...]:
    """What ``parse_line`` makes of ``raw`` read for a listing."""
    from regista.trace.lines import parse_line

    try:
        event = parse_line(raw, Path("t.jsonl"), 7, messages=False, light=True)
    except RegistaError as exc:
        return ("error", type(exc).__name__, str(exc))
    return _view(event)


def _view(event: Any) -> tuple[Any, ...]:
    """What an event read says (its fields: a model, a listed view and a typed record of
    the same line say the same)."""
    return ("read", _fields(event))


def _odd_layouts(rng: random.Random, raw: bytes) -> list[bytes]:
    """``raw`` laid out as other writers might: cut short, keys moved, spaces, an older
    schema, a request whose messages are not JSON past its head."""
    line = orjson.loads(raw)
    out = [raw[: rng.randrange(1, len(raw))], raw + b" ", b" " + raw]
    out.append(orjson.dumps(dict(reversed(line.items()))))
    out.append(orjson.dumps({**line, "schema_version": rng.choice([1, 3, 2.0, True, "2"])}))
    out.append(orjson.dumps({**line, "step": rng.choice([-1, -(2**40), None, 0])}))
    out.append(raw.replace(b'":', b'": ', rng.randrange(1, 6)))
    if line.get("type") == "llm.request":
        head, sep, _ = raw.partition(b',"messages":')
        out.append(head + sep + b"[{]}")  # read from its head alone, by both
        out.append(raw.replace(b',"messages_prefix":', b',"result_refs":[],"messages_prefix":'))
    return out


def test_a_listing_reads_the_writers_lines_in_fewer_steps_as_it_reads_any() -> None:
    """Seeded: ``parse_file``'s fast path for a listing (``lines._light``) gives, for every
    line it reads, the view ``parse_line`` gives; a line it leaves (``None``), any line
    ``parse_line`` refuses among them, is read by ``parse_line`` with its errors."""
    from regista.trace.lines import _light

    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "1212")) + 41)
    n = int(os.environ.get("REGISTA_FUZZ_ITERATIONS", "150"))
    clean = [raw for path in SAMPLES for raw in path.read_bytes().splitlines()]
    changed = [orjson.dumps(_line_changes(rng, orjson.loads(rng.choice(clean)))) for _ in range(n)]
    odd = [o for _ in range(n) for o in _odd_layouts(rng, rng.choice(clean))]
    fast = 0
    for i, raw in enumerate([*clean, *changed, *odd]):
        got = _light(raw)
        if got is None:
            assert i >= len(clean) or b'"session.' in raw or b'"context.' in raw, raw[:200]
            continue
        fast += 1
        assert _view(got) == _read_as(raw), raw[:300]
        assert isinstance(got, Listed)
    assert fast > len(clean) // 2 + n // 4  # changed and odd lines are read too, not only left


def changed_piece(
    rng: random.Random,
    source: list[bytes],
    start: int,
    changes: int,
    request_changes: Any = None,
) -> list[bytes]:
    """1 to 39 lines of ``source`` from ``start``, ``changes`` times one changed (a field,
    a layout, with ``request_changes`` a request's own), left out or one added."""
    lines = source[start : start + rng.randrange(1, 40)]
    for _ in range(changes):
        k = rng.randrange(len(lines))
        how = rng.randrange(4 if request_changes is None else 5)
        if request_changes is None and how >= 2:
            how += 1  # (no change of a request's own)
        if how < 3 and lines[k] not in source:  # changed already (and perhaps cut)
            continue
        if how == 0:
            lines[k] = orjson.dumps(_line_changes(rng, orjson.loads(lines[k])))
        elif how == 1:
            lines[k] = rng.choice(_odd_layouts(rng, lines[k]))
        elif how == 2 and b'"llm.request"' in lines[k]:
            lines[k] = request_changes(rng, lines[k])
        elif how == 3 and len(lines) > 1:
            del lines[k]
        else:
            lines.insert(k, rng.choice(source))
    return lines


def _one_at_a_time(lines: list[bytes], seq: int) -> list[tuple[Any, ...]] | None:
    """``lines`` read one at a time as ``parse_file`` reads them for a listing; ``None``
    when one is refused (or out of order)."""
    from regista.trace.lines import _light, parse_line

    out = []
    for i, raw in enumerate(lines):
        try:
            event = _light(raw) or parse_line(
                raw, Path("t.jsonl"), i + 1, light=True, messages=False
            )
        except RegistaError:
            return None
        if event.seq != seq + i:
            return None
        out.append(_view(event))
    return out


def test_a_listing_reads_a_piece_of_lines_as_it_reads_them_one_at_a_time() -> None:
    """Seeded: ``parse_file`` reads each piece of a file for a listing at once
    (``lines._light_lines``: a kind at a time, a field at a time); it gives the events the
    reading one line at a time gives, or leaves the piece to it (``None``): always when a
    line is refused, or out of order. Pieces of the samples, with lines changed, cut, laid
    out otherwise, moved or left out."""
    from regista.trace.lines import _light_lines

    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "1212")) + 43)
    n = int(os.environ.get("REGISTA_FUZZ_ITERATIONS", "150"))
    sources = [p.read_bytes().splitlines() for p in SAMPLES]
    read_at_once = 0
    for i in range(n * 2):
        source = rng.choice(sources)
        start = rng.randrange(len(source))
        lines = changed_piece(rng, source, start, i % 3)  # none, one or two lines changed
        want = _one_at_a_time(lines, start)
        got = _light_lines(lines, start, Path("t.jsonl"), start)
        if got is None:
            continue
        assert want is not None, lines
        assert [_view(ev) for ev in got] == want
        read_at_once += 1
    assert read_at_once > n // 2  # not only left to the line at a time


def _long_trace(rng: random.Random, pieces: int) -> list[bytes]:
    """A sample's lines, its middle ones repeated (numbered on) until the trace is longer
    than ``pieces`` of the pieces ``parse_file`` reads."""
    from regista.trace.lines import CHUNK

    source = rng.choice(SAMPLES).read_bytes().splitlines()
    middle = [orjson.loads(raw) for raw in source[1:-1]]
    lines, size = [source[0]], len(source[0])
    while size < pieces * CHUNK:
        line = dict(rng.choice(middle), seq=len(lines))
        lines.append(orjson.dumps(line))
        size += len(lines[-1]) + 1
    lines.append(orjson.dumps(dict(orjson.loads(source[-1]), seq=len(lines))))
    return lines


@pytest.mark.parametrize("how", ["clean", "changed", "cut", "blank", "older", "every piece"])
def test_a_long_trace_is_listed_as_the_models_read_it(
    how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seeded: a trace of several pieces, clean or with a line changed in a later piece (a
    field of another type, a line cut short, a blank line, an older schema), or a line of
    another writer's shape in every piece: the listing reads what the models read, or
    says what they say, at the same line."""
    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "1212")) + 47)
    lines = _long_trace(rng, 4)
    k = rng.randrange(len(lines) * 2 // 3, len(lines) - 1)
    if how == "changed":
        lines[k] = orjson.dumps(_line_changes(rng, orjson.loads(lines[k])))
    elif how == "cut":
        lines[k] = lines[k][: len(lines[k]) // 2]
    elif how == "blank":
        lines[k] = b""
    elif how == "older":  # as a schema-1 writer wrote it
        lines[k] = orjson.dumps({**orjson.loads(lines[k]), "schema_version": 1})
    elif how == "every piece":  # extra fields, one holding an object
        for i in range(1, len(lines) - 1, 97):
            lines[i] = orjson.dumps({**orjson.loads(lines[i]), "extra": {"n": [1, [2]]}})
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    from regista.trace import lines as reader

    read_at_once = []
    at_once = reader._light_lines

    def counted(*args: Any) -> Any:
        got = at_once(*args)
        read_at_once.append(got is not None)
        return got

    monkeypatch.setattr(reader, "_light_lines", counted)
    assert _outcome(lambda: Listing.load(path)) == _outcome(
        lambda: Trace.load(path, messages=False)
    )
    if how in ("clean", "every piece"):
        assert read_at_once.count(True) >= 3, read_at_once


def _lookalikes(rng: random.Random, raw: bytes) -> bytes:
    """``raw`` with its kind made hard to tell from its head: a type of another name with
    the letter requests or compactions have where theirs is ("llm.request"'s q,
    "context.compaction"'s t), a nested ``"type"`` key before its own, the type key after
    256 bytes, or a line that ends right after its type."""
    try:
        line = orjson.loads(raw)
    except orjson.JSONDecodeError:  # changed already
        return raw
    how = rng.randrange(5)
    if how == 0:
        line["type"] = rng.choice(["xxxxxxq", "abcdeftx", "llm.requesT", "context.compactioN"])
    elif how == 1:
        nested = {"type": rng.choice(["llm.request", "context.compaction", "text"])}
        line = {"note": nested, **line}
    elif how == 2:
        line = {"pad": "p" * 300, **line}
    elif how == 3:
        return b'{"type":"llm.re'
    else:
        line = {k: v for k, v in line.items() if k != "type"}
        line["type"] = rng.choice(["llm.request", "context.compaction"])  # its key last
    return orjson.dumps(line)


def test_a_piece_tells_requests_and_compactions_as_the_lines_read_alone() -> None:
    """Seeded: ``lines._light_lines`` tells a request or a compaction by one letter of its
    type's value; a line that only looks like one (or hides what it is) is read as the
    reading one line at a time reads it, or the piece is left to that reading."""
    from regista.trace.lines import _light_lines

    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "1212")) + 53)
    sources = [p.read_bytes().splitlines() for p in SAMPLES]
    compared = 0
    for _ in range(int(os.environ.get("REGISTA_FUZZ_ITERATIONS", "150"))):
        source = rng.choice(sources)
        start = rng.randrange(len(source))
        lines = source[start : start + rng.randrange(1, 30)]
        for _ in range(rng.randrange(1, 3)):
            k = rng.randrange(len(lines))
            lines[k] = _lookalikes(rng, lines[k])
        want = _one_at_a_time(lines, start)
        got = _light_lines(lines, start, Path("t.jsonl"), start)
        if got is not None:
            assert want is not None, lines
            assert [_view(ev) for ev in got] == want
            compared += 1
    assert compared > 10  # not only left to the line at a time


def _past_the_records(rng: random.Random, raw: bytes) -> list[bytes]:
    """``raw`` with what a typed record must not take as it is: a number past 64 bits
    (``orjson`` makes it a float), whole numbers for its floats (pydantic converts them), a
    payload nested deeper than the records read, an extra field, a step below 0."""
    from regista.trace.listing import RECORD_DEPTH

    line = orjson.loads(raw)
    out = [raw.replace(b'"seq":', b'"seq":1' + b"0" * 25, 1)]
    for key in ("input", "response", "content"):
        if isinstance(line.get(key), dict):
            big = rng.choice([b"123456789012345678901234567890", b"18446744073709551615"])
            out.append(
                raw.replace(f'"{key}":{{'.encode(), f'"{key}":{{"n":'.encode() + big + b",", 1)
            )
            deep: Any = 1
            for _ in range(RECORD_DEPTH + rng.randrange(0, 3)):
                deep = rng.choice([[deep], {"k": deep}])
            out.append(orjson.dumps({**line, key: {**line[key], "deep": deep}}))
    for key, value in line.items():
        if isinstance(value, float):
            out.append(orjson.dumps({**line, key: int(value)}))
    out.append(orjson.dumps({**line, "extra": 1}))
    if "step" in line:
        out.append(orjson.dumps({**line, "step": -1}))
    return out


def test_a_typed_record_holds_the_fields_the_models_read() -> None:
    """Seeded: ``listing.records`` decodes a line of the kinds it knows into the fields
    ``parse_line`` reads of it (its nested payloads then checked as for any event), or
    refuses it, to be read the usual way: the writers' lines, lines changed or laid out
    otherwise, and lines made to be past what it reads."""
    from regista.trace.listing import RECORDED, records
    from regista.trace.validate import check_event

    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "1212")) + 59)
    n = int(os.environ.get("REGISTA_FUZZ_ITERATIONS", "150"))
    clean = [raw for path in SAMPLES for raw in path.read_bytes().splitlines()]
    changed = [orjson.dumps(_line_changes(rng, orjson.loads(rng.choice(clean)))) for _ in range(n)]
    odd = [o for _ in range(n) for o in _odd_layouts(rng, rng.choice(clean))]
    past = [o for _ in range(n) for o in _past_the_records(rng, rng.choice(clean))]
    decode = records()
    taken = {"clean": 0, "other": 0}
    for i, raw in enumerate([*clean, *changed, *odd, *past]):
        try:
            got = decode(raw)
        except ValueError:  # msgspec's errors
            kind = orjson.loads(raw).get("type") if i < len(clean) else None
            assert kind not in RECORDED, raw[:300]  # every line regista wrote of its kinds
            continue
        taken["clean" if i < len(clean) else "other"] += 1
        want = _read_as(raw)
        if want[0] == "error":  # refused by a check of its nested values alone
            assert check_event(got, messages=False) is not None, (raw[:300], want)
        else:
            assert check_event(got, messages=False) is None
            assert _view(got) == want, raw[:300]
    assert taken["clean"] > len(clean) // 2 and taken["other"] > n // 4
    # a request, from its head: the view _light gives of the line
    from regista.trace.lines import _light, _request_head

    heads = 0
    for raw in [*clean, *changed, *odd]:
        head = _request_head(raw)
        if head is None:
            continue
        try:
            got = decode(head)
        except ValueError:
            continue
        if got.type == "llm.request":
            light = _light(raw)
            assert light is not None and _view(got) == _view(light), raw[:300]
            heads += 1
    assert heads > n // 4
