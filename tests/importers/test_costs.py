"""The price table, a call's cost, a run's tokens and cost in every view, and price files."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from regista import pricing
from regista.errors import UserError
from regista.pricing import DATE, SOURCE, cost_usd, parse_prices, price_for, round_cost
from regista.tokens import Tokens, token_totals, tokens_of

from .cc_fixtures import CCSession, text

OPUS_1H = {
    "input_tokens": 10,
    "output_tokens": 100,
    "cache_creation_input_tokens": 3000,
    "cache_read_input_tokens": 50000,
    "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 2000},
}


def test_one_hour_cache_writes_cost_twice_the_input_rate() -> None:
    """They were priced at the 5-minute rate (1.25×): 29-36 % under on Opus sessions."""
    # 10×5 + 100×25 + 1000×6.25 + 2000×10 + 50000×0.5 = 53,800 per million
    assert cost_usd("claude-opus-4-7", OPUS_1H) == pytest.approx(0.0538)
    five = dict(OPUS_1H, cache_creation={"ephemeral_5m_input_tokens": 3000})
    assert cost_usd("claude-opus-4-7", five) == pytest.approx(0.0463)
    # No split recorded: the API's default, five minutes.
    plain = {k: v for k, v in OPUS_1H.items() if k != "cache_creation"}
    assert cost_usd("claude-opus-4-7", plain) == pytest.approx(0.0463)


@pytest.mark.parametrize(
    ("model", "entry"),
    [
        ("claude-opus-4-7", "claude-opus-4-7"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("us.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1"),
        ("global.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("claude-opus-4-6[1m]", "claude-opus-4-6"),
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4.1-nano", "gpt-4.1-nano"),
        ("gpt-5", "gpt-5"),
        ("gpt-5.2", "gpt-5.2"),
        ("o3", "o3"),
        ("o4-mini", "o4-mini"),
        ("gpt-5-codex", "gpt-5-codex"),
        ("gpt-5.1-codex-max", "gpt-5.1-codex-max"),
        ("gpt-5.3-codex", "gpt-5.3-codex"),
        ("codex-mini-latest", "codex-mini"),
        ("openai/gpt-4.1", "gpt-4.1"),
    ],
)
def test_the_table_prices_every_form_of_a_model_id(model: str, entry: str) -> None:
    assert price_for(model) is pricing.PRICES[entry]


def test_openai_cached_input_has_its_own_rate() -> None:
    # Codex usage as imported: uncached input, cached input as cache reads.
    usage = {"input_tokens": 1000, "cache_read_input_tokens": 9000, "output_tokens": 500}
    # 1000×0.15 + 9000×0.075 + 500×0.6 = 1,125 per million
    assert cost_usd("gpt-4o-mini", usage) == pytest.approx(0.001125)


def test_a_long_prompt_is_billed_at_the_long_rate() -> None:
    long = {"input_tokens": 150_000, "cache_read_input_tokens": 100_000, "output_tokens": 1000}
    # past 200k tokens of prompt, Sonnet 4.5 bills $6 in, $0.60 cache reads, $22.50 out
    assert cost_usd("claude-sonnet-4-5", long) == pytest.approx(0.9 + 0.06 + 0.0225)


def test_the_table_says_its_source_and_date() -> None:
    assert DATE and "claude.com" in SOURCE and "openai.com" in SOURCE
    assert f"price table {DATE}: claude-opus-4-7" == pricing.cost_basis(
        1.0, "claude-opus-4-7", recorded=False
    )
    assert pricing.cost_basis(None, "my-model") == "unknown: no price for my-model"
    assert pricing.cost_basis(0.5) == "recorded"


def test_costs_are_rounded_for_output() -> None:
    """MCP returned 0.004410000000000001."""
    assert round_cost(0.001 + 0.00341) == 0.00441
    assert json.dumps(round_cost(0.004410000000000001)) == "0.00441"
    assert round_cost(None) is None


def test_tokens_read_the_cache_split_and_reasoning() -> None:
    t = tokens_of(OPUS_1H)
    assert t == Tokens(10, 100, 50000, 1000, 2000, 0)
    assert t.total == 53110
    codex = {"input_tokens": 5, "output_tokens": 40, "reasoning_output_tokens": 30}
    assert tokens_of(codex).reasoning == 30
    assert token_totals([OPUS_1H, None, {}, codex]) == Tokens(15, 140, 50000, 1000, 2000, 30)
    assert tokens_of(t.usage_dict()) == t
    assert "cache read 50,000" in t.text() and "5m 1,000 / 1h 2,000" in t.text()


# -- a run's cost and tokens, in every view ---------------------------------------------


def _import(tmp_path: Path, session: CCSession, compact_usage: dict | None = None) -> Path:
    """``session`` written as Claude Code writes it (with its compaction's summarising call
    in a subagent file when ``compact_usage`` is given), imported; the main trace."""
    from regista.importers import convert, write_runs

    src = session.write(tmp_path / "cc" / f"{session.session_id}.jsonl")
    if compact_usage is not None:
        c = CCSession(
            session_id=session.session_id,
            agent_id="acompact-e1f845",
            sidechain=True,
            model=session.model,
        )
        c.prompt("Your task is to create a detailed summary of the conversation so far.")
        c.answer(text("<summary>The story so far</summary>"), usage=compact_usage)
        c.write(src.parent / src.stem / "subagents" / "agent-acompact-e1f845.jsonl")
    return write_runs(convert("claude-code", src), tmp_path / "traces")[0]


def _opus_session(sid: str = "11111111-2222-4333-8444-555555555555") -> CCSession:
    s = CCSession(session_id=sid, model="claude-opus-4-7")
    s.prompt("Summarise the log")
    s.answer(text("Done."), usage=dict(OPUS_1H), stop_reason="end_turn")
    return s


def _compacted_session() -> CCSession:
    s = CCSession(session_id="22222222-3333-4444-8555-666666666666", model="claude-opus-4-7")
    s.prompt("Keep going")
    s.answer(text("one"), usage=dict(OPUS_1H), stop_reason="end_turn")
    s.compact("The story so far")
    s.prompt("and then?")
    s.answer(text("two"), usage=dict(OPUS_1H), stop_reason="end_turn")
    return s


def test_a_compaction_s_cost_is_part_of_its_run_s(tmp_path: Path) -> None:
    """The session's cost left the compaction's out ($9.53 against $9.66)."""
    from regista.trace.reader import Trace

    trace = Trace.load(_import(tmp_path, _compacted_session(), dict(OPUS_1H)))
    comp = next(ev for ev in trace.events if ev.type == "context.compaction")
    assert comp.cost_usd == pytest.approx(0.0538)
    s = trace.summary()
    assert s.cost_usd == pytest.approx(3 * 0.0538)
    assert s.tokens == Tokens(30, 300, 150000, 3000, 6000, 0)


def test_a_compaction_s_step_shows_its_tokens_and_cost(tmp_path: Path) -> None:
    """The debugger's step pane said nothing of a compaction's tokens and cost, though its
    row counts its tokens and the run's cost adds its cost."""
    import io

    from rich.console import Console

    from regista.trace.reader import Trace
    from regista_tui.widgets.step.render import render_step

    trace = Trace.load(_import(tmp_path, _compacted_session(), dict(OPUS_1H)))
    (step,) = [st for st in trace.steps() if st.kind == "compaction"]
    console = Console(width=300, record=True, file=io.StringIO())
    console.print(render_step(step))
    shown = console.export_text()
    assert f"tokens {tokens_of(OPUS_1H).text(brief=True)}" in shown
    assert "$0.0538" in shown


def test_every_view_gives_the_same_tokens_and_cost(tmp_path: Path) -> None:
    """``show`` printed ``Tokens in 180 · out 28,763`` for a session with 12.3 M cache
    tokens; MCP returned unrounded sums; every view now reads the same facts."""
    from regista.cli.cmd_show import facts
    from regista.cli.show_pass import StepsPass
    from regista.store.mcp_server import RunsTools
    from regista.store.runs import list_runs
    from regista.trace.index import read_summary
    from regista.trace.listing import Listing
    from regista.trace.reader import Trace

    path = _import(tmp_path, _compacted_session(), dict(OPUS_1H))
    want_tokens = Tokens(30, 300, 150000, 3000, 6000, 0).as_dict()
    want_cost = round(3 * 0.0538, 6)
    shown = facts(StepsPass(Listing.load(path), 0).glance, Listing.load(path))
    assert shown["tokens"] == want_tokens
    assert shown["cost_usd"] == want_cost and shown["cost_basis"] == "recorded"
    assert read_summary(path).tokens.as_dict() == want_tokens
    assert Trace.load(path).summary().tokens.as_dict() == want_tokens
    run = next(r for r in list_runs(path.parent).runs if r.path == path)
    assert run.to_dict()["tokens"] == want_tokens
    assert run.to_dict()["cost_usd"] == want_cost
    mcp = RunsTools(path.parent).run_summary(path.stem)
    assert mcp["tokens"] == want_tokens and mcp["cost_usd"] == want_cost
    from regista.server.runs import _summary

    served = _summary(Trace.load(path))  # GET /v1/runs/{id}
    assert served["tokens"] == want_tokens and served["cost_usd"] == want_cost
    out = subprocess.run(
        [sys.executable, "-m", "regista", "show", str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        check=True,
    ).stdout
    assert "in 30 · out 300 · cache read 150,000 · cache write 5m 3,000 / 1h 6,000" in out
    assert "$0.1614 (recorded)" in out


def test_an_unknown_part_makes_the_cost_unknown_everywhere(tmp_path: Path) -> None:
    """An imported run's header said $0.0000 while its steps said "cost unknown"."""
    from regista.store.runs import list_runs
    from regista.trace.reader import Trace

    s = CCSession(session_id="33333333-4444-4555-8666-777777777777", model="my-own-model")
    s.prompt("hi")
    s.answer(text("hello"), stop_reason="end_turn")
    path = _import(tmp_path, s)
    trace = Trace.load(path)
    assert trace.end is not None and trace.end.cost_usd is None
    summary = trace.summary()
    assert summary.cost_usd is None
    assert summary.cost_basis == "unknown: no price for my-own-model"
    run = next(r for r in list_runs(path.parent).runs if r.path == path)
    assert run.to_dict()["cost_usd"] is None
    assert run.to_dict()["cost_basis"] == "unknown: no price for my-own-model"


def test_the_share_header_says_cost_once(tmp_path: Path) -> None:
    """It read "cost cost unknown"."""
    page = (Path(pricing.__file__).parent / "share" / "page.js").read_text()
    assert 'item("cost", cost(' not in page
    assert 'item("cost", amount(h.cost_usd)' in page


# -- price files -------------------------------------------------------------------------


def test_a_price_file_adds_and_replaces_prices(tmp_path: Path, monkeypatch) -> None:
    f = tmp_path / "prices.json"
    f.write_text(json.dumps({"my-model": {"input": 1, "output": 4}, "gpt-4o": {"input": 2}}))
    monkeypatch.setattr(pricing, "PRICES", dict(pricing.PRICES))
    monkeypatch.setattr(pricing, "_FROM", {})
    assert pricing.load_prices(f) == [f]
    assert cost_usd("my-model", {"input_tokens": 1_000_000}) == pytest.approx(1.0)
    assert pricing.PRICES["gpt-4o"].output == 10.0  # the fields not given stay the table's
    assert pricing.cost_basis(1.0, "my-model", recorded=False) == f"{f}: my-model"


def test_the_price_file_is_found_by_environment_variable(tmp_path: Path) -> None:
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"my-model": {"input": 2, "output": 8}}))
    code = (
        "from regista.pricing import cost_usd; "
        "print(cost_usd('my-model', {'input_tokens': 1000000}))"
    )
    env = {**os.environ, "REGISTA_PRICES": str(f)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "2.0"
    env["REGISTA_PRICES"] = str(tmp_path / "missing.json")
    bad = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert "no such price file" in bad.stderr


@pytest.mark.parametrize(
    ("doc", "says"),
    [
        (b"{", "not valid JSON"),
        (b"[]", "JSON object of model id to prices"),
        (b'{"m": 3}', "must be an object"),
        (b'{"m": {"input": "1"}}', "must be a number"),
        (b'{"m": {"input": -1, "output": 1}}', "must be a number"),
        (b'{"m": {"inp": 1}}', "unknown field 'inp'"),
        (b'{"m": {"input": 1}}', "needs at least 'input' and 'output'"),
        (b'{"m": {"input": 1e999, "output": 1}}', "must be a number"),
    ],
)
def test_a_malformed_price_file_is_one_clear_error(doc: bytes, says: str) -> None:
    with pytest.raises(UserError, match=says) as e:
        parse_prices(doc, "prices.json")
    assert str(e.value).startswith("prices.json: ")


def _mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        op = rng.random()
        at = rng.randrange(len(b) + 1)
        if op < 0.4 and b:
            del b[min(at, len(b) - 1)]
        elif op < 0.8:
            b.insert(at, rng.choice(b'{}[]",:-.0123456789eE tnul\\x\xff'))
        else:
            b[at:at] = rng.choice([b'"input"', b"null", b"1e999", b"[]", b"{}", b'"a"', b"-0"])
    return bytes(b)


def test_fuzz_the_price_file_reader() -> None:
    """Any bytes: prices, or one UserError; never another exception."""
    seed = int(os.environ.get("REGISTA_FUZZ_SEED", "25"))
    rng = random.Random(seed)
    good = json.dumps(
        {"my-model": {"input": 1, "output": 4, "cache_read": 0.1}, "gpt-4o": {"output": 9}}
    ).encode()
    for i in range(1500):
        data = _mutate(rng, good)
        try:
            prices = parse_prices(data, "p.json")
        except UserError as e:
            assert str(e).startswith("p.json: "), (seed, i, data)
        else:
            for price in prices.values():
                assert price.input >= 0 and price.output >= 0, (seed, i, data)


def _otlp_chat(span_id: str, start: int, model: str) -> dict:
    from .test_otlp import _span

    return _span(
        span_id,
        f"chat {model}",
        start,
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model,
            "gen_ai.usage.input_tokens": 1000,
            "gen_ai.usage.output_tokens": 100,
        },
    )


def test_an_imported_run_s_cost_is_its_calls_cost(tmp_path: Path) -> None:
    """An OTLP import said $0.0000 for the run while its steps said "cost unknown"; a span
    without a recorded cost is priced from the table."""
    from regista.importers.otlp import convert_request
    from regista.trace.reader import Trace

    from .test_otlp import _request

    def run(*models: str) -> Trace:
        spans = [_otlp_chat(f"eee19b7ec3c1b1{i:02d}", 1000 * i, m) for i, m in enumerate(models)]
        data = convert_request(_request(*spans)).main.to_bytes()
        return Trace.from_bytes(data, "<otlp>")

    unknown = run("gpt-4o-mini", "my-own-model")
    costs = [ev.cost_usd for ev in unknown.events if ev.type == "llm.response"]
    assert costs == [pytest.approx(0.00021), None]
    assert unknown.end is not None and unknown.end.cost_usd is None
    assert unknown.summary().cost_usd is None
    known = run("gpt-4o-mini", "gpt-4o-mini")
    assert known.end is not None and known.end.cost_usd == pytest.approx(0.00042)


def test_the_tui_counts_every_token(tmp_path: Path) -> None:
    """The token column counted input plus output only; the header showed no tokens; the
    step view showed no cost for a step whose cost is unknown."""
    from rich.console import Console

    from regista.trace.reader import Trace
    from regista_tui.__main__ import open_index
    from regista_tui.rows import row_of
    from regista_tui.widgets.header.session_header import _header_text
    from regista_tui.widgets.step.render import render_step

    path = _import(tmp_path, _opus_session())
    trace = Trace.load(path)
    [step] = trace.steps()
    assert row_of(step).tokens == tokens_of(OPUS_1H).total == 53110
    index, _ = open_index(path)
    index.warm()
    assert "10/100+53k tokens" in _header_text(index, "", "").plain
    index.close()

    s = CCSession(session_id="44444444-5555-4666-8777-888888888888", model="my-own-model")
    s.prompt("hi")
    s.answer(text("hello"), stop_reason="end_turn")
    [step] = Trace.load(_import(tmp_path, s)).steps()
    console = Console(width=300, record=True)
    console.print(render_step(step))
    shown = console.export_text()
    assert "cost unknown" in shown and "cache read 15,120" in shown


def test_a_project_price_file_and_a_malformed_one_in_the_cli(tmp_path: Path) -> None:
    """``.regista/prices.json`` in the working directory is read; a malformed price file
    stops the command with one line naming it, never a traceback."""
    s = CCSession(session_id="55555555-6666-4777-8888-999999999999", model="my-own-model")
    s.prompt("hi")
    s.answer(text("hello"), stop_reason="end_turn")
    src = s.write(tmp_path / "cc" / f"{s.session_id}.jsonl")
    project = tmp_path / "project"
    (project / ".regista").mkdir(parents=True)
    (project / ".regista" / "prices.json").write_text(
        json.dumps({"my-own-model": {"input": 1, "output": 1}})
    )
    env = {k: v for k, v in os.environ.items() if k != "REGISTA_PRICES"}
    env["HOME"] = str(tmp_path / "home")
    cmd = [sys.executable, "-m", "regista", "import", "claude-code", str(src)]
    traces = ["--trace-dir", str(tmp_path / "traces")]
    done = subprocess.run(cmd + traces, cwd=project, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    from regista.trace.reader import Trace

    [path] = (tmp_path / "traces").glob("*.jsonl")
    assert Trace.load(path).summary().cost_usd is not None
    (project / ".regista" / "prices.json").write_text('{"my-own-model": {"input": "1"}}')
    bad = subprocess.run(cmd + traces, cwd=project, env=env, capture_output=True, text=True)
    assert bad.returncode != 0
    assert "prices.json: 'my-own-model'.input must be a number" in bad.stderr
    assert "Traceback" not in bad.stderr
