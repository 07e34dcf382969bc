"""Runs like this one: the words a step is recalled by (``L`` in the browser).

A tool step is recalled by its tool name and the first words of its input's values; a model
step by the tools it asked for and the longest words of its answer. The choice is
deterministic (the same step always gives the same words) and short, so the run list can show
it and the recall's fall-back to "any of the words" stays meaningful.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from regista.engine import RunList, Step

__all__ = ["MAX_WORDS", "like_words", "runs_like"]

#: At most this many words go to the recall.
MAX_WORDS = 5
_WORD = re.compile(r"[^\W_](?:[\w\-.]*[^\W_])?")
_COMMON_WORDS = (
    "about after again also because been before could does from have here into just more "
    "need only other over should some than that their them then there these they this "
    "those through very what when where which while will with would your"
)
_COMMON = frozenset(_COMMON_WORDS.split())


def _leaves(value: Any) -> list[str]:
    """The strings and numbers inside a JSON value, in order."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in _leaves(v)]
    if isinstance(value, list):
        return [s for v in value for s in _leaves(v)]
    if isinstance(value, bool) or value is None:
        return []
    return [str(value)]


def _distinct(words: list[str], limit: int) -> list[str]:
    out: list[str] = []
    for word in words:
        if word.lower() not in (w.lower() for w in out):
            out.append(word)
    return out[:limit]


def like_words(step: Step) -> str:
    """The words to recall runs like ``step`` by; ``""`` when it has none (a compaction)."""
    if step.kind == "tool":
        call = step.tool_call
        if call is None:
            return ""
        words = [w for text in _leaves(call.input) for w in _WORD.findall(text)]
        return " ".join(_distinct([call.name, *words], MAX_WORDS))
    if step.kind != "model":
        return ""
    response = step.response_event
    content = response.response.get("content") if response is not None else None
    tools: list[str] = []
    texts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use" and isinstance(block.get("name"), str):
            tools.append(block["name"])
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    found = [w for t in texts for w in _WORD.findall(t)]
    found = [w for w in found if len(w) >= 4 and w.lower() not in _COMMON]
    # The longest words first (ties: the first said), as the most distinctive ones.
    ranked = sorted(_distinct(found, len(found)), key=lambda w: -len(w))
    return " ".join(_distinct([*tools, *ranked], MAX_WORDS))


def runs_like(path: Path, words: str, *, limit: int = 50) -> tuple[RunList, list[Any]]:
    """The runs of ``path``'s folder that dealt with ``words``, the run of ``path`` left out
    (successful first), and the folder's listing; slow (it updates the recall index): call
    it from a thread.

    Raises:
        RegistaError: The folder cannot be listed or recalled from.
    """
    from regista.engine import list_runs, recall

    folder = path.parent
    hits = recall(words, folder, limit=limit + 1)
    listing = list_runs(folder)
    here = path.resolve()
    return listing, [h for h in hits if Path(h.path).resolve() != here][:limit]
