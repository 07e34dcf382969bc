"""The Codex CLI's own tool calls through the Responses API recorder: its ``exec_command``
function call and its freeform ``apply_patch`` custom tool call are tool steps, its
reasoning is kept, the trace reads back, and a replay serves Codex every call."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from conformance.matrix import npm_bin
from fakes.responses_server import FakeResponsesServer
from sdk_agents import new_replay, regista_server

from regista.cli.main import main
from regista.trace.reader import Trace

PATCH = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    outputs = [i for i in body["input"] if str(i.get("type", "")).endswith("_call_output")]
    if not outputs:
        args = json.dumps({"cmd": "echo hello-from-shell"})
        call = {"id": "call_x", "name": "exec_command", "arguments": args}
        return {"reasoning": "Run it.", "tool_calls": [call]}
    if len(outputs) == 1:
        patch = {"type": "custom_tool_call", "call_id": "call_p", "name": "apply_patch"}
        return {"output": [{**patch, "input": PATCH}]}
    return {"text": "DONE"}


def _codex(base_url: str, home: Path, work: Path) -> subprocess.CompletedProcess[str]:
    (home / "config.toml").write_text(
        'model = "gpt-5.5"\nmodel_provider = "local"\n[model_providers.local]\n'
        f'name = "local"\nbase_url = "{base_url}"\nwire_api = "responses"\n'
        'env_key = "OPENAI_API_KEY"\nsupports_websockets = false\n'
        "request_max_retries = 0\nstream_max_retries = 0\n"
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
           "CODEX_HOME": str(home), "OPENAI_API_KEY": "sk-codex-secret-1"}  # fmt: skip
    return subprocess.run(
        [str(npm_bin("codex")), "exec", "--skip-git-repo-check", "--sandbox",
         "workspace-write", "make a.txt"],
        env=env, capture_output=True, text=True, timeout=120, cwd=work,
    )  # fmt: skip


def test_codex_tool_calls_are_tool_steps_and_replay(tmp_path: Path, capsys: Any) -> None:
    home, work, store = tmp_path / "home", tmp_path / "work", tmp_path / "store"
    home.mkdir()
    work.mkdir()
    with FakeResponsesServer() as fake:
        fake.answer_with(_answer)
        with regista_server(store, openai=fake.url) as server:
            ran = _codex(f"{server.url}/v1/record/openai", home, work)
            server.record_done()
    assert ran.returncode == 0 and "DONE" in ran.stdout, ran.stderr[-2000:]
    assert (work / "a.txt").read_text() == "hi\n"
    (path,) = store.glob("*.jsonl")
    assert "sk-codex-secret-1" not in path.read_text()
    assert main(["verify", str(path)]) == 0
    trace = Trace.load(path)
    steps = trace.steps()
    assert [s.kind for s in steps] == ["model", "tool", "model", "tool", "model"]
    exec_call, patch_call = steps[1].tool_call, steps[3].tool_call
    assert exec_call is not None and exec_call.name == "exec_command"
    assert exec_call.input == {"cmd": "echo hello-from-shell"}
    assert patch_call is not None and patch_call.name == "apply_patch"
    assert patch_call.input == {"input": PATCH}
    first = trace.llm_calls()[0][1]
    assert [b["type"] for b in first.content] == ["thinking", "tool_use"]
    # Codex's exec output holds a fresh chunk id and wall time each run: loose serves it
    (work / "a.txt").unlink()
    with regista_server(store) as server:
        rp = new_replay(server, trace.session_id, mode="loose")
        again = _codex(rp["openai_base_url"], home, work)
        status = server.http.get(f"/v1/replays/{rp['id']}").json()
    assert again.returncode == 0 and "DONE" in again.stdout, again.stderr[-2000:]
    assert status["served"] == status["calls"] == 3
    assert status["matched"] >= 1  # the first call: the same home and folder
