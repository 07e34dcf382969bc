"""The incremental request hash gives exactly the plain hash, whatever the requests do."""

from __future__ import annotations

import copy
import os
import random
from typing import Any

from files import SAMPLES, found

from regista.trace.canonical import PrefixHasher, request_hash
from regista.trace.reader import Trace
from regista.types import LlmRequest

RUNS = int(os.environ.get("REGISTA_FUZZ_RUNS", "40"))


def _request(messages: list[Any], **kw: Any) -> dict[str, Any]:
    return LlmRequest(
        model=kw.get("model", "m"),
        system=kw.get("system", "S"),
        messages=messages,
        tools=kw.get("tools", []),
        max_tokens=kw.get("max_tokens", 100),
        params=kw.get("params", {}),
    ).canonical()


def test_the_sample_sessions_hash_as_recorded() -> None:
    for path in found(SAMPLES):
        hasher = PrefixHasher()
        for ev, request in Trace.load(path).iter_requests():
            assert hasher(request.canonical()) == ev.request_hash


def test_edge_cases_hash_as_the_plain_hash() -> None:
    hasher = PrefixHasher()
    m = [{"role": "user", "content": "hi"}]
    a = {"role": "assistant", "content": [{"type": "text", "text": "é"}]}
    u = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": 1}]}
    u_true = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t", "content": True}],
    }
    sequence = [
        _request([]),  # no messages
        _request(m),
        _request([*m, a]),
        _request([*m, a], system="changed system prompt"),
        _request([*m, a], tools=[{"name": "f", "input_schema": {}}]),
        _request([*m, a], max_tokens=5),  # a key before "messages" changed
        _request([*m, a, u], max_tokens=5),
        _request([*m, a, u_true], max_tokens=5),  # equal in Python, not as JSON
        _request([{"role": "user", "content": "summary"}, u_true]),  # a compaction rewrote it
        _request([*m, a]),
        _request([*m, a], params={"temperature": 0.5, "stop_sequences": ["x"]}),
        _request(m),  # shorter than the last one
        _request([copy.deepcopy(m[0]), copy.deepcopy(a)]),  # equal copies
        {"model": "m", "messages": m},  # other keys
        {"a": 1, "messages": "not a list", "z": 2},
        {"zzz": None, "messages": m},
    ]
    for req in sequence:
        assert hasher(req) == request_hash(req), req


def test_fuzz_growing_sessions_hash_as_the_plain_hash() -> None:
    rng = random.Random(31337)
    values: list[Any] = [1, True, 1.0, "x", "é" * 3, None, [], {}, {"a": [1, {"b": False}]}]
    for _ in range(RUNS):
        hasher = PrefixHasher()
        messages: list[Any] = []
        system = "S"
        for _step in range(rng.randint(1, 30)):
            roll = rng.random()
            if roll < 0.1 and messages:
                messages = [{"role": "user", "content": "summary"}, *messages[-2:]]
            elif roll < 0.15 and messages:
                messages = messages[:-1]
            elif roll < 0.2 and messages:  # an equal copy of the history
                messages = copy.deepcopy(messages)
            if rng.random() < 0.1:
                system = rng.choice(["S", "T", ""])
            for _ in range(rng.randint(0, 3)):
                messages = [*messages, {"role": "user", "content": [{"v": rng.choice(values)}]}]
            req = _request(messages, system=system, max_tokens=rng.choice([100, 100, 7]))
            assert hasher(req) == request_hash(req)


def test_fuzz_tools_parsed_afresh_hash_as_the_plain_hash() -> None:
    """A server parses every request afresh: equal tools (in any key order) reuse the
    hashed tail, tools that differ only as JSON types (1, 1.0, true) do not."""
    rng = random.Random(4242)
    toolsets: list[Any] = [
        [{"name": "a", "n": 1}],
        [{"n": 1, "name": "a"}],
        [{"name": "a", "n": 1.0}],
        [{"name": "a", "n": True}],
        [{"name": "a", "key": "sk-ant-" + "a1B2" * 8}],
        [],
    ]
    for _ in range(RUNS):
        hasher = PrefixHasher()
        messages: list[Any] = []
        for step in range(rng.randint(1, 12)):
            messages = [*messages, {"role": "user", "content": f"m{step}"}]
            tools = copy.deepcopy(rng.choice(toolsets))
            system = rng.choice(["S", "".join(["S"]), "T"])
            req = _request(messages, system=system, tools=tools)
            assert hasher(req) == request_hash(req)


def test_fuzz_values_passed_again_or_afresh_hash_as_the_plain_hash() -> None:
    """The agent loop passes the same system prompt and tools and a new ``params`` dict on
    every call: the hasher reuses the JSON of a value passed again, and makes that of one
    passed afresh (equal, or not)."""
    rng = random.Random(2718)
    choices: dict[str, list[Any]] = {
        "system": ["S", "T", None],
        "tools": [[], [{"name": "a", "n": 1}], [{"name": "a", "n": 1.0}]],
        "params": [{}, {"temperature": 0.5}, {"temperature": 1}],
        "tool_choice": [None, {"type": "auto"}],
        "model": ["m", "n"],
    }
    for _ in range(RUNS):
        hasher = PrefixHasher()
        messages: list[Any] = []
        current = {k: rng.choice(v) for k, v in choices.items()}
        for step in range(rng.randint(1, 12)):
            messages = [*messages, {"role": "user", "content": f"m{step}"}]
            for key, options in choices.items():
                roll = rng.random()  # the same object, an equal copy, or another value
                if roll < 0.3:
                    current[key] = copy.deepcopy(current[key])
                elif roll < 0.45:
                    current[key] = rng.choice(options)
            req = {**current, "messages": messages, "max_tokens": 9}
            assert hasher(req) == request_hash(req)
