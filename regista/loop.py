"""The agent loop: model call → tool calls → model call …, every step written to the trace.

One loop serves live runs, replays, resumes and forks. What differs is plugged in:
the provider (live, a replay tape, or a tape with a fork's edit) and a ``ToolTape`` that
may answer a tool call from the recording instead of running it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from pathlib import Path
from typing import Any

from ulid import ULID

from regista.clock import Clock, FakeClock, SystemClock
from regista.context import (
    compaction_request,
    estimate_tokens,
    plan_compaction,
    summary_message,
)
from regista.defaults import trace_path as default_trace_path
from regista.errors import (
    ProviderError,
    RecordedEnding,
    RegistaError,
    ReplayDivergence,
    TraceWriteError,
)
from regista.policy import ToolCallInfo, evaluate_policy, policy_name
from regista.pricing import cost_usd, price_for
from regista.providers.base import Provider, ResponseMeta, meta_of
from regista.providers.tape import TapeProvider
from regista.savings import Savings
from regista.session import RecordedOutcome, RunResult, SessionConfig, ToolTape
from regista.tools import ToolOutcome
from regista.trace.recorder import TraceRecorder, tool_result_block
from regista.types import LlmRequest, LlmResponse, Message, OnEvent, OnText, Usage

__all__ = [
    "Clock",
    "FakeClock",
    "RecordedOutcome",
    "RunResult",
    "SessionConfig",
    "SystemClock",
    "ToolTape",
    "run_session",
]

DENIED_PREFIX = "Permission denied"
#: A tool ran but its result could not be written: what the trace says in its place.
UNRECORDED_PREFIX = "The tool ran, but its result could not be recorded"


async def _watched(result: Any, failed: list[BaseException]) -> Any:
    """Await an async ``on_text`` callback, noting what it raises."""
    try:
        return await result
    except Exception as exc:
        failed.append(exc)
        raise


class _Run:
    """The control flow of one session: what to ask, what to run, when to stop.

    What happened is written by the :class:`TraceRecorder` (``self.rec``), which also keeps
    the step numbers and the totals.
    """

    def __init__(
        self,
        config: SessionConfig,
        provider: Provider,
        recorder: TraceRecorder,
        tool_tape: ToolTape | None,
        on_text: OnText | None,
    ) -> None:
        self.c = config
        self.provider = provider
        self.rec = recorder
        self.tape = tool_tape
        self.on_text = on_text
        self.saved = Savings()
        self.diverged_at: int | None = None
        self.clock: Clock = config.clock or SystemClock()
        #: The tools of the last request (see :meth:`_tools`).
        self._schemas: list[dict[str, Any]] = []

    def _tools(self) -> list[dict[str, Any]]:
        """The tools' schemas: the last request's list while it holds the very same schemas,
        so that the recorder knows them by identity (no copy is changed once sent)."""
        made = self.c.tools.schemas()
        last = self._schemas
        if len(made) == len(last) and all(a is b for a, b in zip(made, last, strict=True)):
            return last
        self._schemas = made
        return made

    def _ms(self, t0: float) -> float:
        return round((self.clock.perf() - t0) * 1000, 3)

    def _account(self, model: str, meta: ResponseMeta, usage: Usage) -> float | None:
        """What an answer cost (nothing unless a live, priced model gave it); an answer
        from the recording counts as saved."""
        provider, source = meta.provider, meta.source
        if source == "recorded":
            self._save(model, provider, usage, meta.recorded_ms)
        if source != "live" or provider == "scripted":
            return 0.0
        return cost_usd(model, usage)

    def _save(self, model: str, provider: str, usage: Usage, model_ms: float) -> None:
        """Count a call the recording answered: what it would have cost again."""
        if provider == "scripted":
            saved_cost: float | None = 0.0
        else:  # priced quietly: the recording already warned about an unknown model
            saved_cost = cost_usd(model, usage) if price_for(model) is not None else None
        self.saved.add(usage.total_tokens, saved_cost, model_ms)

    # -- model calls ---------------------------------------------------------------------

    async def _complete(self, request: LlmRequest, step: int) -> LlmResponse:
        cb = None
        #: What the caller's own ``on_text`` raised: it is not the provider's error.
        failed: list[BaseException] = []
        if self.on_text is not None:
            on_text = self.on_text

            def cb(delta: str) -> Any:
                try:
                    result = on_text(step, delta)
                except Exception as exc:
                    failed.append(exc)
                    raise
                return _watched(result, failed) if inspect.isawaitable(result) else result

        try:
            return await self.provider.complete(request, on_text=cb)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if failed:  # however the provider passed it on, it is the caller's exception
                raise failed[0] from None
            if isinstance(exc, RegistaError):
                raise
            # a provider bug must still end the trace cleanly; a replay or fork passes
            # live calls on: name the provider that failed
            live = self.provider.live if isinstance(self.provider, TapeProvider) else None
            failed_provider = live or self.provider
            name = getattr(failed_provider, "name", type(failed_provider).__name__)
            raise ProviderError(f"provider {name!r} failed: {type(exc).__name__}: {exc}") from exc

    async def model_call(self, messages: list[Message]) -> LlmResponse:
        c = self.c
        # Built from the loop's own, already valid state: validating would copy every
        # message, and the request hasher recognises the history it has hashed by identity
        # (a copied history is compared message by message, quadratic in the session).
        # a fork to another model answers with it from its live point on (see fork.py)
        switch = getattr(self.provider, "model_now", None)
        request = LlmRequest.model_construct(
            model=(switch() if switch is not None else None) or c.model,
            system=c.instructions,
            messages=list(messages),
            tools=self._tools(),
            # the caller's dicts are copied: one changed in place later (between two
            # calls) is hashed and written as it is then, not known by identity
            tool_choice=None if c.tool_choice is None else dict(c.tool_choice),
            max_tokens=c.max_tokens,
            params=dict(c.params),
        )
        step = self.rec.request(request)
        t0 = self.clock.perf()
        response, meta, cost = await self._answer(request, step)
        self.rec.response(
            step,
            response,
            provider=meta.provider,
            source=meta.source,
            cost_usd=cost,
            duration_ms=self._ms(t0),
            matched=meta.matched,
            stream=meta.stream,
            server=meta.server,
        )
        return response

    async def _answer(
        self, request: LlmRequest, step: int
    ) -> tuple[LlmResponse, ResponseMeta, float | None]:
        """Ask the provider; say who answered and what it cost."""
        response: LlmResponse = await self._fail_step(step, self._complete(request, step))
        meta = meta_of(response, self.provider.name)
        cost = self._account(response.model or self.c.model, meta, response.usage)
        return response, meta, cost

    async def _fail_step(self, step: int, coro: Any) -> Any:
        try:
            return await coro
        except ReplayDivergence as exc:
            self.diverged_at = exc.step
            self.rec.error("replay", "ReplayDivergence", str(exc), step=step)
            raise
        except RecordedEnding:
            raise
        except RegistaError as exc:
            self.rec.error("provider", type(exc).__name__, str(exc), step=step)
            raise

    # -- compaction ----------------------------------------------------------------------

    async def maybe_compact(self, messages: list[Message]) -> list[Message]:
        cfg = self.c.context
        if cfg is None:
            return messages
        tokens = estimate_tokens(messages)
        if tokens <= cfg.max_tokens:
            return messages
        cut = plan_compaction(messages, cfg.keep_last)
        if cut is None:
            return messages
        replaced = messages[:cut]
        request = compaction_request(self.c.model, replaced, cfg)
        step = self.rec.next_step()
        t0 = self.clock.perf()
        response, meta, cost = await self._answer(request, step)
        self.rec.compaction(
            step,
            request,
            response,
            replaced=replaced,
            tokens_before=tokens,
            provider=meta.provider,
            source=meta.source,
            cost_usd=cost,
            duration_ms=self._ms(t0),
        )
        return [summary_message(response.text), *messages[cut:]]

    # -- tool calls ----------------------------------------------------------------------

    async def _decide(
        self, call: ToolCallInfo, step: int
    ) -> tuple[ToolOutcome | None, str, int | None]:
        """Write the permission decision; return a ready outcome (recorded or denied),
        or ``None`` when the tool must run, its source, and the recorded result's ``seq``."""
        recorded = self.tape.lookup(call, step) if self.tape is not None else None
        if recorded is not None:
            self.rec.decision(
                step, call.id, allowed=recorded.allowed, reason=recorded.reason, by="recorded"
            )
            outcome = ToolOutcome(recorded.content, recorded.is_error)
            return outcome, recorded.source, recorded.seq
        decision = await evaluate_policy(self.c.policy, call)
        self.rec.decision(
            step,
            call.id,
            allowed=decision.allowed,
            reason=decision.reason,
            by="policy" if self.c.policy is not None else "default",
        )
        if not decision.allowed:
            why = f": {decision.reason}" if decision.reason else ""
            return ToolOutcome(f"{DENIED_PREFIX}{why}", True), "live", None
        return None, "live", None

    async def _execute(self, call: ToolCallInfo, step: int) -> ToolOutcome:
        t = self.c.tools.get(call.name)
        if t is None:
            return ToolOutcome(f"Unknown tool {call.name!r}", True)
        try:
            return await t.invoke(call.input, call)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
            self.rec.error("tool", type(exc).__name__, message, step=step)
            return ToolOutcome(f"Tool {call.name} failed: {message}", True)

    def _record_result(
        self, call: ToolCallInfo, step: int, t0: float, outcome: ToolOutcome, source: str
    ) -> None:
        self.rec.tool_result(
            step,
            call.id,
            call.name,
            outcome.content,
            is_error=outcome.is_error,
            source=source,
            duration_ms=self._ms(t0),
        )

    async def _run_and_record(self, call: ToolCallInfo, step: int, t0: float) -> ToolOutcome:
        """Run one allowed call and write its result the moment it returns.

        When the result cannot be written (a full disk, a value nested too deeply), a
        short error result says so in its place if it fits, so that ``resume`` serves
        that instead of running the call (and its effect) again; the session then ends.
        """
        outcome = await self._execute(call, step)
        try:
            self._record_result(call, step, t0, outcome, "live")
        except TraceWriteError as exc:
            lost = ToolOutcome(f"{UNRECORDED_PREFIX}: {exc}", True)
            with contextlib.suppress(TraceWriteError):
                self._record_result(call, step, t0, lost, "live")
            raise
        return outcome

    async def tool_calls_of(self, response: LlmResponse) -> list[dict[str, Any]]:
        """Run a response's tool_use blocks.

        Every ``tool.call`` is written first, in order; then each call's decision, in order.
        A result is written the moment it is known: recorded and denied results at once
        (a recording's in the order it wrote them, so a strict replay writes the original's
        events in the original's order), and the allowed tools then run concurrently, each
        result written as its tool returns. A finished effect is on disk even while a slower
        call still runs. The next request lists the results in ``tool_use`` order.
        """
        calls: list[tuple[ToolCallInfo, int, float]] = []
        for block in response.tool_uses:
            call = ToolCallInfo(
                id=str(block.get("id")),
                name=str(block.get("name")),
                input=dict(block.get("input") or {}),
            )
            step = self.rec.tool_call(call.id, call.name, call.input)
            calls.append((call, step, self.clock.perf()))
        outcomes: list[ToolOutcome | asyncio.Task[ToolOutcome]] = []
        try:
            ready: list[tuple[int | None, int, ToolOutcome, str]] = []
            for i, (call, step, _) in enumerate(calls):
                known, source, seq = await self._decide(call, step)
                if known is not None:
                    ready.append((seq, i, known, source))
                outcomes.append(known or ToolOutcome(""))
            # known results first: a recording's in the order they were recorded (so a
            # replay writes what the original wrote), then the others in call order
            for _, i, known, source in sorted(ready, key=lambda r: (r[0] is None, r[0] or 0, r[1])):
                call, step, t0 = calls[i]
                self._record_result(call, step, t0, known, source)
            ready_at = {i for _, i, _, _ in ready}
            for i, (call, step, t0) in enumerate(calls):
                if i not in ready_at:
                    outcomes[i] = asyncio.ensure_future(self._run_and_record(call, step, t0))
            blocks: list[dict[str, Any]] = []
            for (call, _, _), item in zip(calls, outcomes, strict=True):
                outcome = item if isinstance(item, ToolOutcome) else await item
                blocks.append(tool_result_block(call.id, outcome.content, outcome.is_error))
            return blocks
        finally:
            for item in outcomes:
                if isinstance(item, asyncio.Task) and not item.done():
                    item.cancel()

    # -- the loop ------------------------------------------------------------------------

    async def run(self, task: str) -> tuple[str, str | None]:
        messages: list[Message] = [{"role": "user", "content": [{"type": "text", "text": task}]}]
        output: str | None = None
        while True:
            if self.rec.answers >= self.c.max_turns:
                return "max_turns", output
            if self.rec.answers > 0:
                messages = await self.maybe_compact(messages)
            response = await self.model_call(messages)
            output = response.text or output
            messages = [*messages, {"role": "assistant", "content": response.content}]
            if not response.tool_uses:
                return response.stop_reason or "end_turn", output
            results = await self.tool_calls_of(response)
            messages = [*messages, {"role": "user", "content": results}]


def new_session_id() -> str:
    return str(ULID())


async def run_session(
    config: SessionConfig,
    task: str,
    provider: Provider,
    *,
    provider_label: str | None = None,
    tool_tape: ToolTape | None = None,
    replay_of: str | None = None,
    forked_from: dict[str, Any] | None = None,
    on_event: OnEvent | None = None,
    on_text: OnText | None = None,
    trace_path: Path | None = None,
) -> RunResult:
    """Run one session and write its trace.

    Raises:
        ProviderError: The provider failed (the trace is complete, ending in ``error``).
        ReplayDivergence: A strict replay left the recording (likewise recorded).
    """
    session_id = config.session_id or new_session_id()
    path = trace_path or default_trace_path(config.trace_dir, session_id)
    clock = config.clock
    rec = TraceRecorder.create(
        path,
        session_id,
        fsync=config.fsync,
        clock=clock.ts if clock is not None else None,
        redact=config.redact,
    )
    if on_event is not None:
        rec.add_listener(on_event)
    run = _Run(config, provider, rec, tool_tape, on_text)
    t0 = run.clock.perf()
    stop_reason = "error"
    output: str | None = None
    error: str | None = None
    #: An exception is on its way out: a failure to write the ending must not hide it.
    failing = True
    try:
        rec.start(
            task=task,
            instructions=config.instructions,
            model=config.model,
            provider=provider_label or provider.name,
            tools=config.tools.schemas(),
            policy=config.policy_label or policy_name(config.policy),
            context=config.context.to_dict() if config.context else None,
            max_turns=config.max_turns,
            max_tokens=config.max_tokens,
            params=config.params,
            agent_ref=config.agent_ref,
            replay_of=replay_of,
            forked_from=forked_from,
            metadata=config.metadata,
        )
        stop_reason, output = await run.run(task)
        failing = False
    except ReplayDivergence as exc:
        stop_reason, error = "diverged", str(exc)
        raise
    except ProviderError as exc:
        error = str(exc)
        exc.trace_path = path
        if not exc.recorded:
            raise
        failing = False
        # A replay reproduced the provider error its recording ended with: the replay
        # ends as the recording did, and is a result, not a failure.
    except RecordedEnding as exc:
        # A replay reached where its recording was cancelled or stopped by the caller's
        # code: it ends the same way, as a result.
        stop_reason, error = exc.stop_reason, str(exc)
        failing = False
        if exc.error_type is not None:
            rec.error("agent", exc.error_type, error)
    except TraceWriteError as exc:
        error = str(exc)
        if not rec.closed:  # say why the session stops here, if the disk takes it
            with contextlib.suppress(TraceWriteError):
                rec.error("agent", "TraceWriteError", error)
        raise
    except RegistaError as exc:
        error = str(exc)
        raise
    except (asyncio.CancelledError, KeyboardInterrupt):
        stop_reason, error = "cancelled", "the run was cancelled"
        raise
    except BaseException as exc:
        error = f"{type(exc).__name__}: {exc}"
        rec.error("agent", type(exc).__name__, error)
        raise
    finally:
        if not rec.closed:
            replay_stats = None
            if run.diverged_at is None:
                run.diverged_at = (
                    provider.diverged_at if isinstance(provider, TapeProvider) else None
                )
            if rec.sources["recorded"] or rec.sources["edit"] or replay_of or forked_from:
                replay_stats = {
                    **rec.sources,
                    "diverged_at": run.diverged_at,
                    "saved": run.saved.to_dict(),
                }
            try:
                rec.end(
                    stop_reason,
                    output=output,
                    duration_ms=run._ms(t0),
                    error=error,
                    replay=replay_stats,
                )
            except TraceWriteError:
                rec.close()
                if not failing:
                    raise
    return RunResult(
        trace_path=path,
        session_id=session_id,
        output=output,
        stop_reason=stop_reason,
        usage=rec.usage,
        cost_usd=rec.cost_usd,
        turns=rec.turns,
        steps=rec.steps,
        tool_calls=rec.tool_calls,
        recorded_steps=rec.sources.get("recorded", 0),
        edited_steps=rec.sources.get("edit", 0),
        live_steps=rec.sources.get("live", 0),
        error=error,
        diverged_at=run.diverged_at,
        savings=run.saved if run.saved.calls else None,
    )
