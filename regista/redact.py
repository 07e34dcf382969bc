"""Secrets out of traces: common secret shapes replaced, as they are written, by a marker.

A tool that prints an environment, a model that echoes a key, a URL with a password: each
would put a secret in a trace that is then shared, committed as a tape or exported. By
default the trace writer replaces every secret shape below by ``[REDACTED:<kind>]``
(``Agent(redact=False)`` turns it off).

Redaction works on the JSON text of each line, and the request hash is computed over the
request's canonical JSON redacted the same way, always (whatever ``redact`` says). So the
hash is over what is written: a replay of a redacted trace rebuilds requests from redacted
text, and their hashes are the recorded ones. Every pattern stays inside one JSON string
(it never matches ``"`` or crosses into the next value), so redacting a value and then
encoding it gives the same bytes as encoding it and then redacting.

A line is searched once for the literal beginnings of all the patterns together; only the
patterns whose beginnings occur in it run, and a line with none comes back as it was.

Kinds: ``anthropic_api_key``, ``openai_api_key``, ``aws_access_key_id``,
``aws_secret_access_key``, ``github_token``, ``slack_token``, ``google_api_key``,
``stripe_key``, ``bearer_token``, ``basic_auth``, ``url_password``, ``private_key``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "KINDS",
    "default",
    "marker",
    "might_hold_secret",
    "redact_bytes",
    "redact_text",
    "secret_finder",
    "set_default",
]

_on_by_default = [True]


def set_default(on: bool) -> None:
    """Whether traces are redacted when nothing says (``regista --no-redact`` sets ``False``)."""
    _on_by_default[0] = on


def default() -> bool:
    """Whether traces are redacted when nothing says (``True`` unless changed)."""
    return _on_by_default[0]


def marker(kind: str) -> bytes:
    """What replaces a secret of ``kind``: ``[REDACTED:kind]``."""
    return f"[REDACTED:{kind}]".encode()


def _random_looking(token: bytes) -> bool:
    """A key has letters and digits mixed; ``sk-learn-is-a-python-library`` has no digit."""
    body = token.replace(b"-", b"").replace(b"_", b"")
    return (
        len(body) >= 20
        and any(48 <= c <= 57 for c in body)
        and any(65 <= c <= 90 or 97 <= c <= 122 for c in body)
    )


@dataclass(frozen=True)
class _Rule:
    """One kind of secret: patterns that each begin with a literal (``re`` finds a literal
    prefix fast; a pattern that begins with a class or an assertion is tried at every byte)."""

    kind: str
    patterns: tuple[tuple[bytes, re.Pattern[bytes]], ...]
    #: The group that is the secret (the rest of the match is kept).
    group: int = 0
    #: The match must not continue a longer token on its left.
    boundary: bool = True
    check: Callable[[bytes], bool] | None = None


def _rule(kind: str, prefixes: list[str], rest: bytes, **kw: Any) -> _Rule:
    pats = tuple((p.encode(), re.compile(re.escape(p.encode()) + rest)) for p in prefixes)
    return _Rule(kind, pats, **kw)


_TOKEN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_E = rb"(?![A-Za-z0-9_\-])"  # not followed by more of a longer token

_RULES = [
    _rule(
        "private_key",
        ["-----BEGIN "],
        rb"((?:[A-Z0-9]+ )*)PRIVATE KEY-----[^\"]*?-----END \1PRIVATE KEY-----",
        boundary=False,
    ),
    _rule("anthropic_api_key", ["sk-ant-"], rb"[A-Za-z0-9_\-]{20,}" + _E),
    _rule(
        "openai_api_key",
        ["sk-"],
        rb"(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}" + _E,
        check=_random_looking,
    ),
    _rule("aws_access_key_id", ["AKIA", "ASIA", "ABIA", "ACCA"], rb"[A-Z0-9]{16}(?![A-Z0-9])"),
    _rule(
        "aws_secret_access_key",
        [
            "aws_secret_access_key",
            "AWS_SECRET_ACCESS_KEY",
            "aws_secret_key",
            "AWS_SECRET_KEY",
            "secret_access_key",
            "SecretAccessKey",
            "aws-secret-access-key",
        ],
        rb"[:= \"'\\]{1,8}([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        group=1,
        boundary=False,
    ),
    _rule("github_token", ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], rb"[A-Za-z0-9]{36,}" + _E),
    _rule("github_token", ["github_pat_"], rb"[A-Za-z0-9_]{50,}" + _E),
    _rule("slack_token", ["xox"], rb"[abposr]-[A-Za-z0-9\-]{10,}" + _E),
    _rule("google_api_key", ["AIza"], rb"[0-9A-Za-z_\-]{35}" + _E),
    _rule(
        "stripe_key",
        ["sk_live_", "sk_test_", "rk_live_", "rk_test_"],
        rb"[0-9A-Za-z]{16,}" + _E,
    ),
    _rule(
        "bearer_token",
        ["Bearer", "bearer", "BEARER"],
        rb" +([A-Za-z0-9._~+/=\-]{16,})",
        group=1,
    ),
    _rule(
        "basic_auth",
        ["Authorization", "authorization", "AUTHORIZATION"],
        rb"[:= \"'\\]{1,8}(?:Basic|basic|BASIC) +([A-Za-z0-9+/=]{8,})",
        group=1,
    ),
    _rule(
        "url_password",
        ["://"],
        rb"[^\x00-\x20:/@\"\\]+:([^\x00-\x20:/@\"\\]+)@",
        group=1,
        boundary=False,
    ),
]

KINDS: tuple[str, ...] = tuple(dict.fromkeys(r.kind for r in _RULES))
#: Every pattern's literal beginning: a line in which none occurs holds no secret shape.
_PREFIXES: tuple[bytes, ...] = tuple(dict.fromkeys(p for r in _RULES for p, _ in r.patterns))
_POSITION = {p: i for i, p in enumerate(_PREFIXES)}


class _Finder:
    """Finds the patterns' beginnings in one pass over the text, whatever their number.

    Two Aho-Corasick automata (``ahocorasick_rs``; built on first use): a leftmost-first
    one answers "is any of them here" at a fraction of a byte's time each; on the rare line
    where one is, an overlapping one says which, so only their patterns run.
    """

    def __init__(self) -> None:
        import ahocorasick_rs as ac

        prefixes = list(_PREFIXES)
        dfa = ac.Implementation.DFA
        self.first: Callable[[Any], list[Any]] = ac.BytesAhoCorasick(
            prefixes, matchkind=ac.MATCHKIND_LEFTMOST_FIRST, implementation=dfa
        ).find_matches_as_indexes
        every = ac.BytesAhoCorasick(prefixes, implementation=dfa)
        self.every: Callable[..., list[tuple[int, int, int]]] = every.find_matches_as_indexes


_finder: list[_Finder] = []


def _find() -> _Finder:
    if not _finder:
        _finder.append(_Finder())
    return _finder[0]


def secret_finder() -> Callable[[Any], list[Any]]:
    """What :func:`might_hold_secret` calls: a non-empty list when ``data`` holds the
    beginning of a secret shape (for a caller that asks for every line it writes)."""
    return _find().first


def might_hold_secret(data: bytes | memoryview) -> bool:
    """Whether ``data`` holds the beginning of any secret shape (most text holds none):
    when not, :func:`redact_bytes` gives it back unchanged."""
    return bool((_finder[0] if _finder else _find()).first(data))


def _escape_starts(data: bytes, pos: int) -> bool:
    """``data[pos]`` is a backslash that starts an escape (an odd run of them ends there)."""
    n = 0
    while pos >= 0 and data[pos] == 0x5C:
        n += 1
        pos -= 1
    return n % 2 == 1


_HEX = frozenset(b"0123456789abcdefABCDEF")


def _continues_token(data: bytes, start: int) -> bool:
    """Whether the byte before ``start`` is part of a token; not when it ends a JSON escape
    (``\\n``, ``\\u0001``), which stands for a separator in the text."""
    if start == 0 or data[start - 1] not in _TOKEN:
        return False
    if start >= 2 and data[start - 1] in b"nrtbf" and _escape_starts(data, start - 2):
        return False
    return not (
        start >= 6
        and data[start - 5] == 0x75  # u
        and all(c in _HEX for c in data[start - 4 : start])
        and _escape_starts(data, start - 6)
    )


def _apply(rule: _Rule, pattern: re.Pattern[bytes], data: bytes, found: Counter[str]) -> bytes:
    def sub(m: re.Match[bytes]) -> bytes:
        whole = m.group(0)
        if rule.boundary and _continues_token(data, m.start()):
            return whole
        secret = m.group(rule.group)
        if secret.startswith(b"[REDACTED:") or (rule.check and not rule.check(secret)):
            return whole
        found[rule.kind] += 1
        if rule.group == 0:
            return marker(rule.kind)
        start, end = m.start(rule.group) - m.start(), m.end(rule.group) - m.start()
        return whole[:start] + marker(rule.kind) + whole[end:]

    return pattern.sub(sub, data)


def redact_bytes(data: bytes, found: Counter[str] | None = None) -> bytes:
    """``data`` (UTF-8 text or JSON) with every secret shape replaced by its marker.

    Args:
        data: The text.
        found: Counts what was replaced, by kind (optional).
    """
    finder = _finder[0] if _finder else _find()
    if not finder.first(data):
        return data
    counts: Counter[str] = found if found is not None else Counter()
    present = {i for i, _, _ in finder.every(data, overlapping=True)}
    for rule in _RULES:
        for prefix, pattern in rule.patterns:
            if _POSITION[prefix] in present:
                data = _apply(rule, pattern, data, counts)
    return data


def redact_text(text: str, found: Counter[str] | None = None) -> str:
    """:func:`redact_bytes` for a ``str``."""
    return redact_bytes(text.encode("utf-8", "surrogatepass"), found).decode(
        "utf-8", "surrogatepass"
    )
