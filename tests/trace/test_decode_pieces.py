"""A full decode reads the writer's lines a few at a time (``lines._model_lines``) and its
compact requests in fewer steps (``lines._compact_request``): the same models, the same
errors at the same lines, as the reading one line at a time through pydantic."""

from __future__ import annotations

import os
import random
import warnings
from pathlib import Path
from typing import Any

import orjson
import pytest
from files import SAMPLES as SAMPLE_TRACES
from files import found
from test_listing_light import _line_changes, changed_piece
from test_listing_light import _model_state as _full_state

from regista.errors import RegistaError
from regista.trace.compact import RequestDecoder
from regista.trace.reader import Trace

SAMPLES = found(SAMPLE_TRACES)


def _model_state(ev: Any) -> tuple[Any, ...]:
    """Everything a model holds (see ``test_listing_light``), but the time a line without
    one is stamped with when it is read."""
    cls, items, fields_set, extra, private = _full_state(ev)
    if "ts" not in fields_set:
        items = [(k, v) for k, v in items if k != "ts"]
    return (cls, items, fields_set, extra, private)


def _decoder_state(decoder: RequestDecoder) -> tuple[Any, ...]:
    """What a request decoder holds (its objects by identity: untouched is the same)."""
    return (decoder._context, dict(decoder._results), decoder._checked)


def _primed(lines: list[bytes]) -> RequestDecoder:
    """A decoder that read ``lines`` one at a time."""
    from regista.trace.lines import parse_line

    decoder = RequestDecoder()
    for i, raw in enumerate(lines):
        parse_line(raw, Path("t.jsonl"), i + 1, decoder)
    return decoder


def _one_at_a_time(lines: list[bytes], seq: int, decoder: RequestDecoder) -> tuple[Any, ...]:
    """``lines`` read one at a time as ``parse_file`` reads them: the models, or the error."""
    from regista.trace.lines import parse_line

    out = []
    for i, raw in enumerate(lines):
        lineno = seq + i + 1
        try:
            event = parse_line(raw, Path("t.jsonl"), lineno, decoder)
        except RegistaError as exc:
            return ("error", type(exc).__name__, str(exc))
        if event.seq != lineno - 1:
            return ("error", "seq", lineno)
        out.append(_model_state(event))
    return ("read", out)


def _request_changes(rng: random.Random, raw: bytes) -> bytes:
    """A compact request changed in what it takes from the lines before it, or in its
    messages (what ``_compact_request`` checks last)."""
    line = orjson.loads(raw)
    how = rng.randrange(7)
    if how == 0:
        line["result_refs"] = [*line.get("result_refs", []), "toolu_nowhere"]
    elif how == 1:
        line["result_refs"] = rng.choice(["toolu_1", [1], {}, None])
    elif how == 2 and line.get("messages"):
        line["messages"][0] = rng.choice([1, "x", None, []])
    elif how == 3 and line.get("messages"):
        line["messages"][-1]["content"] = [{"type": "text", "text": rng.choice([1, None])}]
    elif how == 4:
        line["messages_prefix"] = rng.choice([-1, 1.0, True])
    elif how == 5:
        line["system"] = rng.choice(["another", None, 3])
    else:
        line["step"] = rng.choice([-1, "1", 2**62, 1.5])
    return orjson.dumps(line)


def test_a_piece_is_read_as_it_is_read_one_line_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seeded: pieces of the samples, with lines changed (a field's type, a field missing,
    extra or moved; a request's refs, messages or prefix), cut, laid out otherwise, moved or
    left out. ``_model_lines`` gives the models the reading one line at a time through
    pydantic gives, or its error; or leaves the piece (``None``) with the request decoder
    untouched."""
    from regista.trace import lines as reader
    from regista.trace.lines import _model_lines

    def by_pydantic(lines: list[bytes], start: int, before: list[bytes]) -> tuple[Any, ...]:
        with monkeypatch.context() as patch:
            patch.setattr(reader, "modelled", lambda data: None)
            return _one_at_a_time(lines, start, _primed(before))

    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "1212")) + 53)
    n = int(os.environ.get("REGISTA_FUZZ_ITERATIONS", "150"))
    sources = [p.read_bytes().splitlines() for p in SAMPLES]
    read_at_once = refused = 0
    for i in range(n * 3):
        source = rng.choice(sources)
        start = rng.randrange(1, len(source))
        # none, one or two lines changed
        lines = changed_piece(rng, source, start, i % 3, _request_changes)
        want = by_pydantic(lines, start, source[:start])
        decoder = _primed(source[:start])
        before = _decoder_state(decoder)
        try:
            got = _model_lines(lines, Path("t.jsonl"), start, decoder)
        except RegistaError as exc:
            assert ("error", type(exc).__name__, str(exc)) == want, lines
            refused += 1
            continue
        if got is None:
            assert _decoder_state(decoder) == before
            continue
        assert ("read", [_model_state(ev) for ev in got]) == want, lines
        read_at_once += 1
    assert read_at_once > n  # not only left to the line at a time
    assert refused > 0  # a request's messages are refused where the reading refuses them


def _long_trace(rng: random.Random, pieces: int) -> list[bytes]:
    """A sample's lines, its middle ones repeated in order (numbered on) until the trace is
    longer than ``pieces`` of the pieces ``parse_file`` reads: each request after the
    results it refers to, as in a long session."""
    from regista.trace.lines import CHUNK

    source = rng.choice(SAMPLES).read_bytes().splitlines()
    middle = [orjson.loads(raw) for raw in source[1:-1]]
    lines, size = [source[0]], len(source[0])
    while size < pieces * CHUNK:
        for line in middle:
            lines.append(orjson.dumps(dict(line, seq=len(lines))))
            size += len(lines[-1]) + 1
    lines.append(orjson.dumps(dict(orjson.loads(source[-1]), seq=len(lines))))
    return lines


def _outcome(path: Path) -> tuple[Any, ...]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trace = Trace.load(path)
            steps = [[_model_state(ev) for ev in s.events] for s in trace.steps()]
    except RegistaError as exc:
        return ("error", type(exc).__name__, str(exc))
    return ("read", [_model_state(ev) for ev in trace.events], steps, trace.truncated)


@pytest.mark.parametrize(
    "how", ["clean", "changed", "request", "cut", "blank", "older", "session", "every piece"]
)
def test_a_long_trace_is_decoded_as_pydantic_reads_it(
    how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seeded: a trace of several pieces, clean or with a line changed in a later piece (a
    field of another type, a request's messages, a line cut short, a blank line, an older
    schema, another session's id), or a line of another writer's shape in every piece:
    ``Trace.load`` reads what pydantic reads one line at a time, or says what it says, at
    the same line."""
    from regista.trace import lines as reader

    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "1212")) + 59)
    lines = _long_trace(rng, 4)
    k = rng.randrange(len(lines) * 2 // 3, len(lines) - 1)
    if how == "changed":
        lines[k] = orjson.dumps(_line_changes(rng, orjson.loads(lines[k])))
    elif how == "request":
        k = next(i for i in range(k, 0, -1) if b'"llm.request"' in lines[i])
        lines[k] = _request_changes(rng, lines[k])
    elif how == "cut":
        lines[k] = lines[k][: len(lines[k]) // 2]
    elif how == "blank":
        lines[k] = b""
    elif how == "older":  # as a schema-1 writer wrote it
        lines[k] = orjson.dumps({**orjson.loads(lines[k]), "schema_version": 1})
    elif how == "session":
        lines[k] = orjson.dumps({**orjson.loads(lines[k]), "session_id": "01JOTHER"})
    elif how == "every piece":  # extra fields, one holding an object
        for i in range(1, len(lines) - 1, 97):
            lines[i] = orjson.dumps({**orjson.loads(lines[i]), "extra": {"n": [1, [2]]}})
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    read_at_once = []
    few = reader._modelled_piece

    def counted(*args: Any) -> Any:
        got = few(*args)
        read_at_once.append(len(got))
        return got

    monkeypatch.setattr(reader, "_modelled_piece", counted)
    fast = _outcome(path)
    if how in ("clean", "every piece", "session"):
        assert sum(read_at_once) > len(lines) // 2, read_at_once
    monkeypatch.setattr(reader, "_modelled_piece", lambda *args: [])
    monkeypatch.setattr(reader, "modelled", lambda data: None)
    assert fast == _outcome(path)  # pydantic's, one line at a time
    if how == "session":
        assert fast == (
            "error",
            "TraceFormatError",
            f"{path}:{k + 1}: a trace holds exactly one session",
        )
