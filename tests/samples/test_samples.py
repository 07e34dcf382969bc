"""The sample refund agent, its offline demo model, and the committed sample traces."""

from __future__ import annotations

import gc
from pathlib import Path

import orjson
import pytest

from regista.context import SUMMARY_SYSTEM, compaction_request
from regista.samples import generate, refund
from regista.samples.demo_model import Facts, facts_of_messages, refund_model
from regista.samples.orders_db import OrdersDb
from regista.trace.events import ContextCompaction, ErrorEvent
from regista.trace.reader import Trace
from regista.types import LlmRequest

SAMPLES = Path(__file__).parents[2] / "sample_traces"
NAMES = [s.name for s in generate.SAMPLES]


pytestmark = pytest.mark.usefixtures("sample_db")  # agents made from agent_ref


async def test_regenerating_gives_the_committed_files_byte_for_byte(tmp_path: Path) -> None:
    written = await generate.generate(tmp_path / "out")
    assert sorted(p.name for p in written) == sorted(f"{n}.jsonl" for n in NAMES)
    for path in written:
        committed = SAMPLES / path.name
        assert committed.exists(), f"{path.name} is not committed: run the generator"
        assert path.read_bytes() == committed.read_bytes(), (
            f"{path.name} differs from the committed sample: run "
            "`python -m regista.samples.generate` and commit the result"
        )


def test_generator_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert generate.main([str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == sorted(f"{n}.jsonl" for n in NAMES)
    assert generate.main(["a", "b"]) == 2


@pytest.mark.parametrize("name", NAMES)
def test_samples_are_synthetic_and_recreatable(name: str) -> None:
    trace = Trace.load(SAMPLES / f"{name}.jsonl")
    start = trace.start
    assert start.metadata["synthetic"] is True
    assert start.provider == "scripted"
    assert start.agent_ref and start.agent_ref.startswith("regista.samples.refund:")
    assert trace.complete and trace.summary().cost_usd == 0.0
    assert all(resp.usage.input_tokens > 0 for _, resp in trace.llm_calls())


def test_the_happy_and_the_loop_runs() -> None:
    happy = Trace.load(SAMPLES / "refund_happy.jsonl")
    loop = Trace.load(SAMPLES / "refund_search_loop.jsonl")
    assert happy.start.task == loop.start.task
    assert happy.summary().stop_reason == "end_turn"
    assert [s.title for s in happy.steps() if s.kind == "tool"] == [
        "search_orders",
        "get_order",
        "issue_refund",
        "send_email",
    ]
    assert loop.summary().stop_reason == "max_turns"
    assert {s.title for s in loop.steps() if s.kind == "tool"} == {"search_orders"}
    # Same first model call; the runs part where the data differ (the search result).
    assert happy.request_hashes()[0] == loop.request_hashes()[0]
    assert happy.steps()[1].result.content != loop.steps()[1].result.content  # type: ignore[union-attr]


def test_the_denied_compaction_sample_shows_what_it_says() -> None:
    trace = Trace.load(SAMPLES / "refund_denied_compaction.jsonl")
    s = trace.summary()
    assert s.stop_reason == "end_turn" and s.denials == 1 and s.compactions == 1
    assert [e.where for e in trace.of_type(ErrorEvent)] == ["tool"]
    first_answer = trace.steps()[0].response
    assert first_answer is not None and len(first_answer.tool_uses) == 2  # parallel
    compaction = trace.of_type(ContextCompaction)[0]
    assert "ORD-2001" in compaction.summary and compaction.summary.startswith("Task: ")


# -- the demo model carries on from an edited tool result ---------------------------------


async def test_editing_a_loop_search_result_makes_the_fork_succeed(
    tmp_path: Path, sample_db: Path
) -> None:
    from regista.fork import ToolResultEdit, fork

    match = {
        "query": "Dana Whitfield",
        "matches": [
            {
                "order_id": "ORD-1042",
                "customer": "Dana Whitfield",
                "email": "dana.whitfield@example.com",
                "item": "Trailblazer 2 tent",
                "amount": 189.0,
                "status": "delivered",
            }
        ],
    }
    edit = ToolResultEdit(orjson.dumps(match).decode())
    result = await fork(
        SAMPLES / "refund_search_loop.jsonl", at_step=3, edit=edit, live_after=3,
        trace_dir=tmp_path,
    )  # fmt: skip
    assert result.stop_reason == "end_turn"
    tools = [s.title for s in Trace.load(result.trace_path).steps()[4:] if s.kind == "tool"]
    assert tools == ["get_order", "issue_refund", "send_email"]
    db = OrdersDb(sample_db, stale_index=True)  # what the live half really did
    assert [(r["order_id"], r["amount_cents"]) for r in db.refunds()] == [("ORD-1042", 18900)]
    assert db.outbox()[0]["to_addr"] == "dana.whitfield@example.com"


def _loop_request_with(result_text: str) -> LlmRequest:
    trace = Trace.load(SAMPLES / "refund_search_loop.jsonl")
    request = trace.llm_calls()[1][0]
    messages = orjson.loads(orjson.dumps(request.messages))
    messages[-1]["content"][0]["content"] = result_text
    return request.model_copy(update={"messages": messages})


def test_a_plain_text_edit_is_understood_too() -> None:
    answer = refund_model(_loop_request_with("Found it: ORD-1042"))
    assert [(b["name"], b["input"]) for b in answer["content"] if b["type"] == "tool_use"] == [
        ("get_order", {"order_id": "ORD-1042"})
    ]


def test_someone_elses_order_is_not_taken() -> None:
    lee = {"order_id": "ORD-1011", "customer": "Lee Park", "email": "lee.park@example.com"}
    other = {"matches": [{**lee, "item": "Trailblazer 2 tent"}]}
    answer = refund_model(_loop_request_with(orjson.dumps(other).decode()))
    (call,) = [b for b in answer["content"] if b["type"] == "tool_use"]
    assert call["name"] == "search_orders"


def test_usage_and_ids_are_deterministic() -> None:
    request = _loop_request_with("no matches")
    a, b = refund_model(request), refund_model(request)
    assert a == b
    assert a["usage"]["input_tokens"] > 100 and a["usage"]["output_tokens"] > 0
    other = refund_model(_loop_request_with("still nothing"))
    assert other["content"][1]["id"] != a["content"][1]["id"]


def test_summary_round_trips_the_facts() -> None:
    trace = Trace.load(SAMPLES / "refund_denied_compaction.jsonl")
    request = trace.llm_calls()[-1][0]
    facts = facts_of_messages(request.messages)  # starts with the summary
    assert facts.task == refund.TASK_TWO_ORDERS
    again = Facts()
    again.read_summary(facts.summary())
    assert again.summary() == facts.summary()
    assert (again.missing, again.refunded, again.failed) == (
        facts.missing,
        facts.refunded,
        facts.failed,
    )
    assert again.orders["ORD-2001"]["amount"] == 649.0


def test_the_model_answers_a_compaction_request() -> None:
    trace = Trace.load(SAMPLES / "refund_happy.jsonl")
    request = trace.llm_calls()[-1][0]
    config = refund.ContextConfig()
    summary = refund_model(compaction_request("m", request.messages, config))
    text = summary["content"][0]["text"]
    assert compaction_request("m", [], config).system == SUMMARY_SYSTEM
    assert text.startswith("Task: Customer Dana Whitfield")
    assert "- Refunded $189.00 on ORD-1042." in text
    assert "- Emailed dana.whitfield@example.com." in text


def test_an_unclear_task_gets_a_question_back() -> None:
    request = LlmRequest(
        model="m", messages=[{"role": "user", "content": [{"type": "text", "text": "Help!"}]}]
    )
    answer = refund_model(request)
    assert answer["stop_reason"] == "end_turn" and "order id" in answer["content"][0]["text"]


# -- the shop database --------------------------------------------------------------------


def test_stale_index_hides_new_orders_from_search_only(tmp_path: Path) -> None:
    fresh = OrdersDb(tmp_path / "a.sqlite")
    stale = OrdersDb(tmp_path / "b.sqlite", stale_index=True)
    assert [m["order_id"] for m in fresh.search("dana whitfield")] == ["ORD-1023", "ORD-1042"]
    assert [m["order_id"] for m in stale.search("dana whitfield")] == ["ORD-1023"]
    assert stale.get("ord-1042")["item"] == "Trailblazer 2 tent"


def test_refunds_are_checked_and_recorded(tmp_path: Path) -> None:
    db = OrdersDb(tmp_path / "shop.sqlite")
    with pytest.raises(LookupError):
        db.get("ORD-9999")
    assert db.refund("ORD-1042", 100, "part")["status"] == "partially refunded"
    with pytest.raises(ValueError, match=r"only \$89.00 left"):
        db.refund("ORD-1042", 100, "too much")
    with pytest.raises(ValueError, match="not delivered"):
        db.refund("ORD-1031", 10, "shipped")
    assert db.get("ORD-1042")["refunded"] == 100.0
    # The same file, opened again, keeps what happened.
    assert len(OrdersDb(tmp_path / "shop.sqlite").refunds()) == 1


def test_a_shop_of_its_own_making_is_removed_with_it(tmp_path: Path) -> None:
    db = OrdersDb()
    folder = db.path.parent
    assert db.get("ORD-1042") and folder.name.startswith("regista-shop-")
    del db
    gc.collect()
    assert not folder.exists()
    # A shop at a given path is the caller's: it stays.
    mine = OrdersDb(tmp_path / "shop.sqlite")
    del mine
    gc.collect()
    assert (tmp_path / "shop.sqlite").exists()


def test_policy_denies_big_refunds() -> None:
    from regista.policy import ToolCallInfo

    assert refund.refund_policy(ToolCallInfo("t", "issue_refund", {"amount": 20})) is True
    big = refund.refund_policy(ToolCallInfo("t", "issue_refund", {"amount": 649.0}))
    assert not big and "supervisor" in str(getattr(big, "reason", ""))
    assert not refund.refund_policy(ToolCallInfo("t", "issue_refund", {"amount": "lots"}))


def _pace() -> float:
    from regista.providers.scripted import ScriptedProvider

    provider = refund.demo_provider()
    assert isinstance(provider, ScriptedProvider)
    return provider.delay


def test_the_demo_models_pace_is_a_setting_the_environment_overrides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from regista import samples

    monkeypatch.delenv(refund.DELAY_ENV, raising=False)
    assert _pace() == 0.0
    monkeypatch.setattr(samples, "demo_delay", 0.35)
    assert _pace() == 0.35
    monkeypatch.setenv(refund.DELAY_ENV, "0")
    assert _pace() == 0.0
