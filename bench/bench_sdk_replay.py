"""A 200-call plain SDK session: replayed through the real Anthropic SDK over HTTP, and
recorded through the proxy, each beside calling the fake provider directly.

Three runs of the same agent loop (the SDK, a tool result of ~600 characters per call, the
messages growing every call), interleaved ROUNDS times:

- direct: the SDK against a fake provider on 127.0.0.1 (the floor);
- proxy:  the SDK through ``regista serve``'s recording proxy to the same fake (added
  latency);
- replay: the SDK against a strict replay of the recording (nothing upstream).

``regista serve`` runs in its own process, as users run it.

Figures are medians per call, and ratios to the direct run measured in the same rounds.
The fake keeps its connections alive between answers, as the real APIs do (all three runs
gain alike; ``--close`` makes it close each one, as it did before). On a loaded machine the
wall times carry the scheduler's noise: the server's own CPU time per call (``/proc``) is
printed beside them.

    python bench/bench_sdk_replay.py [CALLS] [ROUNDS] [--close]
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anthropic
import httpx2

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

from fakes.anthropic_server import FakeAnthropicServer

CLOSE = "--close" in sys.argv
ARGS = [a for a in sys.argv[1:] if a != "--close"]
CALLS = int(ARGS[0]) if ARGS else 200
ROUNDS = int(ARGS[1]) if len(ARGS) > 1 else 3
TOOLS = [
    {
        "name": "lookup",
        "description": "Look up a key.",
        "input_schema": {"type": "object", "properties": {"key": {"type": "string"}}},
    }
]


def answer(body: dict[str, Any]) -> dict[str, Any]:
    n = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if n + 1 >= CALLS:
        return {"content": [{"type": "text", "text": "Done: every key looked up."}]}
    return {
        "content": [
            {"type": "text", "text": f"Looking up key {n}, then the next one."},
            {"type": "tool_use", "id": f"toolu_{n:04d}", "name": "lookup",
             "input": {"key": f"k{n}"}},
        ]
    }  # fmt: skip


def agent(client: anthropic.Anthropic) -> list[float]:
    """The plain loop; returns each call's wall time in ms."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Look every key up."}]
    times: list[float] = []
    while True:
        t0 = time.perf_counter()
        msg = client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=1024,
            system="You look keys up, one at a time.",
            tools=TOOLS,  # type: ignore[arg-type]
            messages=messages,  # type: ignore[arg-type]
        )
        times.append((time.perf_counter() - t0) * 1000)
        messages.append({"role": "assistant", "content": msg.content})
        uses = [b for b in msg.content if b.type == "tool_use"]
        if not uses:
            return times
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": u.id,
                     "content": f"value of {u.input['key']}: " + "x" * 600}  # type: ignore[index]
                    for u in uses
                ],
            }
        )  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def cpu_ms(pid: int) -> float:
    """CPU time (user + system) the process ``pid`` has used so far, in ms (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def main() -> None:
    store = Path(tempfile.mkdtemp(prefix="regista-bench-sdk-"))
    direct: list[float] = []
    proxied: list[float] = []
    replayed: list[float] = []
    proxy_cpu: list[float] = []
    replay_cpu: list[float] = []
    with FakeAnthropicServer(keep_alive=not CLOSE) as fake:
        fake.answer_with(answer)
        # `regista serve` in its own process, as it runs for users
        port = free_port()
        env = {**os.environ, "ANTHROPIC_BASE_URL": fake.url}
        cmd = [sys.executable, "-m", "regista", "serve", "--store", str(store), "--port", str(port)]
        server = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        try:
            with httpx2.Client(base_url=url) as http:
                for _ in range(600):  # wait for it to listen
                    try:
                        http.get("/v1/health")
                        break
                    except httpx2.TransportError:
                        time.sleep(0.05)
                for r in range(ROUNDS):
                    direct += agent(anthropic.Anthropic(api_key="k", base_url=fake.url))
                    proxy_url = f"{url}/v1/record/anthropic"
                    c0 = cpu_ms(server.pid)
                    proxied += agent(anthropic.Anthropic(api_key="k", base_url=proxy_url))
                    proxy_cpu.append((cpu_ms(server.pid) - c0) / CALLS)
                    newest = max(store.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
                    run = newest.stem
                    rp = http.post("/v1/replays", json={"run": run}).json()
                    replay_url = rp["anthropic_base_url"]
                    c0 = cpu_ms(server.pid)
                    replayed += agent(anthropic.Anthropic(api_key="k", base_url=replay_url))
                    replay_cpu.append((cpu_ms(server.pid) - c0) / CALLS)
                    status = http.get(f"/v1/replays/{rp['id']}").json()
                    assert status["matched"] == CALLS, status
                    print(f"round {r + 1}/{ROUNDS} done", file=sys.stderr)
        finally:
            server.terminate()
            server.wait(timeout=30)
    server_ms, loads_ms, write_ms = server_side(store, run)
    d, p, rep = (statistics.median(x) for x in (direct, proxied, replayed))
    conns = "a new connection per call" if CLOSE else "kept-alive connections"
    print(f"{CALLS}-call SDK session, {ROUNDS} interleaved rounds, fake with {conns}, "
          f"medians per call:")  # fmt: skip
    print(f"  direct to the fake provider (floor): {d:7.2f} ms")
    print(f"  through the recording proxy:         {p:7.2f} ms  "
          f"(+{p - d:.2f} ms added, {p / d:.2f}x the floor)")  # fmt: skip
    print(f"  strict replay over HTTP:             {rep:7.2f} ms  ({rep / d:.2f}x the floor)")
    pc, rc = statistics.median(proxy_cpu), statistics.median(replay_cpu)
    print(f"  server CPU per call: recording proxy {pc:.2f} ms, of which writing the call "
          f"after answering {write_ms:.2f} ms; strict replay {rc:.2f} ms")  # fmt: skip
    print(f"  the replay's own work (parse, normalise, digest, match, answer): "
          f"{server_ms:.2f} ms, {server_ms / loads_ms:.1f}x orjson.loads of the body")  # fmt: skip


def server_side(store: Path, run: str) -> tuple[float, float, float]:
    """Median ms per call, in-process: the replay's work on each recorded request, and
    ``orjson.loads`` of the same bodies (its floor); and the proxy's writing of each call
    (done after answering: parse, normalise, hash, write)."""
    import orjson

    from regista.server.replays import respond
    from regista.server.sdk_replay import SdkReplay, Spec
    from regista.trace.reader import Trace
    from regista.types import LlmResponse
    from regista.wire.sessions import SessionBook
    from regista.wire.shapes import anthropic_request

    trace = Trace.load(store / f"{run}.jsonl")
    replay = SdkReplay(trace, Spec(run=run), 3600)
    bodies = [
        orjson.dumps({"model": q.model, "max_tokens": q.max_tokens, "system": q.system,
                      "messages": q.messages, "tools": q.tools})
        for q, _ in trace.llm_calls()
    ]  # fmt: skip
    work: list[float] = []
    floor: list[float] = []
    for raw in bodies:
        t0 = time.perf_counter()
        orjson.loads(raw)
        t1 = time.perf_counter()
        body = orjson.loads(raw)
        served = replay.answer(anthropic_request(body), "anthropic")
        assert not isinstance(served, str)
        bytes(respond("anthropic", served.response, body).body)
        t2 = time.perf_counter()
        floor.append((t1 - t0) * 1000)
        work.append((t2 - t1) * 1000)
    book = SessionBook(Path(tempfile.mkdtemp(prefix="regista-bench-book-")))
    answers = [orjson.dumps(r.payload()) for _, r in trace.llm_calls()]
    writing: list[float] = []
    for raw, answer in zip(bodies, answers, strict=True):
        t0 = time.perf_counter()
        request = anthropic_request(orjson.loads(raw))
        book.record("anthropic", request, LlmResponse.model_validate(orjson.loads(answer)))
        writing.append((time.perf_counter() - t0) * 1000)
    book.close()
    return statistics.median(work), statistics.median(floor), statistics.median(writing)


if __name__ == "__main__":
    main()
