"""``Agent``: the user-facing front of the loop."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from regista.aio import run_sync
from regista.context import ContextConfig
from regista.defaults import DEFAULT_TRACE_DIR
from regista.loop import Clock, RunResult, SessionConfig, run_session
from regista.policy import ToolCallInfo
from regista.providers.base import Provider
from regista.tools import Tool, ToolRegistry
from regista.types import OnEvent, OnText

__all__ = ["Agent", "RunResult"]


class Agent:
    """An LLM agent whose every session writes a trace.

    Args:
        model: Model name sent in every request (e.g. ``"claude-sonnet-4-6"``).
        instructions: The system prompt.
        tools: ``@tool`` functions (plain functions are wrapped).
        provider: Who answers; ``None`` means ``AnthropicProvider(model)``.
        policy: ``policy(call) -> bool | Decision`` (may be async); ``None`` allows all.
        trace_dir: Where traces are written.
        max_turns: Model calls per session before it stops with ``max_turns``.
        context: When to compact the conversation (``None``: never).
        max_tokens: ``max_tokens`` of each request.
        params: Sampling parameters (temperature, top_p, stop_sequences, …).
        agent_ref: ``"module:attr"`` that re-creates this agent; found automatically for
            agents bound to a module global or made by a module-level factory.
        fsync: ``fsync`` the trace after every event.
        redact: Replace secret shapes (API keys, bearer tokens, AWS keys, passwords in
            URLs, private keys) in the trace by ``[REDACTED:<kind>]`` as it is written.
            The model still sees them; only the trace does not. ``None``: on, unless
            ``regista --no-redact`` turned it off for the process.
        metadata: Free-form data recorded in ``session.start``.
        clock: Timestamps and durations (``regista.loop.FakeClock`` for byte-identical
            traces in tests and samples).
        session_id: A fixed session id (byte-identical traces); ``None`` makes a new ULID
            per run, which is what every other use wants.
    """

    def __init__(
        self,
        model: str = "claude-sonnet-4-6",
        instructions: str | None = None,
        tools: Sequence[Tool | Callable[..., Any]] = (),
        provider: Provider | None = None,
        policy: Callable[[ToolCallInfo], Any] | None = None,
        trace_dir: str | Path = DEFAULT_TRACE_DIR,
        max_turns: int = 20,
        context: ContextConfig | None = None,
        *,
        max_tokens: int = 4096,
        params: dict[str, Any] | None = None,
        tool_choice: dict[str, Any] | None = None,
        agent_ref: str | None = None,
        fsync: bool = False,
        redact: bool | None = None,
        metadata: dict[str, Any] | None = None,
        clock: Clock | None = None,
        session_id: str | None = None,
    ) -> None:
        self.model = model
        self.instructions = instructions
        self.tools = ToolRegistry(list(tools))
        self._provider = provider
        self.policy = policy
        self.trace_dir = Path(trace_dir)
        self.max_turns = max_turns
        self.context = context
        self.max_tokens = max_tokens
        self.params = dict(params or {})
        self.tool_choice = tool_choice
        self.fsync = fsync
        self.redact = redact
        self.metadata = dict(metadata or {})
        self._agent_ref = agent_ref
        self.clock = clock
        self.session_id = session_id
        self._origin = _creator(sys._getframe(1))

    @property
    def provider(self) -> Provider:
        """The provider; an ``AnthropicProvider`` is made (and the SDK loaded) on first use."""
        if self._provider is None:
            from regista.providers.anthropic import AnthropicProvider

            self._provider = AnthropicProvider(self.model)
        return self._provider

    @provider.setter
    def provider(self, value: Provider) -> None:
        self._provider = value

    @property
    def agent_ref(self) -> str | None:
        """``module:attr`` that re-creates this agent, when one is known."""
        if self._agent_ref:
            return self._agent_ref
        origin = self._origin
        if origin is None:
            return None
        module_name, func = origin
        module = sys.modules.get(module_name)
        if module is None or _importable_name(module) == "__main__":
            return None
        for name, value in vars(module).items():
            if value is self and not name.startswith("_"):
                return f"{_importable_name(module)}:{name}"
        if func is not None:
            return f"{_importable_name(module)}:{func}"
        return None

    def config(self) -> SessionConfig:
        return SessionConfig(
            model=self.model,
            instructions=self.instructions,
            tools=self.tools,
            policy=self.policy,
            max_turns=self.max_turns,
            max_tokens=self.max_tokens,
            params=self.params,
            tool_choice=self.tool_choice,
            context=self.context,
            agent_ref=self.agent_ref,
            trace_dir=self.trace_dir,
            fsync=self.fsync,
            redact=self.redact,
            metadata=self.metadata,
            clock=self.clock,
            session_id=self.session_id,
        )

    async def run(
        self,
        task: str,
        *,
        on_event: OnEvent | None = None,
        on_text: OnText | None = None,
    ) -> RunResult:
        """Run one session on ``task``.

        Args:
            on_event: Called with each trace event right after it is written.
            on_text: Called with ``(step, delta)`` as a streaming provider generates text.
        """
        return await run_session(
            self.config(), task, self.provider, on_event=on_event, on_text=on_text
        )

    def run_sync(self, task: str) -> RunResult:
        """``run`` for code that is not async (also works where a loop is running, e.g.
        in a notebook: the session then runs on a helper thread)."""
        return run_sync(self.run(task))

    async def resume(self, trace_path: str | Path, **kwargs: Any) -> RunResult:
        """Continue an interrupted session (see :func:`regista.replay.resume`)."""
        from regista.replay import resume

        return await resume(self, trace_path, **kwargs)


def _creator(frame: Any) -> tuple[str, str | None] | None:
    """Where an agent was made: (module, module-level factory name or None)."""
    module_name = frame.f_globals.get("__name__")
    if not module_name:
        return None
    code: Any = frame.f_code
    if code is None:
        return None
    if code.co_name == "<module>":
        return module_name, None
    candidate = frame.f_globals.get(code.co_name)
    fn = getattr(candidate, "__wrapped__", candidate)
    if (
        getattr(fn, "__code__", None) is code
        and _no_required_args(fn)
        and _returns_the_call(code, frame.f_lasti)
    ):
        return module_name, str(frame.f_code.co_name)
    return module_name, None


def _returns_the_call(code: Any, call_offset: int) -> bool:
    """Whether the function returns the ``Agent(...)`` it is calling at ``call_offset``.

    A no-argument function that makes an agent only to use it (``def main(): agent =
    Agent(...); agent.run_sync(...)``) is not a factory: recording it as ``agent_ref``
    would make replay and fork call it, and run it, to get an agent back.
    """
    import dis

    after = [i for i in dis.get_instructions(code) if i.offset > call_offset]
    return bool(after) and after[0].opname == "RETURN_VALUE"


def _no_required_args(fn: Any) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        for p in sig.parameters.values()
    )


def _importable_name(module: Any) -> str:
    name = str(module.__name__)
    if name == "__main__":
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.name:
            return str(spec.name)
    return name
