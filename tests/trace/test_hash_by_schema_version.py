"""The request hash follows the trace's schema version: version 1 hashed the canonical
JSON as it was, version 2 hashes it with secret shapes redacted. A version-1 trace whose
requests hold a secret-shaped string still verifies and replays strictly."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
import pytest
from files import V1_TRACES

from regista import replay
from regista.cli.main import main
from regista.trace.canonical import request_hash
from regista.trace.reader import Trace
from regista.trace.verify import verify_requests

V1 = V1_TRACES
SECRET = "sk-ant-api03-" + "Q7xv2LmN9pR4sT6uW8yZ0aB3cD5eF1gH"


def _plain_hash(canonical: dict[str, Any]) -> str:
    return hashlib.sha256(orjson.dumps(canonical, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _with_secret(tmp_path: Path, *, redacted_hash: bool = False) -> Path:
    """``refund_search_loop`` (version 1) with a secret in its task, hashed as version 1
    did (or, with ``redacted_hash``, as the first releases that redacted did)."""
    lines = [orjson.loads(x) for x in (V1 / "refund_search_loop.jsonl").read_bytes().splitlines()]
    old_task = lines[0]["task"]
    lines[0]["task"] = f"{old_task} My key is {SECRET}."
    prev: list[Any] = []
    for line in lines:
        if line["type"] != "llm.request":
            continue
        for m in line["messages"]:
            for block in m["content"]:
                if block.get("text") == old_task:
                    block["text"] = lines[0]["task"]
        messages = prev[: line["messages_prefix"]] + line["messages"]
        canonical = {k: line[k] for k in ("model", "system", "tools", "tool_choice")}
        canonical.update(max_tokens=line["max_tokens"], params=line["params"], messages=messages)
        line["request_hash"] = (request_hash if redacted_hash else _plain_hash)(canonical)
        prev = messages
    path = tmp_path / "v1_secret.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    assert path.read_bytes().count(SECRET.encode()) == 2  # the task and the first request
    return path


@pytest.mark.parametrize("redacted_hash", [False, True], ids=["plain", "early-redacted"])
def test_a_version_1_trace_with_a_secret_verifies(tmp_path: Path, redacted_hash: bool) -> None:
    path = _with_secret(tmp_path, redacted_hash=redacted_hash)
    assert verify_requests(Trace.load(path)).requests > 0
    assert main(["verify", str(path)]) == 0


def test_an_edited_version_1_trace_still_fails_verification(tmp_path: Path) -> None:
    path = _with_secret(tmp_path)
    path.write_bytes(path.read_bytes().replace(b"My key is", b"My key was"))
    assert main(["verify", str(path)]) == 1


async def test_a_version_1_trace_with_a_secret_replays_strictly(
    tmp_path: Path, sample_db: Path
) -> None:
    path = _with_secret(tmp_path)
    result = await replay(path, trace_dir=tmp_path / "out")
    assert result.diverged_at is None
    # The replay is written as the current version: its hashes are the redacted ones.
    replayed = Trace.load(result.trace_path)
    assert replayed.start.schema_version == 2
    assert main(["verify", str(result.trace_path)]) == 0
    again = await replay(result.trace_path, trace_dir=tmp_path / "again")
    assert again.diverged_at is None
    assert Trace.load(again.trace_path).request_hashes() == replayed.request_hashes()
