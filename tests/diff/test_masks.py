"""Masks: the volatile parts of a client's requests, masked in the strict digest and shown as
``masked`` in a diff; built in for Claude Code and Codex, more from a TOML mask file."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from client_requests import claude_code_request, codex_input

from regista.diff.masks import (
    BUILTIN_MASKS,
    DEFAULT_MASK_FILE,
    Mask,
    MaskFileError,
    MaskSet,
    load_mask_file,
    mask_set,
    parse_masks,
)
from regista.wire.shapes import masked_form, sdk_digest

BUILTIN = MaskSet(BUILTIN_MASKS, ["built-in"])


def test_claude_code_on_another_day_in_another_folder_has_the_same_digest() -> None:
    a = claude_code_request()
    b = claude_code_request(date="2026-12-01", cwd="/tmp/elsewhere")
    assert sdk_digest(*a) != sdk_digest(*b)
    assert sdk_digest(*a, BUILTIN) == sdk_digest(*b, BUILTIN)
    # without a hit, a masked digest is the plain one (recordings made before stay valid)
    plain = ("You are a weather bot.", [{"role": "user", "content": "Weather in Paris?"}])
    assert sdk_digest(*plain, BUILTIN) == sdk_digest(*plain)


def test_only_the_volatile_span_is_masked() -> None:
    a = claude_code_request()
    form, hits = masked_form(*a, BUILTIN)
    assert "Primary working directory: «masked:cc-cwd»\n" in form["system"]
    assert "Today's date is «masked:cc-date»." in form["messages"][0]["content"][0]["text"]
    assert {h.mask: h.value for h in hits}["cc-date"] == "2026-11-30"
    # a real change anywhere else still changes the digest: the task, the words around a
    # span, the model line of the environment block
    for other in (
        claude_code_request(task="fix the other bug"),
        (a[0].replace("Opus 4.8", "Opus 4.7"), a[1]),
        (a[0].replace("Primary working directory", "Working directory"), a[1]),
        (a[0], [{**a[1][0], "content": [a[1][0]["content"][0]]}]),
    ):
        assert sdk_digest(*other, BUILTIN) != sdk_digest(*a, BUILTIN)


def test_the_agent_sdk_environment_block_in_a_message_is_masked() -> None:
    """A program on the Claude Agent SDK with its own system prompt: Claude Code sends its
    environment block as a message."""
    system, _ = claude_code_request()
    env = system[system.index("# Environment") :]

    def messages(cwd: str, date: str = "2026-11-30") -> list[dict[str, Any]]:
        text = env.replace("/home/ann/shop", cwd) + f"\n\nToday's date is {date}."
        return [
            {"role": "system", "content": text},
            {"role": "user", "content": "fix the bug"},
        ]

    mine = "You are my agent."
    other = messages("/b", "2026-12-24")
    assert sdk_digest(mine, messages("/a"), BUILTIN) == sdk_digest(mine, other, BUILTIN)
    assert sdk_digest(mine, messages("/a")) != sdk_digest(mine, other)


def test_a_date_typed_by_the_user_is_not_masked() -> None:
    system, messages = claude_code_request(task="Today's date is 2026-11-30. What day is it?")
    _, other = claude_code_request(task="Today's date is 2026-12-25. What day is it?")
    assert sdk_digest(system, messages, BUILTIN) != sdk_digest(system, other, BUILTIN)


def test_codex_environment() -> None:
    a = codex_input()
    b = codex_input(cwd="/tmp/other", date="2026-12-01")
    assert sdk_digest(None, a, BUILTIN) == sdk_digest(None, b, BUILTIN)
    # <cwd> outside the environment message is the user's text, not masked
    typed = [{"role": "user", "content": "<cwd>/a</cwd>"}]
    typed_b = [{"role": "user", "content": "<cwd>/b</cwd>"}]
    assert sdk_digest(None, typed, BUILTIN) != sdk_digest(None, typed_b, BUILTIN)
    # the task is not
    task = [a[0], {"role": "user", "content": [{"type": "text", "text": "say bye"}]}]
    assert sdk_digest(None, task, BUILTIN) != sdk_digest(None, a, BUILTIN)


def test_codex_command_output_keeps_its_exit_code_and_output() -> None:
    def result(head: str, tail: str = "Process exited with code 0\nOutput:\nhello\n") -> Any:
        block = {"type": "tool_result", "tool_use_id": "call_1", "content": head + tail}
        return [{"role": "user", "content": [block]}]

    a = result("Chunk ID: 649a43\nWall time: 0.0306 seconds\n")
    b = result("Chunk ID: a414f7\nWall time: 1.5 seconds\n")
    assert sdk_digest(None, a, BUILTIN) == sdk_digest(None, b, BUILTIN)
    for other in (
        result("Chunk ID: a414f7\nWall time: 1.5 seconds\n", "Process exited with code 1\n"),
        result(
            "Chunk ID: a414f7\nWall time: 1.5 seconds\n",
            "Process exited with code 0\nOutput:\nbye\n",
        ),
        result("Note\nChunk ID: 649a43\nWall time: 0.0306 seconds\n"),
    ):
        assert sdk_digest(None, other, BUILTIN) != sdk_digest(None, a, BUILTIN)


def test_codex_own_items_ids() -> None:
    def item(uid: str) -> list[Any]:
        tools = {"type": "additional_tools", "id": uid, "role": "developer", "tools": []}
        return [{"role": "assistant", "content": [{"type": "openai_item", "item": tools}]}]

    a = item("at_01a2340e-1f1d-74f1-90a9-640b8849cb02")
    b = item("at_01a2340e-3637-7761-9c87-afb81d4ec901")
    assert sdk_digest(None, a, BUILTIN) == sdk_digest(None, b, BUILTIN)
    # an id that is not one Codex makes by the clock (UUID v7) counts
    c = item("rs_made_by_the_provider")
    assert sdk_digest(None, c, BUILTIN) != sdk_digest(None, a, BUILTIN)


def test_path_masks_cover_every_key_and_item() -> None:
    (meta,) = [m for m in BUILTIN_MASKS if m.name == "codex-client-metadata"]
    assert meta.covers_path("$.params.client_metadata.x-codex-turn-metadata")
    assert not meta.covers_path("$.params.client_metadata")
    assert not meta.covers_path("$.params.other.x")
    masks = MaskSet([Mask("ids", "$.messages[*].meta.*", "", "test")])
    form, hits = masks.apply({"system": None, "messages": [{"meta": {"a": "1", "b-c": 2}}]})
    assert form["messages"][0]["meta"] == {"a": "«masked:ids»", "b-c": "«masked:ids»"}
    assert [h.path for h in hits] == ["messages[0].meta.a", "messages[0].meta.b-c"]


def test_masked_changes_say_masked() -> None:
    a, b = claude_code_request(), claude_code_request(date="2026-12-01", cwd="/tmp/x")
    lines = BUILTIN.masked_changes(masked_form(*a, BUILTIN)[1], masked_form(*b, BUILTIN)[1])
    assert any(
        line.startswith("messages[0].content[0].text: masked cc-date")
        and "recorded '2026-11-30', live '2026-12-01'" in line
        for line in lines
    ), lines
    assert any(line.startswith("system: masked cc-cwd") for line in lines), lines
    assert not any("cc-platform" in line for line in lines)  # the same on both sides


def test_a_user_mask_file_adds_a_mask(tmp_path: Path) -> None:
    (tmp_path / DEFAULT_MASK_FILE).write_text(
        "# our agent's build number\n[[mask]]\nname = 'build-id'\n"
        "pattern = 'Build id: (\\d+)'\nwhy = 'the agent puts its build in the prompt'\n"
        "evidence = \"step 0: '4711' then '4712'\"\n"
    )
    masks = mask_set(beside=tmp_path)
    assert masks.sources == ["built-in", str(tmp_path / DEFAULT_MASK_FILE)]
    assert masks.masks[-1].name == "build-id"
    a = ("Build id: 4711. Be nice.", [{"role": "user", "content": "hi"}])
    b = ("Build id: 4712. Be nice.", [{"role": "user", "content": "hi"}])
    assert sdk_digest(*a, masks) == sdk_digest(*b, masks)
    assert sdk_digest(*a, BUILTIN) != sdk_digest(*b, BUILTIN)
    # no file beside: the built-in set alone
    assert mask_set(beside=tmp_path / "none").sources == ["built-in"]


def test_a_path_mask_from_a_file(tmp_path: Path) -> None:
    f = tmp_path / "m.toml"
    f.write_text(
        "[[mask]]\nname = 'turn'\nwhere = '$.messages[*].metadata.turn'\npattern = ''\n"
        "why = 'a turn counter'\n"
    )
    masks = mask_set(f, builtin=False)
    a = [{"role": "user", "metadata": {"turn": 1}, "content": "hi"}]
    b = [{"role": "user", "metadata": {"turn": 7}, "content": "hi"}]
    assert sdk_digest(None, a, masks) == sdk_digest(None, b, masks)


def test_builtin_masks_round_trip_through_the_file_format(tmp_path: Path) -> None:
    text = "\n".join(m.as_toml() for m in BUILTIN_MASKS)
    again = parse_masks(text)
    assert [(m.name, m.where, m.pattern, m.why, m.client) for m in again] == [
        (m.name, m.where, m.pattern, m.why, m.client) for m in BUILTIN_MASKS
    ]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[[mask]]\nname = 'x'\npattern = '('\nwhy = 'w'\n", "mask 1 ('x'): pattern '('"),
        ("[[mask]]\nname = 'x'\npattern = 'a*'\nwhy = 'w'\n", "matches empty text"),
        ("[[mask]]\nname = 'x'\nwhy = 'w'\n", "needs 'pattern'"),
        ("[[mask]]\nname = 'x'\npattern = 'a'\nwhy = 'w'\nwhen = 1\n", "unknown key 'when'"),
        ("[[mask]]\nname = 'x'\npattern = 'a'\nwhy = 3\n", "'why' must be a string"),
        ("[[mask]]\nname = 'x'\npattern = 'a'\nwhy = 'w'\nwhere = 'params'\n", "where 'params'"),
        ("[[mask]]\nname = 'x'\npattern = 'a'\nwhy = 'w'\nwhere = '$.a[b]'\n", "JSON path"),
        ("[[mask]]\nname = 'cc-date'\npattern = 'a'\nwhy = 'w'\n", "already a built-in"),
        ("mask = 3\n", "[[mask]] tables"),
        ("[masks]\n", "unknown key 'masks'"),
        ("[[mask]\n", "not valid TOML"),
        ("[[mask]]\nname = 'x'\npattern = 'a'\nwhy = 'w'\n" * 2, "another mask is named 'x'"),
    ],
)
def test_a_malformed_mask_file_is_one_clear_error(tmp_path: Path, text: str, says: str) -> None:
    f = tmp_path / "masks.toml"
    f.write_text(text)
    with pytest.raises(MaskFileError) as info:
        mask_set(f)
    assert says in str(info.value)
    assert str(f) in str(info.value)


def test_an_unreadable_mask_file(tmp_path: Path) -> None:
    with pytest.raises(MaskFileError, match="cannot read it"):
        load_mask_file(tmp_path / "missing.toml")
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe[[mask]]")
    with pytest.raises(MaskFileError, match="not UTF-8"):
        load_mask_file(tmp_path / "bin.toml")


_GOOD = (
    "# masks\n[[mask]]\nname = 'build-id'\nwhere = 'system'\npattern = 'Build id: (\\d+)'\n"
    "why = 'the build'\nclient = 'ours'\nevidence = 'step 0'\n\n"
    "[[mask]]\nname = 'ids'\nwhere = '$.messages[*].id'\npattern = 'x[0-9]+'\nwhy = 'ids'\n"
)
_PIECES = [
    "[[mask]]", "[mask]", "name", "=", "'", '"', "\\", "(", ")", "[", "]", "*", "$", ".",
    "\n", "where", "pattern", "why", "{", "}", "1", "true", "é", "\x00", "'''", "#",
]  # fmt: skip


def test_fuzz_the_mask_file_reader() -> None:
    """Seeded mutations of a good mask file: each loads, or is one MaskFileError."""
    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "2424")))
    cases = int(os.environ.get("REGISTA_FUZZ_CASES", "400"))
    loaded = 0
    for _ in range(cases):
        text = _GOOD
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(text) + 1)
            roll = rng.random()
            if roll < 0.4:
                text = text[:i] + rng.choice(_PIECES) + text[i:]
            elif roll < 0.8:
                text = text[:i] + text[i + rng.randint(1, 6) :]
            else:
                j = rng.randrange(len(text) + 1)
                text = text[:i] + text[j : j + rng.randint(0, 30)] + text[i:]
        try:
            masks = MaskSet(parse_masks(text, "fuzz.toml"))
        except MaskFileError as exc:
            assert str(exc).startswith("mask file fuzz.toml"), exc
            continue
        loaded += 1
        for m in masks.masks:  # what loads is usable
            assert isinstance(m.regex, re.Pattern)
        masks.apply({"system": "Build id: 12", "messages": [{"id": "x1", "content": "hi"}]})
    assert 0 < loaded < cases


def test_regista_masks_lists_them_and_a_bad_file_is_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "200"}
    run = [sys.executable, "-m", "regista", "masks", "--trace-dir", str(tmp_path)]
    listed = subprocess.run(run, capture_output=True, text=True, env=env, check=False)
    assert listed.returncode == 0, listed.stderr
    assert f"{len(BUILTIN_MASKS)} masks (built-in)" in listed.stdout
    assert "cc-date" in listed.stdout and "codex-cwd" in listed.stdout
    (tmp_path / "masks.toml").write_text("[[mask]]\nname = 'x'\npattern = '('\nwhy = 'w'\n")
    bad = subprocess.run(run, capture_output=True, text=True, env=env, check=False)
    assert bad.returncode != 0
    assert "Traceback" not in bad.stderr
    assert bad.stderr.strip().count("\n") == 0 and "mask 1 ('x')" in bad.stderr
    none = subprocess.run([*run, "--no-masks"], capture_output=True, text=True, check=False)
    assert none.stdout.startswith("0 masks (none)")


def test_a_mask_needs_a_reason_and_a_good_name() -> None:
    with pytest.raises(ValueError, match="why"):
        Mask("x", "text", "a", " ")
    with pytest.raises(ValueError, match="name"):
        Mask("has space", "text", "a", "w")


_ODD: list[Any] = [None, 0, 1.5, True, "", "x", [], {}, [1, "a"], {"type": "text"}, "\x00"]


def _shape(rng: random.Random, depth: int = 0) -> Any:
    """A JSON value shaped like a request part, often odd."""
    roll = rng.random()
    if depth > 4 or roll < 0.25:
        return rng.choice([*_ODD, "# currentDate\nToday's date is 2026-11-30.", "<cwd>/a</cwd>"])
    if roll < 0.6:
        keys = ["role", "content", "text", "type", "id", "item", "tool_use_id", "meta"]
        return {rng.choice(keys): _shape(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return [_shape(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def test_fuzz_masks_apply_to_any_request_shape() -> None:
    """A request of any shape (an HTTP body is outside input) is masked without an error,
    the same way twice, and without changing the request."""
    rng = random.Random(int(os.environ.get("REGISTA_FUZZ_SEED", "2425")))
    masks = MaskSet([*BUILTIN_MASKS, Mask("meta", "$.messages[*].meta.*", "", "test")])
    for _ in range(int(os.environ.get("REGISTA_FUZZ_CASES", "400"))):
        form = {"system": _shape(rng), "messages": _shape(rng)}
        before = repr(form)
        masked, hits = masks.apply(form)
        assert repr(form) == before
        assert masks.apply(form) == (masked, hits)
        assert all(isinstance(h.value, str) for h in hits)
