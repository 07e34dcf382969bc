"""Small agents and sessions that tests build traces from (no hand-edited blobs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from regista import Agent, ContextConfig, deny, tool
from regista.loop import FakeClock
from regista.providers import ScriptedProvider


def tool_use(id_: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": name, "input": args}


def answer(*blocks: dict[str, Any], text: str | None = None, **usage: int) -> dict[str, Any]:
    content = list(blocks)
    if text is not None:
        content.insert(0, {"type": "text", "text": text})
    has_tools = any(b["type"] == "tool_use" for b in content)
    return {
        "content": content,
        "stop_reason": "tool_use" if has_tools else "end_turn",
        "usage": {"input_tokens": usage.get("inp", 10), "output_tokens": usage.get("out", 5)},
    }


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


class Effects:
    """Counts what tools really did."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []


def weather_tools(effects: Effects) -> list[Any]:
    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city.

        Args:
            city: The city name.
        """
        effects.calls.append(("get_weather", {"city": city}))
        return f"Sunny in {city}, 21°C. " + "Details. " * 40

    @tool
    async def get_forecast(city: str, days: int = 3) -> dict[str, Any]:
        """The forecast for the next days."""
        effects.calls.append(("get_forecast", {"city": city, "days": days}))
        return {"city": city, "days": [{"day": i, "sky": "clear"} for i in range(days)]}

    @tool
    def flaky(reason: str) -> str:
        """Always fails."""
        effects.calls.append(("flaky", {"reason": reason}))
        raise RuntimeError(f"backend unavailable: {reason}")

    return [get_weather, get_forecast, flaky]


def no_rome(call: Any) -> Any:
    if call.input.get("city") == "Rome":
        return deny("Rome is out of scope")
    return True


RICH_SCRIPT = [
    answer(
        tool_use("toolu_a1", "get_weather", city="Paris"),
        tool_use("toolu_a2", "get_weather", city="Rome"),
        tool_use("toolu_a3", "get_forecast", city="Paris", days=2),
        text="Checking three things at once.",
    ),
    answer(tool_use("toolu_b1", "flaky", reason="retry"), text="One more source."),
    {"content": [{"type": "text", "text": "Summary: Paris sunny, Rome denied, flaky failed."}]},
    answer(tool_use("toolu_c1", "get_weather", city="Oslo")),
    answer(tool_use("toolu_d1", "get_weather", city="Lima")),
    answer(text="never reached"),
]


def rich_agent(
    trace_dir: Path,
    effects: Effects | None = None,
    *,
    provider: Any = None,
    instructions: str = "You are a greeter.",
    max_turns: int = 3,
) -> Agent:
    """Parallel tool calls, a denial, a tool error, a compaction and a max_turns stop."""
    return Agent(
        model="claude-sonnet-4-6",
        instructions=instructions,
        tools=weather_tools(effects or Effects()),
        provider=provider or ScriptedProvider(RICH_SCRIPT),
        policy=no_rome,
        trace_dir=trace_dir,
        max_turns=max_turns,
        context=ContextConfig(max_tokens=200, keep_last=1),
        clock=FakeClock(),
    )


SIMPLE_SCRIPT = [
    answer(tool_use("toolu_1", "get_weather", city="Paris"), text="Let me look."),
    answer(tool_use("toolu_2", "get_forecast", city="Paris", days=1)),
    answer(text="It is sunny in Paris."),
]


def by_turn(script: list[dict[str, Any]]) -> Any:
    """A model that answers by turn number (assistant messages so far), so it can take
    over mid-session (resume, fork) and still say the right thing."""

    def model(request: Any) -> dict[str, Any]:
        turn = sum(1 for m in request.messages if m["role"] == "assistant")
        return script[min(turn, len(script) - 1)]

    return model


def simple_agent(
    trace_dir: Path,
    effects: Effects | None = None,
    *,
    provider: Any = None,
    instructions: str = "You are a greeter.",
) -> Agent:
    return Agent(
        model="claude-sonnet-4-6",
        instructions=instructions,
        tools=weather_tools(effects or Effects()),
        provider=provider or ScriptedProvider(by_turn(SIMPLE_SCRIPT)),
        trace_dir=trace_dir,
        clock=FakeClock(),
    )


def write_whole(path: Path) -> None:
    """Rewrite a trace with every request whole (no references to tool results), so that
    a test that edits a recorded tool result by hand changes only that tool result."""
    import orjson

    from regista.trace.reader import Trace

    events = Trace.load(path).events
    path.write_bytes(b"".join(orjson.dumps(ev.model_dump(mode="json")) + b"\n" for ev in events))
