"""SDK replays: a recorded run served to any SDK client, call by call, from memory.

A replay snapshots its trace when it is created (later writes to the file change nothing)
and lives in memory until it expires. Each request is normalised (see
:mod:`regista.wire.shapes`) and matched by its :func:`~regista.wire.shapes.sdk_digest`
against the recorded model calls, each played once, in any order (so concurrent clients are
served).

- ``strict``: a request the tape does not hold answers 409 ``replay_divergence``, naming the
  step it expected, both digests and the structural diff; the step is not consumed.
- ``loose`` (the harness calls it ``warn``): the next recorded call answers regardless, and
  whether it matched is counted.
- Edits answer a model step with another answer, or give a tool step another result (served
  by ``tools/next``, and put in place of the agent's own result in every request, the ones
  matched and written as well as the ones that go live). After the first edit the
  recording plays loosely, as the harness's fork does.
- Past the live point (``live_after``): ``live="signal"`` answers 409 ``replay_live`` (the
  client's cue to call the real provider); ``live="proxy"`` forwards to the upstream.
"""

from __future__ import annotations

import enum
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from regista.diff.masks import DIVERGED, EXACT, MASKED, MaskHit, MaskSet
from regista.errors import ContentNotRecorded, InvalidEditError
from regista.fork import ModelAnswerEdit, ToolResultEdit, validate_model_edit
from regista.providers.replay import RecordedCall, recorded_calls
from regista.providers.tape import Tape, mismatch
from regista.trace.canonical import canonical_json
from regista.trace.events import ToolResult
from regista.trace.reader import Trace
from regista.types import LlmRequest, LlmResponse, Message
from regista.wire.errors import ErrorShape, HttpError
from regista.wire.openai_responses import conversation_of, input_items
from regista.wire.sessions import SessionBook, with_tool_edits
from regista.wire.shapes import masked_form, sdk_digest

__all__ = ["LIVE", "SdkReplay", "SdkReplayMode", "Served", "parse_spec"]


class SdkReplayMode(enum.StrEnum):
    """How an SDK replay treats a request that is not on the tape."""

    STRICT = "strict"
    LOOSE = "loose"

    @classmethod
    def parse(cls, value: Any) -> SdkReplayMode:
        if value == "warn":  # the harness's name for the same behaviour
            return cls.LOOSE
        try:
            return cls(value)
        except ValueError:
            raise HttpError(
                400, f"unknown mode {value!r}; valid modes: 'strict', 'loose' (alias 'warn')"
            ) from None


def default_mode(trace: Trace) -> SdkReplayMode:
    """Strict for a recording; loose for an imported session (transcripts and spans do not
    hold everything a strict digest needs: the system prompt, the exact requests)."""
    imported = isinstance(trace.start.metadata, dict) and "imported_from" in trace.start.metadata
    return SdkReplayMode.LOOSE if imported else SdkReplayMode.STRICT


def _digest_of(call: RecordedCall, masks: MaskSet | None = None) -> str:
    request = call.request
    return sdk_digest(request.system, request.messages, masks) if request is not None else ""


def _counted(response: LlmResponse) -> dict[str, Any] | None:
    """The ``count_tokens`` answer a side step kept, or ``None`` for a model answer."""
    counted = (response.model_extra or {}).get("count_tokens")
    return counted if isinstance(counted, dict) else None


def estimate_tokens(request: LlmRequest) -> int:
    """A token count for a request the recording did not count: a token per four
    characters of its system prompt, messages and tools as JSON (at least 1)."""
    form = {"system": request.system, "messages": request.messages, "tools": request.tools}
    return max(1, len(canonical_json(form)) // 4)


@dataclass
class Served:
    """What answers one call: a recorded (or edited) response, or ``LIVE``."""

    response: LlmResponse
    step: int
    source: Literal["recorded", "edit"]
    matched: bool


#: Returned by :meth:`SdkReplay.answer` when the call goes to the real provider.
LIVE = "live"


@dataclass
class Spec:
    """What a replay was asked for (the body of ``POST /v1/replays``)."""

    run: str
    mode: SdkReplayMode = SdkReplayMode.STRICT
    #: False: the request named no mode, so the run decides (:func:`default_mode`).
    mode_given: bool = True
    answers: dict[int, ModelAnswerEdit] = field(default_factory=dict)
    tool_results: dict[int, Any] = field(default_factory=dict)
    #: Steps whose edited tool result is an error.
    tool_errors: set[int] = field(default_factory=set)
    live_after: int | None = None
    live: Literal["proxy", "signal"] | None = None
    ttl: float | None = None
    #: False: no masks, every byte of the request counts.
    masks: bool = True
    #: Who writes a ``signal`` fork's trace: ``client`` (``regista.client`` writes its own)
    #: or ``server`` (every call served, and every call sent to the replay's live URLs;
    #: see :mod:`regista.server.live`). A ``proxy`` fork's is always the server's.
    trace: Literal["client", "server"] = "client"
    #: The model every live call asks for instead of the one the program names (a ``proxy``
    #: fork: regista sends the calls, so it can change them); the recorded prefix is
    #: served as it was. ``None``: the program's own.
    model: str | None = None


_SPEC_KEYS = {
    "run", "mode", "edits", "live_after", "live", "ttl_seconds", "masks", "trace", "model"
}  # fmt: skip
#: The longest model name a replay takes.
MAX_MODEL = 256
_EDIT_KEYS = {"step", "tool_result", "answer", "is_error"}


def parse_spec(body: dict[str, Any]) -> Spec:
    """Check a ``POST /v1/replays`` body (400 on anything wrong)."""
    unknown = sorted(set(body) - _SPEC_KEYS)
    if unknown:
        raise HttpError(
            400, f"unknown field {unknown[0]!r}; a replay takes {', '.join(sorted(_SPEC_KEYS))}"
        )
    run = body.get("run")
    if not isinstance(run, str) or not run:
        raise HttpError(400, "'run' must be the session id of a run in the store")
    spec = Spec(
        run=run,
        mode=SdkReplayMode.parse(body.get("mode", "strict")),
        mode_given="mode" in body,
    )
    edits = body.get("edits") or []
    if not isinstance(edits, list):
        raise HttpError(400, "'edits' must be a list")
    for i, edit in enumerate(edits):
        step = edit.get("step") if isinstance(edit, dict) else None
        if not isinstance(step, int) or isinstance(step, bool) or step < 0:
            raise HttpError(400, f"edits[{i}] needs a 'step' (a step number)")
        assert isinstance(edit, dict)
        extra = sorted(set(edit) - _EDIT_KEYS)
        if extra:
            raise HttpError(
                400,
                f"edits[{i}]: unknown field {extra[0]!r}; an edit takes "
                + ", ".join(sorted(_EDIT_KEYS)),
            )
        if "tool_result" in edit:
            if not isinstance(edit["tool_result"], str | list):
                raise HttpError(400, f"edits[{i}].tool_result must be text or content blocks")
            spec.tool_results[step] = edit["tool_result"]
            if edit.get("is_error") is True:
                spec.tool_errors.add(step)
        elif "answer" in edit:
            answer = edit["answer"]
            if isinstance(answer, str):
                spec.answers[step] = ModelAnswerEdit.text(answer)
            elif isinstance(answer, list):
                spec.answers[step] = ModelAnswerEdit(answer)
            elif isinstance(answer, dict) and isinstance(answer.get("content"), list | str):
                content = answer["content"]
                blocks = (
                    [{"type": "text", "text": content}] if isinstance(content, str) else content
                )
                spec.answers[step] = ModelAnswerEdit(blocks, answer.get("stop_reason"))
            else:
                raise HttpError(400, f"edits[{i}].answer must be text or content blocks")
        else:
            raise HttpError(400, f"edits[{i}] needs 'tool_result' or 'answer'")
    live_after = body.get("live_after")
    if live_after is not None and (
        not isinstance(live_after, int) or isinstance(live_after, bool) or live_after < -1
    ):
        raise HttpError(400, "'live_after' must be a step number (-1: live from the first call)")
    spec.live_after = live_after
    live = body.get("live")
    if live not in (None, "proxy", "signal"):
        raise HttpError(400, f"'live' must be 'proxy' or 'signal', not {live!r}")
    spec.live = live
    trace = body.get("trace", "client")
    if trace not in ("client", "server"):
        raise HttpError(400, f"'trace' must be 'client' or 'server', not {trace!r}")
    spec.trace = trace
    masks = body.get("masks", True)
    if not isinstance(masks, bool):
        raise HttpError(400, "'masks' must be true (the server's masks, the default) or false")
    spec.masks = masks
    if "model" in body:
        spec.model = _model(body["model"], spec)
    ttl = body.get("ttl_seconds")
    if ttl is not None:
        if not isinstance(ttl, int | float) or isinstance(ttl, bool) or not 0 < ttl <= 86400:
            raise HttpError(400, "'ttl_seconds' must be a number of seconds (at most a day)")
        spec.ttl = float(ttl)
    return spec


def _model(model: Any, spec: Spec) -> str:
    """A fork's ``model``, checked: a name, for a fork whose live calls the server sends
    (as ``rewind --model NAME -- CMD`` asks; 400 otherwise)."""
    if not isinstance(model, str) or not model.strip() or model != model.strip():
        raise HttpError(400, "'model' must be a model's name (a non-empty string)")
    if len(model) > MAX_MODEL or not model.isprintable():
        raise HttpError(400, f"'model' must be a model's name (printable, at most {MAX_MODEL})")
    if spec.live_after is None and not spec.answers and not spec.tool_results:
        raise HttpError(
            400,
            "'model' needs a fork that goes live: give edits or live_after (a replay "
            "plays the recording only)",
        )
    if spec.live != "proxy" and not (spec.live == "signal" and spec.trace == "server"):
        raise HttpError(
            400,
            '\'model\' needs live calls the server sends: "live": "proxy", or '
            '"live": "signal" with "trace": "server" (a client that goes live '
            "by itself sends its own model)",
        )
    return model


class SdkReplay:
    """One replay of a recorded run for SDK clients.

    Args:
        trace: The recording (already loaded: the snapshot).
        spec: What was asked for.
        ttl: Seconds it lives.
    """

    def __init__(self, trace: Trace, spec: Spec, ttl: float, masks: MaskSet | None = None) -> None:
        self.id = "rp_" + secrets.token_hex(12)
        #: The volatile spans a strict match ignores (none: every byte counts).
        self.masks = masks if masks is not None else MaskSet()

        if not spec.mode_given:
            spec.mode = default_mode(trace)
        self.trace = trace
        self.spec = spec
        self.created = time.time()
        self.expires_at = self.created + (spec.ttl or ttl)
        calls = [c for c in recorded_calls(trace) if c.kind == "model"]
        #: The masks matching uses: none when no recorded request holds a masked part (a
        #: live request then matches only as it is, masked or not: walking it would cost
        #: for nothing).
        self._active = self.masks
        if self.masks and not any(
            c.request is not None and self._masked(c.request)[1] for c in calls
        ):
            self._active = MaskSet()
        #: Recorded ``count_tokens`` answers by digest: served apart from the model calls.
        self.counts: dict[str, list[dict[str, Any]]] = {}
        for c in calls:
            counted = _counted(c.response)
            if counted is not None:
                self.counts.setdefault(_digest_of(c, self._active), []).append(counted)
        calls = [c for c in calls if _counted(c.response) is None]
        self.tape = Tape(calls, key=lambda call: _digest_of(call, self._active))
        self.steps = trace.steps()
        self._check_edits()
        self.tool_edits = {
            self.steps[step].tool_call.tool_use_id: content  # type: ignore[union-attr]
            for step, content in spec.tool_results.items()
        }
        #: tool_use_ids whose edited result is an error.
        self.tool_errors = [
            self.steps[step].tool_call.tool_use_id  # type: ignore[union-attr]
            for step in sorted(spec.tool_errors & set(spec.tool_results))
        ]
        edited = [*spec.answers, *spec.tool_results]
        self.first_edit = min(edited) if edited else None
        self.last_edit = max(edited) if edited else None
        if spec.live_after is not None:
            self.live_from: int | None = spec.live_after + 1
        elif self.last_edit is not None:  # a fork goes live right after its last edit
            self.live_from = self.last_edit + 1
        else:
            self.live_from = None
        if self.live_from is not None and spec.live is None:
            spec.live = "signal"
        self.is_live = False
        self.requests = 0
        self.served = 0
        self.matched = 0
        #: Calls matched only because masks covered what differed, and the masks used.
        self.masked_matches = 0
        self.masks_used: dict[str, int] = {}
        #: Each model step played: exact, masked (equal once masked) or diverged.
        self.verdicts: dict[int, str] = {}
        self.live_calls = 0
        #: Requests answered with a 409 (a divergence, past the live point, or an answer
        #: recorded without its content): a client that retries anyway sends each again.
        self.rejected = 0
        #: ``count_tokens`` calls answered, and how many of them by an estimate.
        self.counted = 0
        self.estimated = 0
        self.divergence: dict[str, Any] | None = None
        #: A fork's model steps played loosely after its first edit: whether each matched.
        self.loose: dict[int, bool] = {}
        self._tools_served: set[str] = set()
        self._lock = threading.Lock()
        self._book: SessionBook | None = None

    @property
    def book(self) -> SessionBook | None:
        """Where a fork that goes live through the proxy writes its trace (its sessions'
        ``session.end`` counts the requests this replay rejected)."""
        return self._book

    @book.setter
    def book(self, book: SessionBook | None) -> None:
        if book is not None:
            book.rejected = lambda: self.rejected
        self._book = book

    def _check_edits(self) -> None:
        n = len(self.steps)
        tool_names = {str(t.get("name")) for t in self.trace.start.tools}
        for step, answer in list(self.spec.answers.items()):
            if step >= n or self.steps[step].kind != "model":
                raise HttpError(400, f"edit at step {step}: not a model step of the run")
            try:
                self.spec.answers[step] = validate_model_edit(answer, tool_names)
            except InvalidEditError as exc:
                raise HttpError(400, f"edit at step {step}: {exc}") from None
        for step, content in self.spec.tool_results.items():
            if step >= n or self.steps[step].kind != "tool" or self.steps[step].tool_call is None:
                raise HttpError(400, f"edit at step {step}: not a tool step of the run")
            try:
                ToolResultEdit(content)
            except InvalidEditError as exc:
                raise HttpError(400, f"edit at step {step}: {exc}") from None
        if (
            self.spec.live_after is not None
            and self.spec.answers | self.spec.tool_results
            and self.spec.live_after < max([*self.spec.answers, *self.spec.tool_results])
        ):
            raise HttpError(400, "'live_after' must be at or after the last edited step")

    @property
    def expired(self) -> bool:
        return time.time() >= self.expires_at

    def answer(self, request: LlmRequest, shape: ErrorShape) -> Served | str:
        """Serve one call: a :class:`Served`, or :data:`LIVE` to send it upstream.

        Raises:
            HttpError: 409 ``replay_divergence`` (strict) or ``replay_live`` (signal).
        """
        # matched as the model sees it: after a tool edit, with the edit, as the harness's
        # fork does (so the calls between the edit and the live point play loosely)
        request = with_tool_edits(request, self.tool_edits, self.tool_errors, shape)
        digest = sdk_digest(request.system, request.messages, self._active)
        with self._lock:
            self.requests += 1
            if self.is_live:
                return self._go_live(shape)
            i = self.tape.peek(digest)
            if i is not None:
                rec = self.tape.calls[i]
                if self.live_from is None or rec.step < self.live_from:
                    served = self._serve(rec, matched=True, shape=shape)
                    self.tape.play(i)
                    masked = self._count_masked(rec, request)
                    self.verdicts[rec.step] = MASKED if masked else EXACT
                    return served
            expected = self.tape.expected()
            if expected is None or (self.live_from is not None and expected.step >= self.live_from):
                if self.live_from is not None:
                    self.is_live = True
                    return self._go_live(shape)
                return self._diverge(request, digest, None, shape)
            # after the first edit the recording plays loosely, as the harness's fork does:
            # the requests hold the edit, which the recording does not
            loose_after_edit = self.first_edit is not None and expected.step > self.first_edit
            if self.spec.mode is SdkReplayMode.LOOSE or loose_after_edit:
                served = self._serve(expected, matched=False, shape=shape)
                if not loose_after_edit:  # a fork's loose playback is no divergence
                    self._note(request, expected)
                    self.verdicts[expected.step] = DIVERGED
                self.tape.play(self.tape.next_index)
                return served
            return self._diverge(request, digest, expected, shape)

    def conversation_of(self, response_id: str) -> list[Message] | None:
        """The conversation a Responses API ``previous_response_id`` names: a recorded call
        of the tape, or a call of this fork's own trace."""
        calls = [(c.request, c.response) for c in self.tape.calls if c.request is not None]
        found = conversation_of(calls, response_id)
        if found is None and self.book is not None:
            found = self.book.conversation_of(response_id)
        return found

    def expand_chain(self, body: dict[str, Any]) -> None:
        """A Responses API call going live that chains by ``previous_response_id`` is sent
        whole instead: the conversation that id stands for (an answer of the tape, an edit,
        or a live answer of this fork), then the call's own input. The real provider never
        saw the answers served from the tape, so it could not resolve their ids."""
        prev = body.get("previous_response_id")
        prior = self.conversation_of(prev) if isinstance(prev, str) else None
        if prior is None:
            return
        own = body.get("input", [])
        own = [{"role": "user", "content": own}] if isinstance(own, str) else own
        body["input"] = [*input_items(prior), *(own if isinstance(own, list) else [])]
        del body["previous_response_id"]

    def count_tokens(self, request: LlmRequest) -> tuple[dict[str, Any], bool]:
        """The answer to a ``count_tokens`` call, and whether it was recorded: the
        recording's answer to the same request, else an estimate
        (:func:`estimate_tokens`). A count generates nothing, so it never diverges."""
        digest = sdk_digest(request.system, request.messages, self._active)
        with self._lock:
            self.counted += 1
            recorded = self.counts.get(digest)
            if recorded:
                return dict(recorded[0]), True
            self.estimated += 1
        return {"input_tokens": estimate_tokens(request)}, False

    def _serve(self, rec: RecordedCall, matched: bool, shape: ErrorShape) -> Served:
        """What answers ``rec`` (raises a 409 when its answer's content was not recorded:
        the step is not consumed)."""
        edit = self.spec.answers.get(rec.step)
        if edit is None and not rec.response.captured:
            self.rejected += 1
            raise HttpError(
                409,
                ContentNotRecorded.message_for(rec.step),
                type="content_not_recorded",
                shape=shape,
                extra={"step": rec.step},
                headers={"x-should-retry": "false"},
            )
        self.served += 1
        self.matched += matched
        if edit is None and self.first_edit is not None and rec.step > self.first_edit:
            self.loose[rec.step] = matched
        if edit is not None:
            return Served(edit.response(rec.step, rec.response.model), rec.step, "edit", matched)
        return Served(rec.response, rec.step, "recorded", matched)

    def _go_live(self, shape: ErrorShape) -> str:
        self.live_calls += 1
        if self.spec.live == "proxy":
            return LIVE
        self.rejected += 1
        raise HttpError(
            409,
            "the replay is past its live point: send this call, and every later one, to the "
            "real provider",
            type="replay_live",
            shape=shape,
            extra={"live_from": self.live_from},
            headers={"x-should-retry": "false"},
        )

    def _masked(self, request: LlmRequest) -> tuple[dict[str, Any], list[MaskHit]]:
        return masked_form(request.system, request.messages, self._active)

    def _count_masked(self, rec: RecordedCall, request: LlmRequest) -> bool:
        """Count a call that matched only through masks (its masked values differ);
        whether it did."""
        if not self._active or rec.request is None:
            return False
        _, recorded = self._masked(rec.request)
        _, live = self._masked(request)
        differing = {h.mask for h in recorded} ^ {h.mask for h in live}
        by_place = {(h.path, h.mask, h.value) for h in recorded} ^ {
            (h.path, h.mask, h.value) for h in live
        }
        names = differing | {name for _, name, _ in by_place}
        if names:
            self.masked_matches += 1
            for name in names:
                self.masks_used[name] = self.masks_used.get(name, 0) + 1
        return bool(names)

    def _note(self, request: LlmRequest, expected: RecordedCall | None) -> dict[str, Any]:
        live, live_hits = self._masked(request)
        m = mismatch(
            expected,
            live,
            canonical=lambda r: self._masked(r)[0],
            others=[c for c in self.tape.calls[self.tape.next_index :] if c is not expected][:4],
            root="",
        )
        masked: list[str] = []
        if expected is not None and expected.request is not None:
            masked = self.masks.masked_changes(self._masked(expected.request)[1], live_hits)
        # The real differences first; then what a mask covered, marked "masked".
        note = {
            "step": expected.step if expected is not None else self._end_step(),
            "diff": [c.describe() for c in m.changes[:20]] + masked[:20],
            "nearest": m.nearest_note,
            "detail": m.detail,
        }
        if self.divergence is None:
            self.divergence = note
        return note

    def _end_step(self) -> int:
        return self.tape.calls[-1].step + 1 if self.tape.calls else 0

    def _diverge(
        self, request: LlmRequest, digest: str, expected: RecordedCall | None, shape: ErrorShape
    ) -> Served:
        note = self._note(request, expected)
        self.verdicts[note["step"]] = DIVERGED
        self.rejected += 1
        if expected is None:
            message = (
                f"the run made model call {self.tape.played + 1}, but the recording has only "
                f"{len(self.tape)}"
            )
        else:
            first = note["diff"][0] if note["diff"] else "the request differs"
            message = f"diverged at step {expected.step}: {first}{note['nearest']}"
        raise HttpError(
            409,
            message,
            type="replay_divergence",
            shape=shape,
            extra={
                "step": note["step"],
                "expected_digest": (
                    _digest_of(expected, self._active) if expected is not None else None
                ),
                "got_digest": digest,
                "diff": note["diff"],
            },
            headers={"x-should-retry": "false"},
        )

    def tool_result(self, tool_use_id: str | None) -> dict[str, Any]:
        """The recorded (or edited) result of a tool call; the next unserved one without an
        id. Raises ``HttpError(404)`` when there is none."""
        results = [ev for ev in self.trace.events if isinstance(ev, ToolResult)]
        with self._lock:
            if tool_use_id is None:
                found = next((r for r in results if r.tool_use_id not in self._tools_served), None)
            else:
                found = next((r for r in results if r.tool_use_id == tool_use_id), None)
            if found is None:
                raise HttpError(404, f"no recorded result for tool call {tool_use_id!r}")
            self._tools_served.add(found.tool_use_id)
        edited = found.tool_use_id in self.tool_edits
        return {
            "tool_use_id": found.tool_use_id,
            "name": found.name,
            "step": found.step,
            "content": self.tool_edits[found.tool_use_id] if edited else found.content,
            "is_error": (found.tool_use_id in self.tool_errors) if edited else found.is_error,
            "source": "edit" if edited else "recorded",
        }

    def forked_from(self) -> dict[str, Any]:
        """The ``forked_from`` link of the trace a live fork writes: the shape the harness's
        fork writes (``edit``; ``edits`` when there are several)."""
        edits: list[tuple[int, Any]] = sorted(
            [*self.spec.answers.items()]
            + [
                (s, ToolResultEdit(c, is_error=s in self.spec.tool_errors))
                for s, c in self.spec.tool_results.items()
            ],
            key=lambda pair: pair[0],
        )
        link: dict[str, Any] = {
            "session_id": self.trace.session_id,
            "at_step": edits[0][0] if edits else (self.live_from or 0),
            "edit": edits[0][1].to_dict() if edits else None,
            "live_after": self.spec.live_after,
            "path": str(self.trace.path) if self.trace.path else None,
        }
        if self.spec.model is not None:  # as the harness's rewind with another model says
            link["model"] = self.spec.model
        if len(edits) > 1:
            link["edits"] = [{"at_step": n, "edit": e.to_dict()} for n, e in edits]
        return link

    def fork_book(self, trace_dir: Any, **kwargs: Any) -> SessionBook:
        """Where the fork writes its trace: every call with the edits in place, linked by
        :meth:`forked_from` (``kwargs`` go to :class:`SessionBook`)."""
        return SessionBook(
            trace_dir,
            forked_from=self.forked_from(),
            tool_edits=self.tool_edits,
            tool_errors=self.tool_errors,
            live_from=self.live_from,
            **kwargs,
        )

    def status(self) -> dict[str, Any]:
        """What ``GET /v1/replays/{id}`` answers."""
        return {
            "id": self.id,
            "run": self.trace.session_id,
            "mode": self.spec.mode.value,
            "calls": len(self.tape),
            "requests": self.requests,
            "served": self.served,
            "matched": self.matched,
            "masked_matches": self.masked_matches,
            "masks_used": dict(self.masks_used),
            "verdicts": {str(step): v for step, v in sorted(self.verdicts.items())},
            "masks": {"count": len(self.masks), "sources": self.masks.sources},
            "live_calls": self.live_calls,
            "rejected": self.rejected,
            "count_tokens": {"answered": self.counted, "estimated": self.estimated},
            "live_from": self.live_from,
            "tool_edits": self.tool_edits,
            "tool_errors": self.tool_errors,
            "divergence": self.divergence,
            "forked_from": self.forked_from() if self.live_from is not None else None,
            "expires_at": _iso(self.expires_at),
        }


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
