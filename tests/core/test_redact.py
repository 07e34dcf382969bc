"""Secrets out of traces: redacted as written, look-alikes kept, replays still work."""

from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path

import orjson
import pytest
from builders import answer, tool_use
from redact_corpus import BY_RULE, ISSUE_SHAPES

from regista import Agent, replay, tool
from regista.cli.main import main
from regista.loop import FakeClock
from regista.providers import ScriptedProvider
from regista.redact import KINDS, redact_bytes, redact_text
from regista.trace.canonical import canonical_json, request_hash
from regista.trace.reader import Trace

# Made-up values in the shapes of real secrets (none of them is a real credential).
SECRETS = {
    "anthropic_api_key": "sk-ant-api03-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVbNm-_AbCdEf",
    "openai_api_key": "sk-proj-4fT9kQ2mZ8xR1vB7nL3pW6yH0cJ5dS",
    "aws_access_key_id": "AKIAIOSFODNN7EXAMPL3",
    "aws_secret_access_key": 'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
    "github_token": "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
    "slack_token": "xoxb-1234567890-abcdefghijKL",
    "google_api_key": "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "stripe_key": "sk_live_51HxYzAbCdEfGhIjKlMnOp",
    "bearer_token": "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
    "basic_auth": "Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==",
    "url_password": "postgres://admin:S3cr3tPassw0rd@db.internal:5432/orders",
    "private_key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1b2c3\nq9w8e7r6t5y4\n"
    "-----END RSA PRIVATE KEY-----",
}
LOOK_ALIKES = [
    "scikit-learn is spelled sk-learn-is-a-python-library sometimes",
    "task-1234567890abcdefghij",
    "the desk-lamp-model-2000-deluxe-edition is back",
    "Asia and AKIA are words; AKIA123 is too short",
    "a bearer of good news; Bearer token required",
    "http://example.com:8080/path and user@example.com and https://user@host/x",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYH\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    "ghp_short and xoxb-1 and AIza-short",
    "secret_access_key is the name of a setting",
    "basic authorization rules apply",
]


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_secret_shape_is_redacted_with_its_kind(kind: str) -> None:
    text = f"before {SECRETS[kind]} after"
    out = redact_text(text)
    assert f"[REDACTED:{kind}]" in out
    assert out.startswith("before ") and out.endswith(" after")
    secret_part = SECRETS[kind].split()[-1].strip('"').split("@")[0].split(":")[-1]
    assert secret_part not in out or kind in ("private_key",)
    assert redact_text(out) == out  # idempotent


def test_every_kind_has_a_case() -> None:
    assert set(SECRETS) <= set(KINDS)  # the rest: tests/core/test_redact_corpus.py


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_survive(text: str) -> None:
    assert redact_text(text) == text


def test_redacting_json_equals_redacting_the_text_then_encoding() -> None:
    """Seeded: redacting a line's JSON gives what encoding the redacted values gives, and the
    request hash is over exactly the redacted canonical JSON."""
    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "1616")))
    corpus = [text for text, _, _ in [*ISSUE_SHAPES, *BY_RULE.values()]]
    pieces = [
        *SECRETS.values(),
        *corpus,
        *LOOK_ALIKES,
        '"',
        "\\",
        "\n",
        "\t",
        "é",
        "\u2028",
        " ",
        "x",
        ",",
        "{",
    ]
    for _ in range(int(os.environ.get("REGISTA_FUZZ_CASES", "300"))):
        texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(3)]
        value = {"a": texts[0], "b": [texts[1], {"c": texts[2]}]}
        via_json = orjson.loads(redact_bytes(orjson.dumps(value)))
        via_text = {
            "a": redact_text(texts[0]),
            "b": [redact_text(texts[1]), {"c": redact_text(texts[2])}],
        }
        assert via_json == via_text
        req = {
            "model": "m",
            "system": texts[0],
            "messages": [{"role": "user", "content": t} for t in texts],
        }
        assert request_hash(req) == hashlib.sha256(redact_bytes(canonical_json(req))).hexdigest()


def _leaky_agent(folder: Path, *, redact: bool = True) -> Agent:
    @tool
    def read_env(var: str) -> str:
        """Reads the environment."""
        return f"{var}={SECRETS['anthropic_api_key']} and {SECRETS['url_password']}"

    script = [
        answer(tool_use("toolu_1", "read_env", var="ANTHROPIC_API_KEY"), text="Looking."),
        answer(text=f"The key is {SECRETS['openai_api_key']}."),
    ]
    return Agent(
        instructions=f"Use {SECRETS['bearer_token']} for the API.",
        tools=[read_env],
        provider=ScriptedProvider(script),
        trace_dir=folder,
        clock=FakeClock(),
        redact=redact,
    )


async def test_a_run_writes_no_secret_and_its_replay_works(tmp_path: Path) -> None:
    result = await _leaky_agent(tmp_path).run(f"Check {SECRETS['aws_access_key_id']}")
    raw = result.trace_path.read_text()
    for kind in ("anthropic_api_key", "url_password", "openai_api_key", "bearer_token"):
        assert f"[REDACTED:{kind}]" in raw
    for secret in ("S3cr3tPassw0rd", "Zx9Qw8Er7Ty6", "4fT9kQ2mZ8x", "eyJhbGci", "IOSFODNN7"):
        assert secret not in raw
    replayed = await replay(result.trace_path, trace_dir=tmp_path / "r")
    assert replayed.stop_reason == "end_turn"
    assert (
        Trace.load(replayed.trace_path).request_hashes()
        == Trace.load(result.trace_path).request_hashes()
    )


async def test_redact_false_keeps_them_and_still_replays(tmp_path: Path) -> None:
    result = await _leaky_agent(tmp_path, redact=False).run("Check")
    assert "S3cr3tPassw0rd" in result.trace_path.read_text()
    assert (await replay(result.trace_path, trace_dir=tmp_path / "r")).stop_reason == "end_turn"


async def test_cli_redact_makes_a_clean_copy_that_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = await _leaky_agent(tmp_path, redact=False).run("Check")
    original = result.trace_path.read_bytes()
    assert main(["redact", str(result.trace_path)]) == 0
    assert "anthropic_api_key" in capsys.readouterr().out
    copy = result.trace_path.with_name(result.trace_path.stem + ".redacted.jsonl")
    assert "S3cr3tPassw0rd" not in copy.read_text()
    assert result.trace_path.read_bytes() == original
    assert (await replay(copy, trace_dir=tmp_path / "r")).stop_reason == "end_turn"
    assert main(["redact", str(result.trace_path)]) == 2  # the copy exists: never overwritten
    assert main(["redact", str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(e.startswith("regista: ") for e in err)


def test_cli_no_redact_writes_secrets_as_they_are(tmp_path: Path) -> None:
    result = _leaky_agent(tmp_path, redact=False).run_sync("Check")
    assert main(["replay", str(result.trace_path), "--trace-dir", str(tmp_path / "a")]) == 0
    (redacted,) = (tmp_path / "a").glob("*.jsonl")
    assert "S3cr3tPassw0rd" not in redacted.read_text()  # the replay's own trace: redacted
    argv = ["--no-redact", "replay", str(result.trace_path), "--trace-dir", str(tmp_path / "b")]
    assert main(argv) == 0
    (kept,) = (tmp_path / "b").glob("*.jsonl")
    assert "S3cr3tPassw0rd" in kept.read_text()
    from regista.redact import default

    assert default() is True  # the flag lasts for its command only
