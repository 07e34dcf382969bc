"""A Claude Code transcript is converted in one pass over its lines that keeps only what
the conversion needs across them: the conversion gives the same runs, byte for byte, as
the whole-file conversion it replaced (its digests are kept below, made with that one, for
fixtures, realistic and seeded fuzzed transcripts)."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from regista.importers import _builder, claude_code

from .cc_fixtures import (
    CCSession,
    basic_session,
    inline_subagent,
    session_with_subagent,
    text,
    tool_use,
)
from .digests import digest, print_digests, seeded_cases
from .test_fuzz import _claude_code_seed
from .test_streamed import _long_session

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from realistic_cc import transcript_lines


def _interleaved() -> CCSession:
    """An answer whose blocks are written around its tool results and far apart, a title
    naming an earlier message, inline subagents of both layouts, an error answer."""
    s = CCSession()
    s.prompt("Look at both files")
    mid = s.answer(tool_use("toolu_I1", "Read", file_path="a.py"))
    first = s.lines[-1]
    s.tool_result("toolu_I1", "a = 1")
    s.answer(tool_use("toolu_I2", "Read", file_path="b.py"))
    s.lines[-1]["message"]["id"] = mid  # the same API response, written after a result
    s.tool_result("toolu_I2", "b = 2")
    s.raw({"type": "summary", "summary": "Two files", "leafUuid": first["uuid"]})
    for _ in range(40):
        s.progress("toolu_I2")
    s.answer(text("and a late block"))
    s.lines[-1]["message"]["id"] = mid  # far from its first line
    s.answer(tool_use("toolu_T7", "Task", prompt="dig", description="d"))
    inline_subagent(s, "dig", "dug", start=80)
    inline_subagent(s, "other", "done", start=120, agent_id="feed01")
    s.tool_result("toolu_T7", [text("dug")], result={"agentId": "feed01"})
    s.answer(text("API Error: overloaded"))
    s.lines[-1]["isApiErrorMessage"] = True
    s.answer(text("Done."), stop_reason="end_turn")
    return s


def _realistic(seed: int) -> bytes:
    return b"\n".join(transcript_lines(0.4, seed)) + b"\n"


def _cases(root: Path) -> dict[str, Callable[[], Path]]:
    seeds = {
        "basic": basic_session().data(),
        "fuzz-seed": _claude_code_seed(),
        "long": _long_session().data(),
        "interleaved": _interleaved().data(),
        "realistic-1": _realistic(1),
        "realistic-2": _realistic(2),
    }
    rng = random.Random("regista-bounded")
    mutated = ("basic", "fuzz-seed", "interleaved")
    cases = seeded_cases(root, "s.jsonl", seeds, mutated, rng)
    cases["subagent-file"] = lambda: session_with_subagent(root / "subagent-file")
    return cases


EXPECTED: dict[str, str] = {
    "basic": "c48bc2fa2e4c11e7ccd8",
    "fuzz-seed": "db4e5ab23334c7b2594b",
    "long": "968d370f94254730f4a4",
    "interleaved": "eefe4f0ac0f36c638f3e",
    "realistic-1": "6b12e136063668b1c1f3",
    "realistic-2": "c5d8ae37a689395ad9e4",
    "subagent-file": "2b9100bffdf17c41fa88",
    "basic~0": "bb0562c9ce0a5a4140db",
    "basic~1": "fe023d05624264df6e8c",
    "basic~2": "7b4d9a2aadd78559c7ba",
    "basic~3": "e057e900efc705717ad8",
    "basic~4": "00075ec073a0de853d48",
    "basic~5": "1ed5df304148f37516ab",
    "basic~6": "46e3dbd5fa16f33aa70d",
    "basic~7": "4f69976e59e3ad8feff8",
    "basic~8": "885b8e68ff16d9a5ce0f",
    "basic~9": "dc50802d4ffdb5e897b5",
    "basic~10": "a01c3bb2991782960cd9",
    "basic~11": "8198ffea29915ca4c3ea",
    "basic~12": "9540d3ac807f59591845",
    "basic~13": "23a4c9f560f1c49b2ff8",
    "basic~14": "940243674835e16e82e0",
    "basic~15": "7398d4d7ab003e5e572e",
    "basic~16": "9a4cec560cf3edcc7c71",
    "basic~17": "13236b4043d00789b5bb",
    "basic~18": "f2e90409a6b4cfbb11d5",
    "basic~19": "78d01147fa47afa346e7",
    "basic~20": "c18fc991808fc7333d0c",
    "basic~21": "9662be5a51f0548d0c81",
    "basic~22": "c1d271955f4ef6e80cba",
    "basic~23": "fe76f83ccb3a0193fa98",
    "basic~24": "60f297b6ff556c8b40b6",
    "fuzz-seed~0": "c0376e9a1a61f01b1218",
    "fuzz-seed~1": "817fa3d260e216f9feb6",
    "fuzz-seed~2": "5665b58100c3efcd0ea3",
    "fuzz-seed~3": "29664e845396026b5656",
    "fuzz-seed~4": "807806a02c4e90b667ca",
    "fuzz-seed~5": "7807a431b962a9db434f",
    "fuzz-seed~6": "9400d4772a74b090db00",
    "fuzz-seed~7": "5154b648cb78e357db5b",
    "fuzz-seed~8": "2b2435e25f254b68d75c",
    "fuzz-seed~9": "6ca402e8edab8cbc185c",
    "fuzz-seed~10": "ff63218045528f81425e",
    "fuzz-seed~11": "2b70599d6aa38f558678",
    "fuzz-seed~12": "cce03b3acb09b9d9e7b6",
    "fuzz-seed~13": "f9da8918a019674ac43e",
    "fuzz-seed~14": "7a69b5191122d58d632b",
    "fuzz-seed~15": "73d57a0bc1425a67b71d",
    "fuzz-seed~16": "67f2332488be8163d6ef",
    "fuzz-seed~17": "0eac53af967a76a2402f",
    "fuzz-seed~18": "014da369a924c6121e0f",
    "fuzz-seed~19": "722935a8af149cc35674",
    "fuzz-seed~20": "fb8f98865c017a2b1fc3",
    "fuzz-seed~21": "8b3f3fd9c1152567c3d6",
    "fuzz-seed~22": "4ea8b981cfc8ee8406d0",
    "fuzz-seed~23": "2ed56c3be2bc227325ee",
    "fuzz-seed~24": "275dca04e4813f47f60b",
    "interleaved~0": "c314a5c557cc7463b7c4",
    "interleaved~1": "638700242a45e93a075b",
    "interleaved~2": "45a1aee659dcba78f04b",
    "interleaved~3": "7c74ef07476bfb59b8f7",
    "interleaved~4": "9ceaf609b6c373ef53a6",
    "interleaved~5": "c91590a4dc8724f7804c",
    "interleaved~6": "74b769d33c9392a32b14",
    "interleaved~7": "c28ff238081e701aa7dd",
    "interleaved~8": "0290671f4153d1bd1bcf",
    "interleaved~9": "c31851a9615932f57c9a",
    "interleaved~10": "b3cae89029458bb6bf97",
    "interleaved~11": "0084b3f2cc0ee3a7d8c2",
    "interleaved~12": "ce0969997450e8bc25d3",
    "interleaved~13": "65b1f2e753713d4e1f97",
    "interleaved~14": "949688f43d9a9cbddee2",
    "interleaved~15": "5cf32600589d38cb1f92",
    "interleaved~16": "d01e4b2afe925ebd0e6b",
    "interleaved~17": "f9265a8f11b60678ab78",
    "interleaved~18": "59b16ea11fdbd7cf14c1",
    "interleaved~19": "ad2a5ff2a90957d8bd95",
    "interleaved~20": "2398adf4f5f5e6e4807a",
    "interleaved~21": "a37d1b8b24eae16e5061",
    "interleaved~22": "9db3a905367d60831074",
    "interleaved~23": "0403bc2131d1a5783be4",
    "interleaved~24": "fafd80d88288ce96371e",
}


@pytest.mark.parametrize("small", [False, True], ids=["default", "small-windows"])
def test_conversions_are_those_of_the_whole_file_conversion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small: bool
) -> None:
    if small:  # answers' lines looked for again with a wider window; conversations spilled
        monkeypatch.setattr(claude_code, "_WINDOW", 1)
        monkeypatch.setattr(_builder, "_MESSAGES_IN_MEMORY", 2000)
        monkeypatch.setattr(_builder, "_REFERRED_KEPT", 1)
    got = {name: digest("claude-code", make(), tmp_path) for name, make in _cases(tmp_path).items()}
    assert got == EXPECTED


if __name__ == "__main__":  # print the digests (after a deliberate change of the output)
    print_digests("claude-code", _cases)
