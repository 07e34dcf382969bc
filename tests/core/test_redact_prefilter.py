"""The one-pass search for secret beginnings finds exactly what a look for each one finds."""

from __future__ import annotations

import os
import random
import string
from collections import Counter

from regista import redact
from regista.redact import _RULES, _apply, might_hold_secret, redact_bytes

_PREFIXES = [p for r in _RULES for p, _ in r.patterns]


def _reference(data: bytes, found: Counter[str]) -> bytes:
    """Every rule whose beginning is in the text, in order (the plain way, one look each)."""
    for rule in _RULES:
        for prefix, pattern in rule.patterns:
            if prefix in data:
                data = _apply(rule, pattern, data, found)
    return data


def _pieces() -> list[bytes]:
    secrets = [
        b"sk-ant-api03-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVbNm-_AbCdEf",
        b"sk-proj-4fT9kQ2mZ8xR1vB7nL3pW6yH0cJ5dS",
        b"AKIAIOSFODNN7EXAMPL3",
        b'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
        b"SecretAccessKey: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        b"ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
        b"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP",
        b"xoxb-1234567890-abcdefghijKL",
        b"AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
        b"sk_live_51HxYzAbCdEfGhIjKlMnOp",
        b"rk_test_51HxYzAbCdEfGhIjKlMnOp",
        b"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln",
        b"authorization: Basic dXNlcjpwYXNzd29yZDEyMw==",
        b"postgres://admin:S3cr3tPassw0rd@db.internal:5432/orders",
        b"-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEA1b2c3\\n-----END RSA PRIVATE KEY-----",
        b"sk-ant-a1b2c3d4e5f6g7h8i",  # too short for an Anthropic key, not for an OpenAI one
        b"[REDACTED:bearer_token]",
        b"[REDACTED:aws_secret_access_key]",
    ]
    # every beginning alone, cut short, and glued to its neighbours
    return [*secrets, *_PREFIXES, *(p[:-1] for p in _PREFIXES), b"\\n", b"\\u0041", b'\\"']


def test_the_one_pass_search_agrees_with_a_look_for_each_beginning() -> None:
    """Seeded: random mixes of secrets, their beginnings, parts of them and plain text give
    the same redaction, the same counts, and ``might_hold_secret`` says no only when no
    beginning is there."""
    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "2718")))
    pieces = _pieces()
    alphabet = (string.ascii_letters + string.digits + "-_:/= \"'").encode()
    for _ in range(int(os.environ.get("REGISTA_FUZZ_CASES", "2000"))):
        parts = []
        for _ in range(rng.randint(0, 8)):
            if rng.random() < 0.5:
                parts.append(rng.choice(pieces))
            else:
                parts.append(bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 30))))
        data = b"".join(parts)
        expected_counts: Counter[str] = Counter()
        got_counts: Counter[str] = Counter()
        assert redact_bytes(data, got_counts) == _reference(data, expected_counts), data
        assert got_counts == expected_counts
        assert might_hold_secret(data) == any(p in data for p in _PREFIXES), data


def test_text_without_any_beginning_comes_back_as_it_is() -> None:
    data = b'{"content": "plain words, numbers 12345 and ORD-9997"}'
    assert not might_hold_secret(data)
    assert redact_bytes(data) is data
    assert might_hold_secret(memoryview(b"see sk-" + b"a" * 30))


def test_the_finder_is_built_on_first_use() -> None:
    assert redact._find() is redact._find()
