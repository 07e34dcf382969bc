"""``regista fork|rewind SESSION --resume-in claude|codex``: a session written back into
the CLI that recorded it, linked to its parent, the original untouched."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from regista.cli.main import main
from regista.errors import RegistaError, UserError
from regista.fork import ModelAnswerEdit, ToolResultEdit
from regista.importers import convert
from regista.importers.fork_cli import find_session, fork_into_cli, project_folder
from regista.store.runs import link_parents, read_run
from regista.trace.reader import Trace

from .cc_fixtures import SESSION, CCSession, basic_session, text, tool_use
from .codex_fixtures import THREAD, basic_rollout, rollout_name
from .fuzzing import CASES, mutate, rng_for


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    claude, codex, work = tmp_path / "claude", tmp_path / "codex", tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    monkeypatch.chdir(work)
    yield {"claude": claude, "codex": codex, "work": work}


def _cc(homes: dict[str, Path], session: CCSession | None = None) -> Path:
    s = session or basic_session()
    return s.write(homes["claude"] / "projects" / "-home-ann-projects-shop" / f"{SESSION}.jsonl")


def _cx(homes: dict[str, Path]) -> Path:
    return basic_rollout().write(homes["codex"] / "sessions" / "2026/02/11" / rollout_name(THREAD))


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in path.read_bytes().splitlines()]


def _messages(path: Path, step: int) -> list[dict[str, Any]]:
    """The conversation the model saw at model step ``step`` of an imported session."""
    call = next(s for s in Trace.load(path).steps() if s.index == step)
    assert call.request is not None
    return list(call.request.messages)


def test_project_folder_is_named_as_claude_code_names_it() -> None:
    # the values Claude Code's own function gives (run under node)
    assert project_folder("/home/ann/projects/shop") == "-home-ann-projects-shop"
    assert project_folder("/a/b.c_d é") == "-a-b-c-d--"
    long = project_folder("/tmp/" + "x" * 250 + "/é😀")
    assert len(long) == 207 and long.endswith("x-ejhpng")


def test_a_claude_code_fork_at_a_tool_step_keeps_the_history_and_the_edit(
    homes: dict[str, Path],
) -> None:
    parent = _cc(homes)
    before = parent.read_bytes()
    fork = fork_into_cli(
        SESSION,
        1,
        ToolResultEdit("2 passed", is_error=False),
        resume_in="claude",
        cwd=str(homes["work"]),
    )
    assert parent.read_bytes() == before  # the original is never touched
    assert fork.path == (
        homes["claude"]
        / "projects"
        / project_folder(str(homes["work"]))
        / f"{fork.session_id}.jsonl"
    )
    assert fork.command == f"claude --resume {fork.session_id}"  # run from that folder
    lines = _lines(fork.path)
    assert {x["sessionId"] for x in lines if "sessionId" in x} == {fork.session_id}
    assert {x["cwd"] for x in lines if "cwd" in x} == {os.path.realpath(homes["work"])}
    # fresh message ids, linked as the parent's were; no snapshot, title or queue line
    old = {x.get("uuid") for x in _lines(parent)}
    assert not old & {x["uuid"] for x in lines}
    uuids = [x["uuid"] for x in lines]
    assert all(x["parentUuid"] in (None, *uuids[:i]) for i, x in enumerate(lines))
    assert {x["type"] for x in lines} <= {"user", "assistant", "progress"}
    # the step's result is edited; the other call of the same answer keeps its own
    results = [
        b
        for x in lines
        if x["type"] == "user"
        for b in x["message"]["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    assert {b["tool_use_id"]: b["content"] for b in results}["toolu_01A"] == "2 passed"
    assert {b["tool_use_id"]: b.get("is_error") for b in results}["toolu_01A"] is False
    assert len(results) == 2
    # read back: the fork's steps are the parent's up to the edit, and it names its parent
    trace = Trace.load(fork.path)
    kinds = [s.kind for s in trace.steps()]
    assert kinds == ["model", "tool", "tool"]
    parent_run = convert("claude-code", parent).main.session_id
    assert trace.start.forked_from is not None
    assert trace.start.forked_from["session_id"] == parent_run
    assert trace.start.forked_from["at_step"] == 1
    assert trace.start.forked_from["edit"]["content"] == "2 passed"
    assert _messages(fork.path, 0) == _messages(parent, 0)
    assert "not restored: the working tree's files" in "\n".join(fork.lines())
    assert "(branch main)" in "\n".join(fork.lines())


def test_the_run_list_puts_the_fork_under_its_parent(homes: dict[str, Path]) -> None:
    parent = _cc(homes)
    fork = fork_into_cli(SESSION, 1, ToolResultEdit("ok"), resume_in="claude")
    folder = homes["work"] / "runs"
    folder.mkdir()
    paths = []
    for src in (parent, fork.path):
        for run in convert("claude-code", src).runs:
            out = folder / f"{run.session_id}.jsonl"
            out.write_bytes(run.to_bytes())
            paths.append(out)
    runs = [read_run(p) for p in paths]
    link_parents(runs)
    child = next(r for r in runs if r.parent is not None)
    assert child.kind == "fork" and child.fork_step == 1
    assert child.parent is not None and child.parent.session_id == runs[0].session_id


def test_a_claude_code_fork_of_a_model_step_replaces_the_answer(homes: dict[str, Path]) -> None:
    _cc(homes)
    edit = ModelAnswerEdit([{"type": "text", "text": "Nothing to fix."}])
    fork = fork_into_cli(SESSION, 3, edit, resume_in="claude")
    lines = _lines(fork.path)
    last = lines[-1]
    assert last["type"] == "assistant"
    assert last["message"]["content"] == [{"type": "text", "text": "Nothing to fix."}]
    assert last["message"]["stop_reason"] == "end_turn"
    trace = Trace.load(fork.path)
    assert [s.kind for s in trace.steps()] == ["model", "tool", "tool", "model"]
    # the recorded default folder, said as a cd when it is not the current one
    assert fork.cwd == "/home/ann/projects/shop"
    assert fork.command.startswith("cd /home/ann/projects/shop && claude --resume ")
    assert any("does not exist here" in n for n in fork.notes)


def test_a_rewind_keeps_the_steps_before_and_refuses_a_tool_step(homes: dict[str, Path]) -> None:
    _cc(homes)
    fork = fork_into_cli(SESSION, 3, None, resume_in="claude")
    trace = Trace.load(fork.path)
    assert [s.kind for s in trace.steps()] == ["model", "tool", "tool"]
    assert trace.start.forked_from is not None and trace.start.forked_from["edit"] is None
    with pytest.raises(UserError, match="Rewind to step 0"):
        fork_into_cli(SESSION, 1, None, resume_in="claude")


def test_the_cli_prints_the_one_command_that_continues_it(
    homes: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    parent = _cc(homes)
    code = main(
        [
            "fork",
            str(parent),
            "--at",
            "1",
            "--tool-result",
            "ok",
            "--resume-in",
            "claude",
            "--cwd",
            str(homes["work"]),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    said = [x for x in out.splitlines() if x.startswith("continue: ")]
    assert len(said) == 1 and said[0].startswith("continue: claude --resume ")
    code = main(["rewind", SESSION, "--at", "3", "--resume-in", "claude"])
    assert code == 0
    assert "continue: cd /home/ann/projects/shop && claude --resume" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--at", "9", "--tool-result", "x", "--resume-in", "claude"], "steps 0..5"),
        (["--at", "0", "--tool-result", "x", "--resume-in", "claude"], "give it --answer"),
        (["--at", "1", "--answer", "x", "--resume-in", "claude"], "give it --tool-result"),
        (["--at", "1", "--tool-result", "x", "--resume-in", "codex"], "resumes in claude"),
        (
            [
                "--at",
                "1",
                "--tool-result",
                "x",
                "--at",
                "2",
                "--tool-result",
                "y",
                "--resume-in",
                "claude",
            ],
            "one edit",
        ),
        (["--at", "1", "--tool-result", "x", "--resume-in", "claude", "--loose"], "--loose"),
    ],
)
def test_what_does_not_fit_is_one_line(
    homes: dict[str, Path], capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    _cc(homes)
    assert main(["fork", SESSION, *argv]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_a_session_id_is_found_under_the_tools_folders_or_said_missing(
    homes: dict[str, Path],
) -> None:
    cc, cx = _cc(homes), _cx(homes)
    assert find_session(SESSION) == (cc, "claude")
    assert find_session(THREAD) == (cx, "codex")
    with pytest.raises(UserError, match="no session 'nope'"):
        find_session("nope")
    with pytest.raises(UserError, match="no such file"):
        find_session("./missing.jsonl")
    other = homes["work"] / "notes.jsonl"
    other.write_bytes(b'{"hello": 1}\n')
    with pytest.raises(UserError, match="not a Claude Code transcript nor a Codex rollout"):
        find_session(str(other))


def test_a_codex_fork_writes_a_rollout_codex_finds(homes: dict[str, Path]) -> None:
    parent = _cx(homes)
    before = parent.read_bytes()
    fork = fork_into_cli(
        THREAD, 1, ToolResultEdit("1 passed"), resume_in="codex", now=lambda: 1.8e9
    )
    assert parent.read_bytes() == before
    assert fork.path.parent == homes["codex"] / "sessions" / "2027" / "01" / "15"
    assert fork.path.name.startswith("rollout-2027-01-15T") and fork.path.name.endswith(
        f"-{fork.session_id}.jsonl"
    )
    assert fork.session_id[14] == "7"  # a UUIDv7, as Codex makes them
    lines = _lines(fork.path)
    meta = lines[0]["payload"]
    assert lines[0]["type"] == "session_meta" and meta["id"] == fork.session_id
    assert meta["forked_from_id"] == THREAD
    outputs = {
        x["payload"]["call_id"]: x["payload"]["output"]
        for x in lines
        if x["payload"].get("type") == "function_call_output"
    }
    assert outputs["call_A"] == "1 passed" and "call_B" in outputs
    assert fork.command.endswith(f"codex resume {fork.session_id}")
    assert fork.git == {
        "commit_hash": "4be0c1d",
        "branch": "main",
        "repository_url": "git@example.com:ann/shop.git",
    }
    trace = Trace.load(fork.path)
    assert [s.kind for s in trace.steps()] == ["model", "tool", "tool"]
    assert trace.start.forked_from is not None
    assert trace.start.forked_from["session_id"] == convert("codex", parent).main.session_id


def test_a_codex_answer_edit_and_rewind(homes: dict[str, Path]) -> None:
    _cx(homes)
    edit = ModelAnswerEdit([{"type": "text", "text": "No bug."}])
    fork = fork_into_cli(THREAD, 3, edit, resume_in="codex")
    last = _lines(fork.path)[-1]["payload"]
    assert last["type"] == "message" and last["role"] == "assistant"
    assert last["content"] == [{"type": "output_text", "text": "No bug."}]
    assert [s.kind for s in Trace.load(fork.path).steps()] == ["model", "tool", "tool", "model"]
    back = fork_into_cli(THREAD, 3, None, resume_in="codex")
    assert [s.kind for s in Trace.load(back.path).steps()] == ["model", "tool", "tool"]


def test_a_bare_era_rollout_is_refused_plainly(homes: dict[str, Path]) -> None:
    path = homes["work"] / "rollout-2025-08-01T10-00-00-abc.jsonl"
    path.write_bytes(
        b'{"id":"abc","timestamp":"2025-08-01T10:00:00Z","instructions":null}\n'
        b'{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}\n'
        b'{"type":"message","role":"assistant","content":[{"type":"output_text","text":"yo"}]}\n'
    )
    with pytest.raises(UserError, match="before Codex's JSON-lines format"):
        fork_into_cli(
            str(path), 0, ModelAnswerEdit([{"type": "text", "text": "x"}]), resume_in="codex"
        )


def _seed() -> bytes:
    s = basic_session()
    s.prompt("more")
    s.answer(tool_use("toolu_Z", "Bash", command="ls"), text("listing"))
    s.tool_result("toolu_Z", [text("a b c")])
    return s.data()


@pytest.mark.parametrize("tool", ["claude", "codex"])
def test_fuzzed_sessions_fork_or_say_why(homes: dict[str, Path], tool: str) -> None:
    """Any session, forked at any step with either edit: a session that reads back, or
    one clear error."""
    rng = rng_for(f"fork-cli-{tool}")
    seed = _seed() if tool == "claude" else basic_rollout().data()
    path = homes["work"] / ("s.jsonl" if tool == "claude" else rollout_name(THREAD))
    for case in range(CASES // 3):
        path.write_bytes(mutate(rng, seed))
        at = rng.randrange(-1, 9)
        edit = rng.choice(
            [None, ToolResultEdit("x"), ModelAnswerEdit([{"type": "text", "text": "y"}])]
        )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fork = fork_into_cli(str(path), at, edit, resume_in=tool, cwd=str(homes["work"]))
                Trace.load(fork.path).steps()
        except RegistaError:
            continue
        except Exception as exc:  # pragma: no cover - the failure report
            raise AssertionError(f"case {case}: {type(exc).__name__}: {exc}") from exc
