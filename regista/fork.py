"""Fork and rewind: change steps of a recorded run and let the agent carry on.

``fork(trace, at_step=N, edit=...)``, or ``fork(trace, edits={N: ..., M: ...})``:

- steps before the first edit are served from the recording (model calls hash-verified,
  tool calls answered with their recorded results; nothing re-executed);
- each edited step is answered with its edit: a :class:`ToolResultEdit` for a tool step,
  a :class:`ModelAnswerEdit` for a model step;
- steps between two edits play the recording *loosely*: model calls get the recorded
  answers in order (compactions the recorded summaries), tool calls their recorded
  results, and each model response records whether its request still ``matched``;
- by default the fork goes live right after the last edit: model calls go to the real
  provider and new tool calls run for real under the agent's policy. ``live_after=K``
  (``K >=`` the last edit) plays the recording loosely up to step ``K`` and goes live
  after it; ``loose=True`` never goes live (no agent needed) and plays the recording on
  loosely to its end.

``rewind(trace, at_step=N)`` is a fork with no edit: the first ``N`` steps free, live
from step ``N`` on. The fork writes its own trace with ``session.start.forked_from``;
the parent trace is only read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from regista.context import is_compaction_request
from regista.defaults import DEFAULT_TRACE_DIR
from regista.errors import InvalidEditError, ReplayDivergence
from regista.loading import resolve_agent
from regista.loop import RecordedOutcome, RunResult, SessionConfig, run_session
from regista.providers.base import Provider, TextCallback, set_meta, stream_recorded
from regista.providers.replay import RecordedCall, ReplayMode, recorded_calls
from regista.providers.tape import Tape, TapeProvider, mismatch
from regista.replay import RecordedTools, config_from_trace
from regista.trace.reader import Trace
from regista.trace.verify import check_rebuilt
from regista.types import AgentSpec, LlmRequest, LlmResponse, OnEvent, OnText, Usage

__all__ = [
    "ForkResult",
    "ModelAnswerEdit",
    "ToolResultEdit",
    "fork",
    "rewind",
    "validate_model_edit",
]


@dataclass(frozen=True)
class ToolResultEdit:
    """A replacement result for a tool step."""

    content: str | list[dict[str, Any]]
    is_error: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.is_error, bool):
            raise InvalidEditError(
                f"a tool result's is_error must be True or False, not {self.is_error!r:.40}"
            )
        if isinstance(self.content, str):
            return
        if not isinstance(self.content, list):
            raise InvalidEditError(
                "a tool result is text or a list of content blocks, "
                f"not {type(self.content).__name__}"
            )
        for i, block in enumerate(self.content):
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                raise InvalidEditError(
                    f"a tool result's content[{i}] must be a content block such as "
                    f'{{"type": "text", "text": "…"}}, not {block!r:.40}'
                )

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "tool_result", "content": self.content, "is_error": self.is_error}


@dataclass(frozen=True)
class ModelAnswerEdit:
    """A replacement answer for a model step: text and/or ``tool_use`` blocks."""

    content: list[dict[str, Any]]
    stop_reason: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.content, list):
            raise InvalidEditError(
                "a model answer is a list of content blocks (text / tool_use), "
                f"not {type(self.content).__name__}"
            )
        if self.stop_reason is not None and not isinstance(self.stop_reason, str):
            raise InvalidEditError(
                f"a model answer's stop_reason must be text such as 'end_turn', "
                f"not {self.stop_reason!r:.40}"
            )

    @classmethod
    def text(cls, text: str) -> ModelAnswerEdit:
        return cls([{"type": "text", "text": text}])

    @classmethod
    def parse(cls, raw: str) -> ModelAnswerEdit:
        """Plain text, or JSON: a list of content blocks or ``{"content": [...]}``."""
        stripped = raw.strip()
        if stripped[:1] in ("[", "{"):
            try:
                data = orjson.loads(stripped)
            except orjson.JSONDecodeError as exc:
                raise InvalidEditError(
                    f"the answer looks like JSON but is not valid: {exc}"
                ) from None
            if isinstance(data, dict):
                content = data.get("content") or []
                if isinstance(content, str):  # {"content": "text"}, as the API also allows
                    content = [{"type": "text", "text": content}]
                if not isinstance(content, list):
                    raise InvalidEditError(
                        "the answer's 'content' must be text or a list of content blocks, "
                        f"not {type(content).__name__}"
                    )
                return cls(content, data.get("stop_reason"))
            if isinstance(data, list):
                return cls(data)
        return cls.text(raw)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "model_answer", "content": self.content, "stop_reason": self.stop_reason}

    def response(self, step: int, model: str | None) -> LlmResponse:
        """The answer served at ``step`` in place of the recorded one (``model``: the
        recorded answer's)."""
        return LlmResponse(
            id=f"msg_edit_{step}",
            model=model,
            content=[dict(b) for b in self.content],
            stop_reason=self.stop_reason,
            usage=Usage(),
        )


Edit = ToolResultEdit | ModelAnswerEdit
#: Several edits: ``{step: edit}``, or ``(step, edit)`` pairs.
Edits = Mapping[int, Edit] | Iterable[tuple[int, Edit]]


@dataclass
class ForkResult(RunResult):
    """A fork's outcome, next to its parent's."""

    parent_session_id: str = ""
    parent_stop_reason: str | None = None
    parent_cost_usd: float | None = None
    at_step: int = 0
    #: Every edited step, in order (``[at_step]`` for a single edit; empty for a rewind).
    edited_at: list[int] = field(default_factory=list)
    #: Loose playback: for each model step after the edit, whether its request matched.
    matched: dict[int, bool] = field(default_factory=dict)
    #: Steps answered by loose playback of the recording (after an edit, not live).
    loose_steps: int = 0


def validate_model_edit(edit: ModelAnswerEdit, tool_names: set[str]) -> ModelAnswerEdit:
    """Check a model-answer edit as ``fork`` will, and return it normalised.

    Editors call this to reject a bad answer before forking.

    Args:
        edit: The answer to check.
        tool_names: The agent's tools (empty: any tool name is accepted).

    Raises:
        InvalidEditError: A block is malformed, names an unknown tool, or a tool_use
            input is not a JSON object.
    """
    if not edit.content:
        raise InvalidEditError("a model answer needs at least one text or tool_use block")
    blocks: list[dict[str, Any]] = []
    for i, block in enumerate(edit.content):
        if not isinstance(block, dict):
            raise InvalidEditError(f"content[{i}] must be an object, got {type(block).__name__}")
        kind = block.get("type")
        if kind == "text":
            if not isinstance(block.get("text"), str):
                raise InvalidEditError(f"content[{i}]: a text block needs a string 'text'")
            if not block["text"].strip():
                # The Messages API rejects empty text blocks once they are sent back.
                raise InvalidEditError(f"content[{i}]: a text block cannot be empty")
            blocks.append({"type": "text", "text": block["text"]})
        elif kind == "tool_use":
            name = block.get("name")
            if not isinstance(name, str) or not name:
                raise InvalidEditError(f"content[{i}]: a tool_use block needs a 'name'")
            if tool_names and name not in tool_names:
                known = ", ".join(sorted(tool_names))
                raise InvalidEditError(f"content[{i}]: unknown tool {name!r} (tools: {known})")
            args = block.get("input", {})
            if isinstance(args, str):
                try:
                    args = orjson.loads(args)
                except orjson.JSONDecodeError as exc:
                    raise InvalidEditError(
                        f"content[{i}]: tool_use input is not valid JSON: {exc}"
                    ) from None
            if not isinstance(args, dict):
                raise InvalidEditError(f"content[{i}]: tool_use input must be a JSON object")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": str(block.get("id") or f"toolu_edit_{i}"),
                    "name": name,
                    "input": args,
                }
            )
        else:
            raise InvalidEditError(
                f"content[{i}]: unsupported block type {kind!r} (use 'text' or 'tool_use')"
            )
    has_tools = any(b["type"] == "tool_use" for b in blocks)
    stop = edit.stop_reason or ("tool_use" if has_tools else "end_turn")
    return ModelAnswerEdit(blocks, stop)


class ForkProvider(TapeProvider):
    """Serves the recorded prefix, the edited answers, then the recording or a live model.

    Args:
        calls: The recording's model calls.
        first_edit: Requests up to this step must reproduce the recording (hash-checked).
        edits: Model-answer edits by step.
        live_from: The first live step (``None``: never live).
        live: The live provider.
        label: How messages name the recording.
    """

    name = "fork"

    def __init__(
        self,
        calls: list[RecordedCall],
        first_edit: int,
        edits: dict[int, ModelAnswerEdit],
        live_from: int | None,
        live: Provider | None,
        label: str,
    ) -> None:
        super().__init__(Tape(calls), live, label)
        self.first_edit = first_edit
        self.edits = edits
        self.live_from = live_from
        self.position = 0
        self.is_live = False
        self.matched: dict[int, bool] = {}
        self.loose = 0
        self._cursors: dict[str, int] | None = None
        #: The model live calls are made with (``None``: the agent's own).
        self.live_model: str | None = None

    def model_now(self) -> str | None:
        """The model of the next model call: :attr:`live_model` once the fork is live (the
        loop asks before it builds the request, so that the trace says what was sent)."""
        if self.live_model is None or self.live_from is None:
            return None
        if self.is_live:
            return self.live_model
        n = self.position
        if self._cursors is not None:
            n = self._cursors["model"]
            while n < len(self.calls) and self.calls[n].kind != "model":
                n += 1
        if n >= len(self.calls) or self.calls[n].step >= self.live_from:
            return self.live_model
        return None

    async def complete(
        self, request: LlmRequest, *, on_text: TextCallback | None = None
    ) -> LlmResponse:
        n = self._take(request)
        rec = self.calls[n] if n < len(self.calls) else None
        if not self.is_live and (
            (rec is None and self.live_from is not None)
            or (rec is not None and self.live_from is not None and rec.step >= self.live_from)
        ):
            self.is_live = True
        if self.is_live:
            assert self.live is not None
            return await self.live.complete(request, on_text=on_text)
        if rec is None:
            what = (
                "compacts its context once more than the recording"
                if is_compaction_request(request)
                else f"made model call {self.position}, but the recording has only "
                f"{len(self.calls)}"
            )
            raise ReplayDivergence(
                f"{self.label}: the fork {what} (let the agent carry on live: leave out "
                "loose=True / --loose, or give a later live point, live_after)",
                step=self.calls[-1].step + 1 if self.calls else 0,
            )
        if rec.step <= self.first_edit and request.hash != rec.request_hash:
            m = mismatch(rec, request.canonical(), others=self.unplayed_after(rec))
            raise ReplayDivergence(
                f"{self.label}: diverged at step {rec.step} (before the edit, the agent no "
                f"longer reproduces the recording): {m.detail}{m.nearest_note}",
                step=rec.step,
                diffs=m.changes,
            )
        edit = self.edits.get(rec.step) if rec.kind == "model" else None
        if edit is not None:
            response = edit.response(rec.step, rec.response.model)
            await _feed(on_text, response)
            return set_meta(response, "edit", "edit")
        matched = None
        if rec.step > self.first_edit:
            self.loose += 1
            matched = self.matched[rec.step] = request.hash == rec.request_hash
        response = rec.answer(matched)
        await _feed(on_text, response)
        return response

    def _take(self, request: LlmRequest) -> int:
        """The index of the recorded call that answers ``request``.

        Up to the first edit, calls are taken in order (and hash-checked). After it the fork
        may compact at other points than the recording: model calls are then answered by the
        recorded model calls in order, compactions by the recorded summaries in order, so
        a summary never comes back as a model's answer.
        """
        n = self.position
        self.position += 1
        if self._cursors is None:
            if n >= len(self.calls) or self.calls[n].step <= self.first_edit:
                return self._played(n)
            self._cursors = {"model": n, "compaction": n}
        kind = "compaction" if is_compaction_request(request) else "model"
        i = self._cursors[kind]
        while i < len(self.calls) and self.calls[i].kind != kind:
            i += 1
        self._cursors[kind] = i + 1
        return self._played(i)

    def _played(self, i: int) -> int:
        if i < len(self.calls):
            self.tape.play(i)
        return i


async def _feed(on_text: TextCallback | None, response: LlmResponse) -> None:
    await stream_recorded(on_text, response)


class _ForkTools(RecordedTools):
    """Recorded results before the live point, the edits at their steps, live after."""

    def __init__(
        self,
        trace: Trace,
        edits: dict[str, RecordedOutcome],
        first_edit: int,
        live_from: int | None,
    ) -> None:
        super().__init__(trace, ReplayMode.STRICT, edits=edits)
        self.first_edit = first_edit
        self.live_from = live_from
        self.loose = 0

    def mode_at(self, step: int) -> ReplayMode:
        # loose playback after the first edit
        return ReplayMode.WARN if step > self.first_edit else self.mode

    def lookup(self, call: Any, step: int) -> RecordedOutcome | None:
        if self.live_from is not None and step >= self.live_from:
            return None
        outcome = super().lookup(call, step)
        if outcome is not None and step > self.first_edit and call.id not in self.edits:
            self.loose += 1
        return outcome


def _resolve_agent(trace: Trace, agent: AgentSpec | None) -> Any:
    name = trace.path.name if trace.path else "this trace"
    return resolve_agent(
        agent,
        trace.start.agent_ref,
        f"{name} records no agent_ref, so regista cannot rebuild the agent for the live "
        "half: pass agent=... (Python) or --agent module:attr (CLI), where attr is an Agent "
        "or a function returning one; or run the agent's own program after -- CMD "
        "(regista fork|rewind TRACE … -- CMD ARGS…)",
    )


def _edit_plan(at_step: Any, edit: Any, edits: Edits | None) -> list[tuple[int, Edit | None]]:
    """The edits as ``(step, edit)`` pairs in step order (one ``(N, None)`` for a rewind)."""
    if edits is None:
        if at_step is None:
            raise InvalidEditError("a fork needs at_step (with an edit) or edits={step: edit}")
        return [(at_step, edit)]
    if edit is not None or at_step is not None:
        raise InvalidEditError("give either at_step and edit, or edits, not both")
    pairs = list(edits.items()) if isinstance(edits, Mapping) else list(edits)
    if not pairs:
        raise InvalidEditError("edits is empty: give at least one {step: edit}")
    plan: list[tuple[int, Edit | None]] = []
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise InvalidEditError(f"an edit must be a (step, edit) pair, got {pair!r:.80}")
        if pair[1] is None:
            raise InvalidEditError(f"the edit for step {pair[0]!r} is None")
        plan.append(pair)
    plan.sort(key=lambda p: p[0] if isinstance(p[0], int) else -1)
    seen = [step for step, _ in plan]
    dup = next((s for i, s in enumerate(seen) if s in seen[:i]), None)
    if dup is not None:
        raise InvalidEditError(f"step {dup} is edited twice")
    return plan


async def fork(
    trace_path: str | Path | Trace,
    at_step: int | None = None,
    edit: Edit | None = None,
    live_after: int | None = None,
    agent: AgentSpec | None = None,
    provider: Provider | None = None,
    *,
    edits: Edits | None = None,
    loose: bool = False,
    trace_dir: str | Path | None = None,
    on_event: OnEvent | None = None,
    on_text: OnText | None = None,
    model: str | None = None,
) -> ForkResult:
    """Fork a recorded run at one or more edited steps (see the module docstring).

    Args:
        trace_path: The parent trace (never written to).
        at_step: The step to edit (or, with no edit, the first live step).
        edit: ``ToolResultEdit`` / ``ModelAnswerEdit``; ``None`` rewinds.
        live_after: Go live after this step (default: the last edited step).
        agent: An ``Agent`` or ``"module:attr"`` for the live half; default: the trace's
            ``agent_ref``.
        provider: Overrides the agent's provider for the live half.
        edits: Several edits, ``{step: edit}`` (instead of ``at_step`` and ``edit``).
        loose: Never go live: after the edits, play the recording on loosely.
        trace_dir: Where the fork's trace goes (default: the agent's ``trace_dir``).
        model: Make the live calls with this model instead of the agent's (the recorded
            prefix keeps the recorded one): "what if another model had carried on".

    Raises:
        InvalidEditError: A step does not exist, or an edit does not fit its step.
        UserError: A live half is needed and no agent can be found.
        ReplayDivergence: The agent no longer reproduces the recording before the edit
            ("diverged at step N (before the edit, …)": a line, then the differences).
    """
    trace = trace_path if isinstance(trace_path, Trace) else Trace.load(trace_path)
    check_rebuilt(trace)
    steps = trace.steps()
    plan = _edit_plan(at_step, edit, edits)
    for step, _ in plan:
        if not isinstance(step, int) or isinstance(step, bool):
            raise InvalidEditError(f"a step is a whole number, got {step!r:.80}")
        if not 0 <= step < len(steps):
            raise InvalidEditError(
                f"step {step} does not exist: the trace has steps 0..{len(steps) - 1}"
            )
    first, last = plan[0][0], plan[-1][0]
    rewinding = plan[0][1] is None
    if rewinding and loose:
        raise InvalidEditError("a rewind goes live from its step: loose needs an edit")
    if loose and live_after is not None:
        raise InvalidEditError("loose playback never goes live: give live_after or loose")
    if live_after is not None and live_after < last:
        what = "edited step" if len(plan) == 1 else f"last edited step ({last})"
        raise InvalidEditError(f"live_after ({live_after}) must be at or after the {what}")
    live_from: int | None
    if rewinding:
        live_from = first
    elif loose:
        live_from = None
    else:
        live_after = last if live_after is None else live_after
        live_from = live_after + 1

    tool_edits: dict[str, RecordedOutcome] = {}
    model_edits: dict[int, ModelAnswerEdit] = {}
    normalised: list[tuple[int, Edit]] = []
    tool_names = {str(t.get("name")) for t in trace.start.tools}
    for step, one in plan:
        if one is None:
            continue
        target = steps[step]
        if isinstance(one, ToolResultEdit):
            if target.kind != "tool" or target.tool_call is None:
                raise InvalidEditError(
                    f"step {step} is a {target.kind} step; a tool-result edit needs a tool step"
                )
            if not isinstance(one.content, str | list):
                raise InvalidEditError("a tool result must be text or a list of content blocks")
            dec = target.decision
            tool_edits[target.tool_call.tool_use_id] = RecordedOutcome(
                content=one.content,
                is_error=one.is_error,
                allowed=True,
                reason=dec.reason if dec else None,
                source="edit",
            )
        elif isinstance(one, ModelAnswerEdit):
            if target.kind != "model":
                raise InvalidEditError(
                    f"step {step} is a {target.kind} step; a model-answer edit needs a model step"
                )
            one = model_edits[step] = validate_model_edit(one, tool_names)
        else:
            raise InvalidEditError(f"unsupported edit {type(one).__name__}")
        normalised.append((step, one))

    live_agent = _resolve_agent(trace, agent) if live_from is not None else None
    if live_agent is not None:
        # A fork is a new session: never reuse a fixed id the agent may carry.
        config: SessionConfig = replace(live_agent.config(), session_id=None)
        live_provider: Provider | None = provider or live_agent.provider
        if trace_dir is not None:
            config = replace(config, trace_dir=Path(trace_dir))
    else:
        config = config_from_trace(trace, trace_dir=Path(trace_dir or DEFAULT_TRACE_DIR))
        live_provider = None
    label = trace.path.name if trace.path else "recording"
    calls = recorded_calls(trace)
    for step in model_edits:
        target = steps[step]
        request_event = target.request_event
        if target.response_event is None and request_event is not None:
            # The call at the edited step got no answer (the provider failed, or the
            # process died waiting): the edit is that answer. Its request is still
            # hash-checked.
            calls.append(
                RecordedCall(
                    step=step,
                    kind="model",
                    request_hash=request_event.request_hash,
                    response=LlmResponse(model=request_event.model),
                    provider=trace.start.provider,
                    build_request=partial(trace.request_for, request_event),
                )
            )
    calls.sort(key=lambda call: call.step)
    fork_provider = ForkProvider(calls, first, model_edits, live_from, live_provider, label)
    if model is not None:
        if live_from is None:
            raise InvalidEditError("another model needs a live half: leave out loose")
        fork_provider.live_model = model
    tools = _ForkTools(trace, tool_edits, first, live_from)
    forked_from: dict[str, Any] = {
        "session_id": trace.session_id,
        "at_step": first,
        "edit": normalised[0][1].to_dict() if normalised else None,
        "live_after": live_after if not rewinding else (first - 1),
        "path": str(trace.path) if trace.path else None,
    }
    if model is not None:
        forked_from["model"] = model
    if len(normalised) > 1:
        forked_from["edits"] = [{"at_step": n, "edit": e.to_dict()} for n, e in normalised]
    result = await run_session(
        config,
        trace.start.task,
        fork_provider,
        provider_label=live_provider.name if live_provider else trace.start.provider,
        tool_tape=tools,
        forked_from=forked_from,
        on_event=on_event,
        on_text=on_text,
    )
    parent = trace.summary()
    return ForkResult(
        **vars(result),
        parent_session_id=parent.session_id,
        parent_stop_reason=parent.stop_reason,
        parent_cost_usd=parent.cost_usd,
        at_step=first,
        edited_at=[n for n, _ in normalised],
        matched=dict(fork_provider.matched),
        loose_steps=fork_provider.loose + tools.loose,
    )


async def rewind(
    trace_path: str | Path | Trace,
    at_step: int,
    agent: AgentSpec | None = None,
    provider: Provider | None = None,
    **kwargs: Any,
) -> ForkResult:
    """Replay the first ``at_step`` steps for free and continue live from there."""
    return await fork(trace_path, at_step, None, None, agent, provider, **kwargs)
