"""agent_ref discovery, the public namespace, what importing regista loads, trace size."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import reply, use
from fresh import fresh_python

import regista
from regista import Agent
from regista.loop import FakeClock
from regista.providers import ScriptedProvider

_MODULE = textwrap.dedent(
    """
    from regista import Agent
    from regista.providers import ScriptedProvider

    def _p():
        return ScriptedProvider([{"content": [{"type": "text", "text": "hi"}]}])

    agent = Agent(provider=_p())

    def make_agent(trace_dir=".regista/traces"):
        return Agent(provider=_p(), trace_dir=trace_dir)

    def needs_args(name):
        return Agent(provider=_p())

    by_lambda = lambda: Agent(provider=_p())

    def _private_factory():
        return Agent(provider=_p())

    MADE = []

    def main():
        agent = Agent(provider=_p())
        MADE.append(agent)  # e.g. agent.run_sync(...): a script's entry point
    """
)


@pytest.fixture
def refmod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    (tmp_path / "refmod_for_tests.py").write_text(_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("refmod_for_tests", None)
    return importlib.import_module("refmod_for_tests")


def test_explicit_agent_ref_wins(refmod: Any) -> None:
    assert Agent(agent_ref="pkg.mod:thing").agent_ref == "pkg.mod:thing"


def test_module_global_and_factory(refmod: Any) -> None:
    assert refmod.agent.agent_ref == "refmod_for_tests:agent"
    assert refmod.make_agent().agent_ref == "refmod_for_tests:make_agent"


def test_no_ref_when_the_agent_cannot_be_recreated(refmod: Any) -> None:
    assert refmod.needs_args("x").agent_ref is None
    assert refmod.by_lambda().agent_ref is None
    assert Agent().agent_ref is None  # made inside a test function


def test_a_function_that_uses_an_agent_is_not_its_factory(refmod: Any) -> None:
    # Calling main() again to re-create the agent would run it.
    refmod.main()
    assert refmod.MADE[-1].agent_ref is None


def test_no_ref_for_a_script_run_as_main(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(
        "from regista import Agent\nagent = Agent()\nprint(agent.agent_ref)\n"
        "def f():\n    return Agent()\nprint(f().agent_ref)\n"
    )
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["None", "None"]


async def test_agent_ref_is_recorded_in_session_start(refmod: Any, tmp_path: Path) -> None:
    from regista.trace.reader import Trace

    result = await refmod.make_agent(trace_dir=tmp_path).run("hello")
    assert Trace.load(result.trace_path).start.agent_ref == "refmod_for_tests:make_agent"


def test_sample_factories_find_their_own_ref() -> None:
    from regista.samples import refund

    assert refund.refund_agent().agent_ref == "regista.samples.refund:refund_agent"
    assert (
        refund.refund_agent_stale_index().agent_ref
        == "regista.samples.refund:refund_agent_stale_index"
    )


# -- the public namespace ----------------------------------------------------------------


def test_public_namespace() -> None:
    assert sorted(regista.__all__) == sorted(
        [
            "Agent",
            "AgentLoadError",
            "ContextConfig",
            "Decision",
            "FakeClock",
            "ForkResult",
            "InvalidEditError",
            "MissingCredentialsError",
            "ModelAnswerEdit",
            "ProviderError",
            "RegistaError",
            "ReplayDivergence",
            "ReplayDivergenceWarning",
            "RequestHashMismatch",
            "RunDiff",
            "RunResult",
            "ScriptedProvider",
            "Tool",
            "ToolCallInfo",
            "ToolOutcome",
            "ToolResultEdit",
            "Trace",
            "TraceError",
            "TraceExistsError",
            "TraceFormatError",
            "TraceWarning",
            "TraceWriteError",
            "UnsupportedSchemaVersion",
            "UserError",
            "__version__",
            "allow",
            "current_tool_call",
            "deny",
            "diff_runs",
            "fork",
            "open_run",
            "replay",
            "resume",
            "rewind",
            "tool",
        ]
    )
    # Every public name resolves (the lazy ones included).
    for name in regista.__all__:
        assert getattr(regista, name) is not None
    from regista.providers import AnthropicProvider, ReplayProvider, ScriptedProvider
    from regista.trace.reader import Trace

    assert all((AnthropicProvider, ReplayProvider, ScriptedProvider, Trace))


def test_importing_the_engine_loads_no_ui_and_no_sdk() -> None:
    code = (
        "import sys, regista, regista.providers, regista.trace.reader\n"
        "import regista.samples.refund\n"
        "bad = [m for m in ('textual', 'rich', 'anthropic') if m in sys.modules]\n"
        "print(','.join(bad) or 'clean')\n"
    )
    out = fresh_python(code)
    assert out.strip() == "clean"


def test_public_names_load_on_first_use() -> None:
    """Reading a trace (the debugger's cold start) does not load the agent loop, and
    ``regista.replay`` / ``regista.fork`` stay the functions once their modules load."""
    code = (
        "import sys, regista.trace.index\n"
        "heavy = [m for m in ('regista.agent', 'regista.loop', 'regista.fork',\n"
        "         'regista.replay', 'regista.providers') if m in sys.modules]\n"
        "print(','.join(heavy) or 'light')\n"
        "import regista, regista.replay, regista.fork\n"
        "from regista.replay import resume\n"
        "print(regista.replay.__module__, regista.fork.__module__, resume.__name__)\n"
        "print(regista.replay.__name__, regista.fork.__name__, 'Agent' in dir(regista))\n"
    )
    out = fresh_python(code).split("\n")
    assert out[0] == "light"
    assert out[1] == "regista.replay regista.fork resume"
    assert out[2] == "replay fork True"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        regista.nope  # type: ignore[attr-defined]  # noqa: B018


# -- trace size grows linearly -----------------------------------------------------------


def _long_session(turns: int, tmp_path: Path) -> int:
    payload = "r" * 2048

    @regista.tool
    def fetch(page: int) -> str:
        """Fetch a page."""
        return f"{page}:{payload}"

    def model(request: Any) -> dict[str, Any]:
        n = sum(1 for m in request.messages if m["role"] == "assistant")
        return reply(use(f"toolu_{n}", "fetch", page=n), text=f"page {n}")

    agent = Agent(
        tools=[fetch],
        provider=ScriptedProvider(model),
        trace_dir=tmp_path / str(turns),
        max_turns=turns,
        clock=FakeClock(),
    )
    result = agent.run_sync("read everything")
    assert result.steps == 2 * turns  # a model call and a tool call per model turn
    return result.trace_path.stat().st_size


def test_trace_size_is_linear_in_session_length(tmp_path: Path) -> None:
    small, large = _long_session(200, tmp_path), _long_session(400, tmp_path)
    assert large <= 2.3 * small, (small, large)
