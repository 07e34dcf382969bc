"""Masks in SDK replays, through the real anthropic SDK: a Claude Code request recorded on one
day in one folder replays strict on another day in another folder; a real change is still a
409, whose diff shows it and marks what a mask covered ``masked``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anthropic
import pytest
from client_requests import claude_code_request
from fakes.anthropic_server import FakeAnthropicServer
from sdk_agents import new_replay, regista_server

from regista.diff.masks import mask_set
from regista.server import BackgroundServer, create_app
from regista.trace.reader import Trace


def _call(client: anthropic.Anthropic, **kw: Any) -> str:
    system, messages = claude_code_request(**kw)
    blocks = [{"type": "text", "text": part} for part in system.split("\n\n", 1)]
    msg = client.messages.create(
        model="claude-opus-4-8",
        max_tokens=256,
        system=blocks,
        messages=messages,  # type: ignore[arg-type]
    )
    return "".join(b.text for b in msg.content if b.type == "text")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    store = tmp_path_factory.mktemp("masks") / "store"
    with FakeAnthropicServer() as fake, regista_server(store, anthropic=fake.url) as server:
        fake.script({"content": [{"type": "text", "text": "Fixed it."}]})
        client = anthropic.Anthropic(api_key="k", base_url=f"{server.url}/v1/record/anthropic")
        assert _call(client) == "Fixed it."
        server.record_done()
    (path,) = store.glob("*.jsonl")
    return store, Trace.load(path).session_id


def _client(rp: dict[str, Any]) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="unused", base_url=rp["anthropic_base_url"], max_retries=0)


def test_another_day_and_folder_replays_strict(recorded: tuple[Path, str]) -> None:
    store, run = recorded
    with regista_server(store) as server:
        rp = new_replay(server, run, mode="strict")
        assert _call(_client(rp), date="2026-12-24", cwd="/srv/elsewhere") == "Fixed it."
        status = server.http.get(f"/v1/replays/{rp['id']}").json()
        assert (status["served"], status["matched"], status["masked_matches"]) == (1, 1, 1)
        assert set(status["masks_used"]) == {"cc-date", "cc-cwd", "cc-memory-dir"}
        assert status["masks"]["sources"] == ["built-in"]
        # as recorded: matched, and not through masks
        rp2 = new_replay(server, run)
        assert _call(_client(rp2)) == "Fixed it."
        assert server.http.get(f"/v1/replays/{rp2['id']}").json()["masked_matches"] == 0


def test_a_real_change_is_a_409_that_marks_the_masked_part(recorded: tuple[Path, str]) -> None:
    store, run = recorded
    with regista_server(store) as server:
        rp = new_replay(server, run)
        with pytest.raises(anthropic.APIStatusError) as info:
            _call(_client(rp), date="2026-12-24", task="fix the other bug")
        assert info.value.status_code == 409
        err = info.value.body["error"]  # type: ignore[index]
        diff = err["diff"]
        assert diff[0].startswith("messages[0].content[1].text: recorded 'fix the bug'")
        assert any(
            line.startswith("messages[0].content[0].text: masked cc-date")
            and "'2026-11-30'" in line
            and "'2026-12-24'" in line
            for line in diff
        ), diff
        assert "fix the other bug" in err["message"] and "masked" not in err["message"]


def test_masks_false_counts_every_byte(recorded: tuple[Path, str]) -> None:
    store, run = recorded
    with regista_server(store) as server:
        rp = new_replay(server, run, masks=False)
        with pytest.raises(anthropic.APIStatusError) as info:
            _call(_client(rp), date="2026-12-24")
        assert info.value.status_code == 409
        assert "2026-11-30" in info.value.body["error"]["message"]  # type: ignore[index]
        r = server.http.post("/v1/replays", json={"run": run, "masks": "yes"})
        assert r.status_code == 400 and "'masks' must be" in r.text


def test_a_user_mask_file_beside_the_store(recorded: tuple[Path, str], tmp_path: Path) -> None:
    store, run = recorded
    (tmp_path / "masks.toml").write_text(
        "[[mask]]\nname = 'task'\nwhere = 'messages'\npattern = '^fix the (.*)bug$'\n"
        "why = 'test: the task varies'\n"
    )
    app = create_app(store, masks=mask_set(beside=tmp_path), replay_ttl=60)
    with BackgroundServer(app) as server:
        import httpx2

        with httpx2.Client(base_url=server.url) as http:
            rp = http.post("/v1/replays", json={"run": run}).json()
            answer = _call(_client(rp), date="2026-12-24", task="fix the other bug")
            assert answer == "Fixed it."
            status = http.get(f"/v1/replays/{rp['id']}").json()
    assert status["masks"]["sources"][-1] == str(tmp_path / "masks.toml")
    assert "task" in status["masks_used"]


def test_regista_diff_marks_what_masks_cover(tmp_path: Path) -> None:
    """Two runs of the same conversation, on two days in two folders: ``regista diff`` says
    they differ only in masked parts, and names them; a real change is still listed."""
    store = tmp_path / "store"
    runs = []
    with FakeAnthropicServer() as fake, regista_server(store, anthropic=fake.url) as server:
        fake.answer_with(lambda body: {"content": [{"type": "text", "text": "Fixed it."}]})
        client = anthropic.Anthropic(api_key="k", base_url=f"{server.url}/v1/record/anthropic")
        for kw in ({}, {"date": "2026-12-24", "cwd": "/srv/b"}, {"task": "fix the big bug"}):
            _call(client, **kw)
            server.record_done()
            runs.append(max(store.glob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns))
    assert len(set(runs)) == 3

    def diff(a: Path, b: Path, *extra: str) -> str:
        cmd = [sys.executable, "-m", "regista", "diff", str(a), str(b), *extra]
        env = {**os.environ, "COLUMNS": "300"}
        return subprocess.run(cmd, capture_output=True, text=True, env=env, check=False).stdout

    masked = diff(runs[0], runs[1])
    assert "Steps that differ only in masked parts (see regista masks): 0" in masked
    assert "request.messages[0].content[0].text: masked cc-date" in masked
    assert "A '2026-11-30', B '2026-12-24'" in masked
    assert "request.system: masked cc-cwd" in masked
    assert "First divergence" not in masked and "(only in masked parts)" in masked
    plain = diff(runs[0], runs[1], "--no-masks")
    assert "First divergence" in plain and "masked" not in plain
    real = diff(runs[0], runs[2])
    assert "First divergence" in real and "recorded" not in real
    assert "request.messages[0].content[1].text: A 'fix the bug' != B 'fix the big bug'" in real
