"""Seeded fuzz: telling a harness's notes from what a person typed (``regista.harness_notes``),
on any text a client sends: it always answers, in time linear in the text."""

from __future__ import annotations

import random
import time

from mutate import base_seed, iterations

from regista.harness_notes import asked, is_note

_PIECES = [
    "<environment_context>",
    "</environment_context>",
    "<system-reminder>",
    "</system-reminder>",
    "<skill a",
    "<skill name='x'>",
    "</skill>",
    "<INSTRUCTIONS>",
    "</INSTRUCTIONS>",
    "<user_instructions>",
    "# AGENTS.md instructions for /w\n",
    "<cwd>/w</cwd>",
    "<",
    ">",
    "\n",
    " ",
    "fix the tests",
    "a < b",
    "💥",
    "\x00",
]


def test_any_text_gets_an_answer() -> None:
    rng = random.Random(base_seed())
    for _ in range(iterations(400)):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 30)))
        said = asked(text)
        assert isinstance(said, str) and len(said) <= len(text)
        assert is_note(text) == (bool(text.strip()) and not said)
        if "<" not in text and "AGENTS.md" not in text:
            assert said == text.strip()


def test_a_tag_left_open_costs_one_scan() -> None:
    """Regression: ``<skill a`` repeated (a tag never closed) took minutes on 400 KB, each
    opening scanning to the end of the text."""
    for text in ("<skill a" * 50_000, "<environment_context>" * 20_000, "<skill " + "a" * 400_000):
        started = time.perf_counter()
        asked(text)
        assert time.perf_counter() - started < 2.0
