"""The redaction corpus: every shape that once leaked, and one sample per pattern of the
rule files (detect-secrets 1.5.0's and regista's own), in plain text and in JSON lines; and
the look-alikes that must survive."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest
from builders import answer, tool_use
from redact_corpus import BY_RULE, ISSUE_SHAPES, LOOK_ALIKES

from regista import Agent, replay, tool
from regista.cli.main import main
from regista.loop import FakeClock
from regista.providers import ScriptedProvider
from regista.redact import _RULES, KINDS, redact_bytes, redact_text


def _check(text: str, kind: str, secret: str) -> None:
    found: Counter[str] = Counter()
    out = redact_text(f"before {text} after", found)
    assert secret not in out, (kind, out)
    assert f"[REDACTED:{kind}]" in out, (kind, out, found)
    assert (out.startswith("before ") and out.endswith(" after")) or kind == "private_key"
    assert redact_text(out) == out  # idempotent
    # in a JSON line, as the writer sees it: the line still parses, the secret is gone
    line = orjson.dumps({"type": "tool.result", "content": f"before {text} after"})
    red = redact_bytes(line)
    assert secret.encode() not in red
    assert orjson.loads(red)["type"] == "tool.result"


@pytest.mark.parametrize(("text", "kind", "secret"), ISSUE_SHAPES)
def test_the_shapes_that_leaked_are_redacted(text: str, kind: str, secret: str) -> None:
    _check(text, kind, secret)


@pytest.mark.parametrize("rule", sorted(BY_RULE))
def test_every_pattern_of_the_rule_files_redacts_its_sample(rule: str) -> None:
    _check(*BY_RULE[rule])


def test_every_pattern_has_a_sample_and_every_kind_a_case() -> None:
    """A new rule file (another detect-secrets version) brings its patterns: each needs one."""
    assert {r.origin for r in _RULES} == set(BY_RULE)
    assert set(KINDS) == {kind for _, kind, _ in BY_RULE.values()}


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_survive(text: str) -> None:
    assert redact_text(text) == text
    line = orjson.dumps({"content": text})
    assert redact_bytes(line) == line


def test_the_rule_file_is_detect_secrets_as_pinned() -> None:
    """The vendored file is what the pinned detect-secrets gives (when it is installed)."""
    pytest.importorskip("detect_secrets")
    from importlib.resources import files

    from regista.secret_rules._vendor import build

    vendored = orjson.loads(
        files("regista.secret_rules").joinpath("detect_secrets-1.5.0.json").read_bytes()
    )
    assert vendored == build()


def _leaky_agent(folder: Path, *, redact: bool) -> Agent:
    leaked = "\n".join(text for text, _, _ in ISSUE_SHAPES)

    @tool
    def read_files(path: str) -> str:
        """Reads the files of a folder."""
        return leaked

    script = [
        answer(tool_use("toolu_1", "read_files", path="~/.config"), text="Looking."),
        answer(text="Found them."),
    ]
    return Agent(
        tools=[read_files],
        provider=ScriptedProvider(script),
        trace_dir=folder,
        clock=FakeClock(),
        redact=redact,
    )


async def test_the_writer_and_regista_redact_agree_on_every_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As written (the writer's one-pass prefilter) and afterwards (``regista redact``):
    the same rules, every shape gone, and the copy replays."""
    written = (await _leaky_agent(tmp_path / "a", redact=True).run("Check")).trace_path
    plain = (await _leaky_agent(tmp_path / "b", redact=False).run("Check")).trace_path
    assert main(["redact", str(plain)]) == 0
    said = capsys.readouterr().out
    assert "no secrets found" not in said
    copy = plain.with_name(plain.stem + ".redacted.jsonl")
    for _, kind, secret in ISSUE_SHAPES:
        assert secret not in written.read_text() and secret not in copy.read_text(), kind
        assert kind in said
    assert (await replay(copy, trace_dir=tmp_path / "r")).stop_reason == "end_turn"
    assert (await replay(written, trace_dir=tmp_path / "w")).stop_reason == "end_turn"
