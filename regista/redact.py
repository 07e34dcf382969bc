"""Secrets out of traces: secret shapes replaced, as they are written, by a marker.

A tool that prints an environment, a model that echoes a key, a URL with a password: each
would put a secret in a trace that is then shared, committed as a tape or exported. By
default the trace writer replaces every secret shape by ``[REDACTED:<kind>]``
(``Agent(redact=False)`` turns it off). ``regista redact`` cleans a trace with the same rules.

The shapes are data (:mod:`regista.secret_rules`): detect-secrets' patterns (version 1.5.0,
Apache-2.0), then regista's own for the shapes it does not ship. Each pattern comes with
its literal ``keywords``: a pattern can match only where one of them is.

Redaction works on the JSON text of each line, and the request hash is computed over the
request's canonical JSON redacted the same way, always (whatever ``redact`` says). So the
hash is over what is written: a replay of a redacted trace rebuilds requests from redacted
text, and their hashes are the recorded ones. A secret never holds ``"`` (it stays inside
one JSON string) and a match whose context crosses from one JSON value into another is not
taken, so redacting a value and then encoding it gives the same bytes as encoding it and
then redacting.

A line is searched once for the keywords of all the patterns together; only the patterns
whose keywords occur in it run, and a line with none comes back as it was.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
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
    """One pattern of a rule file: where it can be (``patterns``: each keyword with the
    compiled pattern), which group is the secret, and how the secret's ends are found."""

    kind: str
    patterns: tuple[tuple[bytes, re.Pattern[bytes]], ...]
    #: The group that is the secret (the rest of the match is kept).
    group: int = 0
    #: The secret must not continue a longer token on its left.
    boundary: bool = True
    check: Callable[[bytes], bool] | None = None
    #: A block (a private key): the secret runs to its ``-----END …-----`` line, or to the
    #: end of the JSON string when it was cut before it.
    block: bool = False
    #: The bytes a token goes on with past the match (the pattern may stop short of its end).
    more: frozenset[int] = frozenset()
    #: Where the rule comes from (``detect-secrets/AWSKeyDetector/0``, ``regista/npm``).
    origin: str = ""
    #: How many bytes a match may begin before its keyword (``-1``: anywhere before it; the
    #: pattern is then searched for in the whole text, as for a rare keyword it can be).
    lead: int = 0


def _mixed(token: bytes) -> bool:
    """At least two of upper case, lower case and digits (a key, not a word)."""
    return (
        sum(
            (
                any(65 <= c <= 90 for c in token),
                any(97 <= c <= 122 for c in token),
                any(48 <= c <= 57 for c in token),
            )
        )
        >= 2
    )


_CHECKS: dict[str, Callable[[bytes], bool]] = {"random": _random_looking, "mixed": _mixed}
_TOKEN = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

#: The rule files, in the order they apply (regista's own first: they take the longer
#: shapes, such as a whole private key block, before detect-secrets' take a part of them).
RULE_FILES = ("regista.json", "detect_secrets-1.5.0.json")


def _variants(keyword: str, ignorecase: bool) -> list[str]:
    """A keyword as a case-insensitive pattern is found by: a short lower-case one in lower
    and upper case (``aws``, ``AWS``: the spellings text uses; every casing would be many
    more keywords, and the one-pass search slows with each, measured in
    bench/bench_redact.py); others as the rule file writes them."""
    if not ignorecase or keyword != keyword.lower() or len(keyword) > 4:
        return [keyword]  # a keyword's own casing is kept; so is a long one's (as written)
    return list(dict.fromkeys([keyword.lower(), keyword.upper()]))


def _load_rules() -> list[_Rule]:
    from importlib.resources import files

    import orjson

    folder = files("regista.secret_rules")
    rules = []
    for name in RULE_FILES:
        doc = orjson.loads(folder.joinpath(name).read_bytes())
        for r in doc["rules"]:
            flags = re.IGNORECASE if "IGNORECASE" in r.get("flags", ()) else 0
            compiled = re.compile(r.get("json_regex", r["regex"]).encode(), flags)
            keywords = [
                k.encode()
                for kw in r["keywords"]
                for k in _variants(kw, bool(flags & re.IGNORECASE))
            ]
            block = bool(r.get("block"))
            rules.append(
                _Rule(
                    kind=r["kind"],
                    patterns=tuple((k, compiled) for k in dict.fromkeys(keywords)),
                    group=int(r.get("group", 0)),
                    boundary=bool(r.get("boundary", not block)),
                    check=_CHECKS[r["check"]] if r.get("check") else None,
                    block=block,
                    more=frozenset(_TOKEN | frozenset(r.get("extend", "").encode()))
                    if not block
                    else frozenset(),
                    origin=f"{doc['source']}/{r['id']}",
                    lead=int(r.get("lead", 0)),
                )
            )
    return rules


_RULES = _load_rules()
KINDS: tuple[str, ...] = tuple(dict.fromkeys(r.kind for r in _RULES))
#: Every pattern's literal beginning: a line in which none occurs holds no secret shape.
_PREFIXES: tuple[bytes, ...] = tuple(dict.fromkeys(p for r in _RULES for p, _ in r.patterns))
_POSITION = {p: i for i, p in enumerate(_PREFIXES)}
#: The rules (by their index in ``_RULES``) each keyword (by its index) may find.
_RULES_OF: tuple[tuple[int, ...], ...] = tuple(
    tuple(r for r, rule in enumerate(_RULES) if any(k == p for k, _ in rule.patterns))
    for p in _PREFIXES
)


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


#: Bytes a secret's match may carry at its ends that are not the secret (detect-secrets'
#: patterns take the delimiter before and after a token).
_EDGES = frozenset(b" =:\"'")
#: A token ends where a JSON string's quote, an escape or white space begins.
_TOKEN_END = re.compile(rb'["\\\s]')
#: A block's end: its END line, or the end of the JSON string (an unescaped quote).
_BLOCK_END = re.compile(rb'-{4,5} ?END [A-Z0-9 ]*-{4,5}|"')
#: Context that leaves one JSON value for the next (``","``, ``"}``, ``["`` …).
_CROSSING = re.compile(rb'(?<!\\)"\s*[,\]}]|[,\[{]\s*"')
#: The shortest secret a token rule takes.
_SHORTEST = 8


def _secret_span(rule: _Rule, m: re.Match[bytes], data: bytes) -> tuple[int, int] | None:
    """Where the secret of match ``m`` is in ``data`` (``None``: not a secret after all)."""
    start, end = m.span(rule.group) if m.group(rule.group) is not None else m.span()
    if rule.block:
        for stop in _BLOCK_END.finditer(data, end):
            if stop.group(0) != b'"':
                end = stop.end()
                break
            if not _escape_starts(data, stop.start() - 1):  # the string's closing quote
                end = stop.start()
                break
        else:
            end = len(data)
        return (start, end) if end > start else None
    while start < end and data[start] in _EDGES:
        start += 1
    cut = _TOKEN_END.search(data, start, end)
    if cut is not None:
        end = cut.start()
    more, size = rule.more, len(data)
    while end < size and data[end] in more:
        end += 1
    if end - start < _SHORTEST:
        return None
    return start, end


def _matches(
    rule: _Rule, pattern: re.Pattern[bytes], data: bytes, at: list[int] | None
) -> Iterator[re.Match[bytes]]:
    """The matches of ``pattern``: all of them (``at`` is ``None``, or the rule's keyword
    can be anywhere in a match), else those that begin at most ``rule.lead`` bytes before
    one of the keyword positions ``at`` (a match is tried there, never searched for: a long
    line with many keywords costs a try at each, not a scan of the line from each)."""
    if at is None or rule.lead < 0:
        yield from pattern.finditer(data)
        return
    match, lead, after = pattern.match, rule.lead, -1
    for p in at:
        for start in range(max(p - lead, after, 0), p + 1):
            m = match(data, start)
            if m is not None:
                after = m.end()
                yield m
                break


def _apply(
    rule: _Rule,
    pattern: re.Pattern[bytes],
    data: bytes,
    found: Counter[str],
    at: list[int] | None = None,
) -> bytes:
    """``data`` with every secret ``pattern`` finds replaced by ``rule``'s marker
    (``at``: where its keywords are, when known)."""
    out: list[bytes] = []
    pos = 0
    for m in _matches(rule, pattern, data, at):
        if m.start() < pos:
            continue  # inside a secret already replaced
        span = _secret_span(rule, m, data)
        if span is None:
            continue
        start, end = span
        secret = data[start:end]
        if (
            secret.startswith(b"[REDACTED:")
            or (rule.boundary and _continues_token(data, start))
            or (rule.check is not None and not rule.check(secret))
            or _CROSSING.search(data, m.start(), start) is not None
        ):
            continue
        found[rule.kind] += 1
        out.append(data[pos:start])
        out.append(marker(rule.kind))
        pos = end
    if not out:
        return data
    out.append(data[pos:])
    return b"".join(out)


#: The longest keyword: an occurrence hidden by a leftmost-first match starts inside it.
_LONGEST = max(map(len, _PREFIXES))


def _hits(
    finder: _Finder, data: bytes, first: list[Any] | None = None
) -> list[tuple[int, int, int]]:
    """Every keyword occurrence in ``data``, overlapping ones included.

    The leftmost-first search (many times faster on long text: it skips with SIMD) reports
    some of them; any other starts inside one it reports, so only those few bytes are
    searched again for all of them.
    """
    if first is None:
        first = finder.first(data)
    if not first:
        return []
    every = finder.every
    out: list[tuple[int, int, int]] = []
    for _, start, end in first:
        out.extend(
            (i, start + s, start + e)
            for i, s, e in every(data[start : end + _LONGEST - 1], overlapping=True)
            if s < end - start
        )
    return out


def redact_bytes(
    data: bytes, found: Counter[str] | None = None, *, first: list[Any] | None = None
) -> bytes:
    """``data`` (UTF-8 text or JSON) with every secret shape replaced by its marker.

    Args:
        data: The text.
        found: Counts what was replaced, by kind (optional).
        first: What :func:`secret_finder`'s search gave for ``data``, when the caller has
            it already (the writer asks it of every line: the search is not made twice).
    """
    finder = _finder[0] if _finder else _find()
    hits = _hits(finder, data, first)
    if not hits:
        return data
    counts: Counter[str] = found if found is not None else Counter()
    rules_of, after = _RULES_OF, 0
    while True:
        where: dict[int, list[int]] = {}
        for i, start, _ in hits:
            for r in rules_of[i]:
                if r >= after:
                    where.setdefault(r, []).append(start)
        for r in sorted(where):  # in the rules' order
            rule = _RULES[r]
            done = _apply(rule, rule.patterns[0][1], data, counts, sorted(set(where[r])))
            if done is not data:  # the text moved: find the keywords again, for the rest
                data, after = done, r + 1
                hits = _hits(finder, data)
                break
        else:
            return data


def redact_text(text: str, found: Counter[str] | None = None) -> str:
    """:func:`redact_bytes` for a ``str``: the text is redacted as a JSON string holds it
    (the writer's view), so a text and its JSON line always lose the same secrets."""
    import json

    return str(
        json.loads(
            redact_bytes(
                json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass"), found
            )
        )
    )
