"""The record proxy and SDK replays with requests shaped as Claude Code sends them:
``system`` text blocks with ``cache_control``, messages of role ``system``, a cache
breakpoint that moves to the newest message on every call, the task after
``<system-reminder>`` blocks, thinking blocks, side calls without tools, and
``count_tokens``. Driven through the real ``anthropic`` SDK."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from fakes.anthropic_server import FakeAnthropicServer
from files import found

from regista.server import BackgroundServer, create_app
from regista.server.record import book
from regista.trace.reader import Trace
from regista.wire.shapes import sdk_digest

REMINDER = (
    "<system-reminder>\nAs you answer the user's questions, you can use the following "
    "context:\n# currentDate\nToday's date is 2026-12-01.\n</system-reminder>\n"
)
TASK = "List the files, please."
SYSTEM = [
    {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.197;"},
    {"type": "text", "text": "You are an agent.", "cache_control": {"type": "ephemeral"}},
]
TOOLS = [
    {
        "name": "Bash",
        "description": "Run a command.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
]
USER = "user_abc_session_1"


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    if not body.get("tools"):
        return {"content": [{"type": "text", "text": '{"title": "Files"}'}]}
    results = [
        b
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    if not results:
        return {
            "content": [
                {"type": "thinking", "thinking": "List them.", "signature": "sig-1"},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
            ]
        }
    return {"content": [{"type": "text", "text": "a.txt"}]}


def _with_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with ``cache_control`` on the last block of the last message only (as
    Claude Code places its breakpoint)."""
    out = copy.deepcopy(messages)
    last = out[-1]["content"]
    if isinstance(last, list):
        last[-1]["cache_control"] = {"type": "ephemeral"}
    return out


class _Claude:
    """A Claude-Code-shaped conversation through the SDK."""

    def __init__(self, client: anthropic.Anthropic, stream: bool) -> None:
        self.client = client
        self.stream = stream
        self.messages: list[dict[str, Any]] = [
            {
                "role": "user",
                "content": [{"type": "text", "text": REMINDER}, {"type": "text", "text": TASK}],
            },
            {"role": "system", "content": "Available agent types: claude."},
        ]

    def call(self) -> Any:
        kwargs: dict[str, Any] = dict(
            model="claude-opus-4-8",
            max_tokens=1000,
            system=SYSTEM,
            tools=TOOLS,
            messages=_with_breakpoint(self.messages),
            thinking={"type": "adaptive"},
            metadata={"user_id": USER},
            extra_body={"context_management": {"edits": []}},
        )
        if self.stream:
            with self.client.messages.stream(**kwargs) as s:
                message = s.get_final_message()
        else:
            message = self.client.messages.create(**kwargs)
        content = [b.model_dump(exclude_none=True) for b in message.content]
        self.messages.append({"role": "assistant", "content": content})
        return message

    def side(self) -> None:
        self.client.messages.create(
            model="claude-haiku-4-5",
            max_tokens=50,
            system=[{"type": "text", "text": "Give a title."}],
            messages=[{"role": "user", "content": TASK}],
            metadata={"user_id": USER},
        )

    def count(self) -> int:
        counted = self.client.messages.count_tokens(
            model="claude-opus-4-8", system=SYSTEM, tools=TOOLS, messages=self.messages
        )
        return counted.input_tokens

    def run(self) -> str:
        first = self.call()
        self.side()
        (use,) = [b for b in first.content if b.type == "tool_use"]
        self.messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "a.txt"}],
            }
        )
        self.count()
        final = self.call()
        return "".join(b.text for b in final.content if b.type == "text")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        server.answer_with(_answer)
        yield server


@pytest.fixture(scope="module", params=[False, True], ids=["json", "sse"])
def recorded(
    request: pytest.FixtureRequest,
    fake: FakeAnthropicServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, bool]:
    folder = tmp_path_factory.mktemp("cc")
    stream = bool(request.param)
    app = create_app(folder, upstreams={"anthropic": fake.url})
    with BackgroundServer(app) as server:
        client = anthropic.Anthropic(
            api_key="sk-ant-cc-secret", base_url=f"{server.url}/v1/record/anthropic"
        )
        assert _Claude(client, stream).run() == "a.txt"
        book(app.state.ctx).close()
    paths = list(folder.glob("*.jsonl"))
    assert len(paths) == 1, "one conversation, one run"
    assert b"sk-ant-cc-secret" not in paths[0].read_bytes()
    return paths[0], stream


def test_one_conversation_is_one_run_that_reads_back(recorded: tuple[Path, bool]) -> None:
    trace = Trace.load(recorded[0])  # system-role messages read back
    steps = trace.steps()
    assert [s.kind for s in steps] == ["model", "model", "model", "tool", "model"]
    (first, _), *_ = trace.llm_calls()
    assert first.messages[1]["role"] == "system"
    assert trace.end is not None and trace.end.output == "a.txt"


def test_the_task_is_what_the_person_asked(recorded: tuple[Path, bool]) -> None:
    assert Trace.load(recorded[0]).start.task == TASK


def test_side_calls_are_marked_side_steps(recorded: tuple[Path, bool]) -> None:
    trace = Trace.load(recorded[0])
    sides = [
        (e.step, (e.model_extra or {}).get("side")) for e in trace.events if e.type == "llm.request"
    ]
    assert sides == [(0, None), (1, "call"), (2, "count_tokens"), (4, None)]
    counted = next(e for e in trace.events if e.type == "llm.response" and e.step == 2)
    assert counted.response["count_tokens"]["input_tokens"] > 0
    assert counted.response["usage"]["input_tokens"] == 0  # a count is not billed


def test_a_strict_replay_serves_every_call_and_the_count(
    recorded: tuple[Path, bool], fake: FakeAnthropicServer
) -> None:
    path, stream = recorded
    app = create_app(path.parent)
    before = len(fake.requests)
    with BackgroundServer(app) as server:
        import httpx

        made = httpx.post(f"{server.url}/v1/replays", json={"run": Trace.load(path).session_id})
        base = made.json()["anthropic_base_url"]
        client = anthropic.Anthropic(api_key="k", base_url=base, max_retries=0)
        claude = _Claude(client, stream)
        assert claude.run() == "a.txt"
        status = httpx.get(f"{server.url}/v1/replays/{made.json()['id']}").json()
    assert len(fake.requests) == before
    assert status["served"] == 3 and status["matched"] == 3
    assert status["count_tokens"] == {"answered": 1, "estimated": 0}


def test_a_count_not_recorded_is_estimated(recorded: tuple[Path, bool]) -> None:
    path, _ = recorded
    app = create_app(path.parent)
    with BackgroundServer(app) as server:
        import httpx

        made = httpx.post(f"{server.url}/v1/replays", json={"run": Trace.load(path).session_id})
        base = made.json()["anthropic_base_url"]
        client = anthropic.Anthropic(api_key="k", base_url=base, max_retries=0)
        raw = client.messages.with_raw_response.count_tokens(
            model="m", messages=[{"role": "user", "content": "something else"}]
        )
        assert raw.headers["x-regista-count-tokens"] == "estimated"
        assert raw.parse().input_tokens > 0


def test_the_strict_digest_leaves_out_regista_own_origin() -> None:
    sent = [{"role": "user", "content": "hi"}]
    imported = [{"role": "user", "content": "hi", "origin": "meta"}]
    assert sdk_digest(None, imported) == sdk_digest(None, sent)


def test_show_names_the_task_and_the_token_count(
    recorded: tuple[Path, bool], capsys: pytest.CaptureFixture[str]
) -> None:
    from regista.cli.main import main

    assert main(["show", str(recorded[0])]) == 0
    out = capsys.readouterr().out
    assert TASK in out and "system-reminder" not in out
    assert "(count_tokens: " in out and "input tokens)" in out


def _call(model: str, messages: list[dict[str, Any]], tools: bool, user: str | None = None) -> Any:
    from regista.wire.shapes import anthropic_request

    body: dict[str, Any] = {"model": model, "max_tokens": 9, "messages": messages}
    if tools:
        body["tools"] = TOOLS
    if user is not None:
        body["metadata"] = {"user_id": user}
    return anthropic_request(body)


def test_a_plain_chat_beside_a_tool_agent_is_a_run_of_its_own(tmp_path: Path) -> None:
    """Two agents in one process: a tool-less chat of the same model naming no sender is
    a conversation, not a side call; a tool-less call of another model is a side call."""
    from regista.types import LlmResponse
    from regista.wire.sessions import SessionBook

    book = SessionBook(tmp_path)
    hi = LlmResponse.model_validate({"content": [{"type": "text", "text": "hi"}]})
    agent = [{"role": "user", "content": "use a tool"}]
    chat = [{"role": "user", "content": "just chat"}]
    book.record("anthropic", _call("m", agent, tools=True), hi)
    book.record("anthropic", _call("m", chat, tools=False), hi)
    chat2 = [*chat, {"role": "assistant", "content": "hi"}, {"role": "user", "content": "more"}]
    book.record("anthropic", _call("m", chat2, tools=False), hi)
    book.record("anthropic", _call("small", [{"role": "user", "content": "title?"}], False), hi)
    book.close()
    runs = sorted((Trace.load(p) for p in tmp_path.glob("*.jsonl")), key=lambda t: t.start.task)
    assert [t.start.task for t in runs] == ["just chat", "use a tool"]
    assert len(runs[0].steps()) == 2  # the chat's two calls
    assert [s.kind for s in runs[1].steps()] == ["model", "model"]  # the title: a side step


TODAY_BLOCKS = [
    {"type": "thinking", "thinking": "Search first.", "signature": "sig-today"},
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
     "input": {"query": "regista"}},
    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
     "content": [{"type": "web_search_result", "url": "https://e.x/", "title": "E",
                  "encrypted_content": "enc", "page_age": None}]},
    {"type": "text", "text": "It is a harness.",
     "citations": [{"type": "web_search_result_location", "url": "https://e.x/", "title": "E",
                    "encrypted_index": "idx", "cited_text": "a harness"}]},
]  # fmt: skip


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_todays_blocks_are_recorded_and_served_as_sent(tmp_path: Path, stream: bool) -> None:
    """Thinking with its signature, server tool blocks and citations (streamed as
    ``citations_delta``) are recorded as the SDK assembled them, and a replay serves the
    same message back."""

    def ask(client: anthropic.Anthropic) -> list[dict[str, Any]]:
        kwargs: dict[str, Any] = dict(
            model="claude-opus-4-8", max_tokens=99, messages=[{"role": "user", "content": "q"}]
        )
        if stream:
            with client.messages.stream(**kwargs) as s:
                message = s.get_final_message()
        else:
            message = client.messages.create(**kwargs)
        return [b.model_dump(exclude_none=True) for b in message.content]

    with FakeAnthropicServer() as fake:
        fake.answer_with(lambda body: {"content": TODAY_BLOCKS})
        app = create_app(tmp_path, upstreams={"anthropic": fake.url})
        with BackgroundServer(app) as server:
            client = anthropic.Anthropic(api_key="k", base_url=f"{server.url}/v1/record/anthropic")
            live = ask(client)
            book(app.state.ctx).close()
            (path,) = tmp_path.glob("*.jsonl")
            ((_, recorded),) = Trace.load(path).llm_calls()
            assert [b["type"] for b in recorded.content] == [b["type"] for b in TODAY_BLOCKS]
            assert recorded.content[3]["citations"] == TODAY_BLOCKS[3]["citations"]
            assert recorded.content[1]["input"] == {"query": "regista"}
            import httpx

            made = httpx.post(f"{server.url}/v1/replays", json={"run": Trace.load(path).session_id})
            replayed = ask(
                anthropic.Anthropic(api_key="k", base_url=made.json()["anthropic_base_url"])
            )
    assert replayed == live


def test_a_call_that_would_not_read_back_is_not_written(tmp_path: Path) -> None:
    from regista.types import LlmResponse
    from regista.wire.sessions import SessionBook

    book = SessionBook(tmp_path)
    hi = LlmResponse.model_validate({"content": [{"type": "text", "text": "hi"}]})
    bad = [{"role": "user", "content": [{"type": 5}]}]
    with pytest.raises(ValueError, match=r"messages\[0\]\.content\[0\]\.type"):
        book.record("anthropic", _call("m", bad, tools=True), hi)
    book.record("anthropic", _call("m", [{"role": "user", "content": "ok"}], tools=True), hi)
    book.close()
    for path in found(tmp_path):
        Trace.load(path)  # every trace written reads back


def test_a_count_before_the_first_call_starts_the_conversations_run(tmp_path: Path) -> None:
    from regista.types import LlmResponse
    from regista.wire.sessions import SessionBook

    book = SessionBook(tmp_path)
    asked = [{"role": "user", "content": "use a tool"}]
    count = LlmResponse(content=[], stop_reason=None, count_tokens={"input_tokens": 4})
    book.record("anthropic", _call("m", asked, tools=True), count, side="count_tokens")
    hi = LlmResponse.model_validate({"content": [{"type": "text", "text": "hi"}]})
    book.record("anthropic", _call("m", asked, tools=True), hi)
    book.close()
    (path,) = tmp_path.glob("*.jsonl")
    trace = Trace.load(path)
    assert trace.start.task == "use a tool"
    assert [(e.model_extra or {}).get("side") for e in trace.events if e.type == "llm.request"] == [
        "count_tokens",
        None,
    ]
    assert trace.end is not None and trace.end.output == "hi"
