"""What coding-agent harnesses put in user messages that the person did not type.

Claude Code wraps its context in ``<system-reminder>`` blocks; Codex sends its environment
(``<environment_context>``: working folder, shell, date), the project's AGENTS.md
(``# AGENTS.md instructions for DIR`` then ``<INSTRUCTIONS>``, or ``<user_instructions>`` in
older versions) and other notes as user messages of their own. Claude Code also writes, as
user lines, the output of a local command (``<local-command-stdout>``, its stderr and caveat)
or of a ``!`` shell command (``<bash-stdout>``, ``<bash-stderr>``), and ``[Request
interrupted by user]`` when the person stops an answer. A run's task is what the person
asked, and a turn is what the person typed, so the views that show them leave these out.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["asked", "is_note", "typed"]

_TAGS = (
    "system-reminder",
    "environment_context",
    "user_instructions",
    "INSTRUCTIONS",
    "user_shell_command",
    "turn_aborted",
    "skill",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "bash-stdout",
    "bash-stderr",
)
# The attributes stop at the next ``<``: a tag left open then costs one scan, not one per
# character of the text after it.
_BLOCK = re.compile(
    r"<(?P<tag>" + "|".join(_TAGS) + r")(?:\s[^<>]*)?>.*?(?:</(?P=tag)>|\Z)", re.DOTALL
)
#: Codex's header before the AGENTS.md text it sends.
_AGENTS_HEADER = re.compile(r"^\s*# AGENTS\.md instructions for [^\n]*\n?", re.MULTILINE)
#: Claude Code's marks of an answer the person stopped (the whole text).
_INTERRUPTED = re.compile(r"\s*\[Request interrupted by user[^\]\n]*\]\s*")


def asked(text: str) -> str:
    """``text`` without the harness's notes (empty when it holds nothing else)."""
    if _INTERRUPTED.fullmatch(text):
        return ""
    if "<" not in text and "AGENTS.md" not in text:
        return text.strip()
    return _AGENTS_HEADER.sub("", _BLOCK.sub("", text)).strip()


def is_note(text: str) -> bool:
    """Whether ``text`` holds only harness notes (nothing the person typed)."""
    return bool(text.strip()) and not asked(text)


def typed(message: Any) -> bool:
    """Whether a user message holds text the person typed: not only tool results, harness
    notes or a stopped answer's mark. A turn is one such message."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return False
    content = message.get("content")
    if isinstance(content, str):
        return bool(asked(content))
    if not isinstance(content, list):
        return False
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str) and asked(text):
                return True
    return False
