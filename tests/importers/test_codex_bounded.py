"""A Codex rollout is converted in two passes over its lines that keep only what the
conversion needs across them: the conversion gives the same runs, byte for byte, as the
whole-file conversion it replaced (its digests are kept below, made with that one, for
fixtures, realistic and seeded fuzzed rollouts)."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from regista.importers import _builder, _common

from .codex_fixtures import (
    CHILD,
    THREAD,
    basic_rollout,
    codex_0171_rollout,
    rollout_name,
    spawning_rollout,
    subagent_rollout,
)
from .digests import digest, print_digests, seeded_cases, write_case
from .fuzzing import mutate
from .test_fuzz import _codex_seed

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from realistic_codex import rollout_lines


def _late() -> bytes:
    """Counts and exit codes written after the step they complete: a token count and a
    usage record after the next input, an ``exec_command_end`` after the call's output,
    an output with no call, a second ``session_meta``."""
    r = basic_rollout()
    r.say("One more thing.")
    r.user("and the tests?")
    r.tokens(6100, 6000, 30)
    r.call("call_L", "shell", command=["pytest"])
    r.output("call_L", "Exit code: 0\nOutput:\nok")
    r.line("event_msg", {"type": "exec_command_end", "call_id": "call_L", "exit_code": 3})
    r.line("event_msg", {"type": "exec_command_end", "call_id": "call_B", "exit_code": 0})
    r.output("call_nobody", "stray")
    r.say("Done.")
    r.user("thanks")
    r.line(
        "token_usage_record",
        {"response_id": "resp_9", "usage": {"input_tokens": 9, "output_tokens": 2}},
    )
    r.lines.append(dict(r.lines[0]))  # a fork's copied history
    r.say("Bye.")
    return r.data()


def _realistic(seed: int) -> bytes:
    return b"\n".join(rollout_lines(0.4, seed)) + b"\n"


def _document(n: int = 1) -> bytes:
    """The first CLI's single document (``n`` times its exchange: past the first block
    read of the file, it is read whole)."""
    items = n * [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "function_call", "name": "shell", "arguments": '{"command":["ls"]}'},
        {"type": "function_call_output", "call_id": "call_0", "output": "a.py"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "ok"}],
        },
    ]
    session = {"timestamp": "2025-04-20T10:00:00.000Z", "id": "abc", "instructions": "Be brief."}
    return orjson.dumps({"session": session, "items": items}, option=orjson.OPT_INDENT_2)


def _bare(n: int) -> bytes:
    """The bare era's lines: a session header (its instructions longer than a first look at
    the file), then ``n`` times an exchange of bare response items."""
    header = {"id": "abc", "timestamp": "2025-05-01T10:00:00.000Z", "instructions": "x" * 6000}
    lines = [header] + n * [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "local_shell_call", "call_id": "c", "action": {"command": ["ls"]}},
        {"type": "function_call_output", "call_id": "c", "output": "a.py"},
    ]
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def _cases(root: Path) -> dict[str, Callable[[], Path]]:
    def tree(name: str, data: bytes) -> Path:
        day = root / name / "sessions" / "2026" / "02" / "11"
        subagent_rollout().write(day / rollout_name(CHILD, "2026-02-11T08-27-25"))
        return write_case(day.parent, day.name, rollout_name(THREAD), data)

    seeds = {
        "basic": basic_rollout().data(),
        "fuzz-seed": _codex_seed(),
        "0171": codex_0171_rollout().data(),
        "late": _late(),
        "document": _document(),
        "document-large": _document(400),
        "bare-large": _bare(800),
        "realistic-1": _realistic(1),
        "realistic-2": _realistic(2),
    }
    rng = random.Random("regista-bounded-codex")
    file = rollout_name(THREAD)
    cases = seeded_cases(root, file, seeds, ("basic", "fuzz-seed", "late"), rng)
    spawning = spawning_rollout().data()
    cases["subagent"] = lambda: tree("subagent", spawning)
    cases["subagent-output-only"] = lambda: tree(
        "subagent-output-only", spawning_rollout(event=False).data()
    )
    cases["subagent-missing"] = lambda: write_case(root, "subagent-missing", file, spawning)
    for n in range(10):
        data = mutate(rng, spawning)
        cases[f"subagent~{n}"] = lambda n=n, data=data: tree(f"subagent~{n}", data)
    return cases


EXPECTED: dict[str, str] = {
    "basic": "afdcf8d9b55968e47a41",
    "fuzz-seed": "6a87cb03f5b2ad3219ff",
    "0171": "e69d67140f8288a67380",
    "late": "6ba35441d170cfbbf0b5",
    "document": "657f1aa0944d2eec5c96",
    "document-large": "624a3ca3a985a064c9aa",
    "bare-large": "2028c147ed5478ae3870",
    "realistic-1": "e90d0e38954b93835368",
    "realistic-2": "ce860aa1404bd517e3cf",
    "subagent": "899ee4c5f64621df60fa",
    "subagent-output-only": "f9c655f34b80dc884d2a",
    "subagent-missing": "4475f0187f74727a86cc",
    "basic~0": "c16ef1251fe522852467",
    "basic~1": "6b7b03fa1fa2fcaca0cf",
    "basic~2": "f61b24c55cfd6b321dd0",
    "basic~3": "52ee85699c0917dbc608",
    "basic~4": "d24ea1c1e2d43c9487c3",
    "basic~5": "919f7f3568f5e19ebab4",
    "basic~6": "78bf35f0cc2669ec114e",
    "basic~7": "ec095e9806c95cc33615",
    "basic~8": "e25729b44c8a879ea2f4",
    "basic~9": "4122f0e408ff142b43fd",
    "basic~10": "5f329797b2515df1e918",
    "basic~11": "0f221b03945aa6416f17",
    "basic~12": "92b65e566727f9290cff",
    "basic~13": "6cc153d5d9e1b81c4c50",
    "basic~14": "fa7f132360d7fba42082",
    "basic~15": "69fd0926475279ea39a6",
    "basic~16": "ceb9cce8036129494eca",
    "basic~17": "b6c5a454509f87001d04",
    "basic~18": "4b9b9f57cb309e4a2f45",
    "basic~19": "e382481de71945b94598",
    "basic~20": "f3c913c71584783fcf2e",
    "basic~21": "b4596250489a4e51058a",
    "basic~22": "bf95422e22edf7e0838c",
    "basic~23": "cb090008ab45476ba807",
    "basic~24": "f5e73435d65261c9c32a",
    "fuzz-seed~0": "2ea3fb787d4177f20d87",
    "fuzz-seed~1": "5b16111f6e4619cbe2d9",
    "fuzz-seed~2": "4916d5aacc91ecdf2027",
    "fuzz-seed~3": "017d85193be61cf958b9",
    "fuzz-seed~4": "28f877478478917559d2",
    "fuzz-seed~5": "04f4aef16ccf50e4c51a",
    "fuzz-seed~6": "4ca390a749daebfa156b",
    "fuzz-seed~7": "427cf0093e73e49b662c",
    "fuzz-seed~8": "29c6e37789c85b6f0770",
    "fuzz-seed~9": "93171c8c7f9a3f68ba7b",
    "fuzz-seed~10": "9a0848874b873900d8dc",
    "fuzz-seed~11": "3dfb62259865b1392822",
    "fuzz-seed~12": "2bd88cac4c0342014329",
    "fuzz-seed~13": "8957c647c09929c5f204",
    "fuzz-seed~14": "6e1ed4ff2110a9f898f4",
    "fuzz-seed~15": "5d5c0b68ba3973f4cb53",
    "fuzz-seed~16": "8cc68be948226c4bbb55",
    "fuzz-seed~17": "f9d53c4d833a35d76793",
    "fuzz-seed~18": "51ed677fd782836c16ef",
    "fuzz-seed~19": "43fac7a67ac65f3e1633",
    "fuzz-seed~20": "a999cc7cf60e9844eac3",
    "fuzz-seed~21": "74f239512aec22c9c9f9",
    "fuzz-seed~22": "b9db205f67a0763a9bc5",
    "fuzz-seed~23": "176084c83d2a7f0a2fd9",
    "fuzz-seed~24": "4da68bfd0c6934e256ad",
    "late~0": "e89b121dc6dca61700fc",
    "late~1": "d0bb58f5d9909e2ae65f",
    "late~2": "ddb71b71a152b5f26de1",
    "late~3": "70bff94a1ac2c56014f2",
    "late~4": "01700aed79c9fe44c854",
    "late~5": "1a7bab86f747670a2d4c",
    "late~6": "cfdae15d8379ec7397dd",
    "late~7": "2b2709c4a299512b3374",
    "late~8": "b5b8d5ef00578ca27625",
    "late~9": "8d9b43ce68da168f4b7a",
    "late~10": "aad2b2006598a374b617",
    "late~11": "b226834d35283022c106",
    "late~12": "a672134040374c37eb5d",
    "late~13": "3e211692ac578d637d28",
    "late~14": "ae612bdeef7af31d47ae",
    "late~15": "dd8dbfcdd00f3708ea4a",
    "late~16": "54cc7321a386a93db4e5",
    "late~17": "46eba4c4563539c0f6ba",
    "late~18": "e488c1747ba40b342aa5",
    "late~19": "01547f83e8349a498391",
    "late~20": "532730c4ba14bff407f7",
    "late~21": "88a15780e6e49b2d7856",
    "late~22": "ef51f1a41b370f6d5dc9",
    "late~23": "85357b07222f2a2781b0",
    "late~24": "d7169f6500b97f72a563",
    "subagent~0": "7cfd8849292f3036452d",
    "subagent~1": "a9f08a9662386146b459",
    "subagent~2": "acdf3fc9d52ce7ee6c63",
    "subagent~3": "b92020f008003ad3bd4c",
    "subagent~4": "e24187016211239d6e0a",
    "subagent~5": "60b4e7e4e895ec0fc1e4",
    "subagent~6": "8524a0dd7439184611c0",
    "subagent~7": "aba08d315a13daffedf5",
    "subagent~8": "94b3b7f7203837f1c415",
    "subagent~9": "c75beff05f8efba379a5",
}


@pytest.mark.parametrize("small", [False, True], ids=["default", "small-limits-written"])
def test_conversions_are_those_of_the_whole_file_conversion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small: bool
) -> None:
    if small:  # blocks of a byte; conversations spilled; runs written out at every line
        monkeypatch.setattr(_common, "_BLOCK", 1)
        monkeypatch.setattr(_common, "_WRITE_EVERY", 1)
        monkeypatch.setattr(_builder, "_MESSAGES_IN_MEMORY", 2000)
    cases = _cases(tmp_path)
    got = {name: digest("codex", make(), tmp_path, written=small) for name, make in cases.items()}
    assert got == EXPECTED


if __name__ == "__main__":  # print the digests (after a deliberate change of the output)
    print_digests("codex", _cases)
