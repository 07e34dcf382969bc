"""Scrubbing credentials out of text a provider passes on (error messages).

An error body may echo what was sent, whole or cut short (``"invalid x-api-key:
sk-ant-api03-AbCd…"``). Every run of at least :data:`MIN_RUN` characters that also occurs in
a credential is replaced by ``***``: long enough that ordinary words never match, short enough
that a key cut to its first 24 (or 12) characters is caught.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["MIN_RUN", "scrub_secrets"]

#: The shortest run of a credential's characters that is scrubbed.
MIN_RUN = 10


def _spans(text: str, secret: str, k: int) -> list[tuple[int, int]]:
    grams = {secret[i : i + k] for i in range(len(secret) - k + 1)}
    spans: list[tuple[int, int]] = []
    i = 0
    while i <= len(text) - k:
        if text[i : i + k] in grams:
            end = i + k
            while end < len(text) and text[i : end + 1] in secret:
                end += 1
            spans.append((i, end))
            i = end
        else:
            i += 1
    return spans


def scrub_secrets(text: str, secrets: Iterable[str | None], min_run: int = MIN_RUN) -> str:
    """``text`` with every run of ``min_run`` or more characters of a secret replaced."""
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        if secret and len(secret) >= min_run:
            spans += _spans(text, secret, min_run)
    if not spans:
        return text
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:  # overlapping or touching: one run
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out: list[str] = []
    pos = 0
    for start, end in merged:
        out += [text[pos:start], "***"]
        pos = end
    out.append(text[pos:])
    return "".join(out)
