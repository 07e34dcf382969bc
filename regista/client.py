"""The harness side of ``"live": "signal"`` replays, for Python SDK agents.

``ReplaySession`` creates a replay on a regista server and wraps your ``anthropic`` /
``openai`` client (sync or async). Calls go to the replay; when the replay answers 409
``replay_live`` (the run is past its live point), that call and every later one go to your
own client, to the real provider. Every call is written to a trace with ``forked_from``
pointing at the recorded run, so the fork's outcome and cost sit next to its parent's::

    from regista.client import ReplaySession

    with ReplaySession("http://127.0.0.1:8787", run="01J…",
                       edits=[{"step": 1, "tool_result": "rainy"}]) as rs:
        client = rs.wrap(anthropic.Anthropic())
        ...  # your agent, unchanged
    rs.trace_paths  # the fork's trace

The wrapped calls are Anthropic's ``messages``, OpenAI's ``chat.completions`` and OpenAI's
``responses`` (the Responses API; a tool-result edit replaces the ``output`` of its
``function_call_output`` item in what goes live).

Streamed calls (``stream=True``, Anthropic ``messages.stream``, OpenAI
``chat.completions.stream`` and its ``beta`` alias, ``responses.stream``) are served and go
live the same way;
their events are reassembled into the final message (usage included) and written when the
stream has been read to its end. A stream abandoned halfway is not written.
"""

from __future__ import annotations

import contextlib
import inspect
from pathlib import Path
from typing import Any

import httpx2

from regista.errors import RegistaError, UserError

__all__ = ["ReplaySession"]


def _jsonable(value: Any) -> Any:
    if isinstance(value, type):  # OpenAI's stream(response_format=SomeModel)
        return _response_format(value)
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def _response_format(cls: type) -> Any:
    """The ``response_format`` the OpenAI SDK sends for ``cls``."""
    try:
        from openai.lib._parsing._completions import type_to_response_format_param

        return _jsonable(dict(type_to_response_format_param(cls)))  # type: ignore[arg-type]
    except Exception:  # another SDK version: name it at least
        return {"type": "json_schema", "json_schema": {"name": cls.__name__}}


def _completion_body(snapshot: Any) -> dict[str, Any] | None:
    """The chat completion an OpenAI stream helper's final snapshot stands for, as the
    API would have sent it (without the SDK's own ``parsed`` fields); ``None`` before
    the stream's ``finish_reason``."""
    data = snapshot.model_dump(mode="json") if hasattr(snapshot, "model_dump") else None
    if not isinstance(data, dict):
        return None
    choices = data.get("choices") or []
    if not choices or not isinstance(choices[0], dict) or choices[0].get("finish_reason") is None:
        return None
    for choice in choices:
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        message.pop("parsed", None)
        for call in message.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                fn.pop("parsed_arguments", None)
            if isinstance(call, dict):
                call.pop("index", None)
    data["object"] = "chat.completion"
    return data


def _unparsed(data: Any) -> Any:
    """A Responses body without the SDK's own ``parsed`` fields (the API sends none)."""
    if isinstance(data, dict):
        return {k: _unparsed(v) for k, v in data.items() if k != "parsed"}
    if isinstance(data, list):
        return [_unparsed(v) for v in data]
    return data


def _is_live_signal(exc: BaseException) -> bool:
    body = getattr(exc, "body", None)
    if getattr(exc, "status_code", None) != 409 or not isinstance(body, dict):
        return False
    error = body.get("error", body)
    return isinstance(error, dict) and error.get("type") == "replay_live"


class ReplaySession:
    """A ``live="signal"`` replay of ``run`` on the server at ``url``.

    Args:
        url: The server (``http://127.0.0.1:8787``).
        run: The recorded run's session id.
        mode: ``strict`` or ``loose``.
        edits: ``[{"step": N, "tool_result": …} | {"step": N, "answer": …}]``.
        live_after: The last step served from the tape (default: the last edit).
        token: The server's token, if it has one.
        trace_dir: Where the fork's trace goes.
    """

    def __init__(
        self,
        url: str,
        run: str,
        *,
        mode: str = "strict",
        edits: list[dict[str, Any]] | None = None,
        live_after: int | None = None,
        token: str | None = None,
        trace_dir: str | Path = ".regista/traces",
    ) -> None:
        headers = {"x-regista-token": token} if token else {}
        body: dict[str, Any] = {"run": run, "mode": mode, "edits": edits or [], "live": "signal"}
        if live_after is not None:
            body["live_after"] = live_after
        try:
            r = httpx2.post(url.rstrip("/") + "/v1/replays", json=body, headers=headers)
        except httpx2.HTTPError as exc:
            raise RegistaError(f"cannot reach the regista server at {url}: {exc}") from None
        if r.status_code != 201:
            try:
                message = r.json()["error"]["message"]
            except Exception:
                message = r.text[:200]
            raise UserError(f"the replay could not be created: {message}")
        self.info: dict[str, Any] = r.json()
        status = httpx2.get(
            url.rstrip("/") + f"/v1/replays/{self.info['id']}", headers=headers
        ).json()
        #: Edited tool results by tool_use_id: put in place of the agent's own in live calls.
        self.tool_edits: dict[str, Any] = status.get("tool_edits") or {}
        self.tool_errors: list[str] = status.get("tool_errors") or []
        self.url = url
        self.token = token
        self.run = run
        self.live = False
        from regista.wire.sessions import SessionBook

        edited = [e["step"] for e in edits or [] if isinstance(e, dict) and "step" in e]
        live_from = (-1 if live_after is None else live_after) + 1
        # the server's link, in the shape the harness's fork writes; the edited tool results
        # are written in place of the agent's own, so the fork is one trace
        self.book = SessionBook(
            trace_dir,
            forked_from=status.get("forked_from")
            or {
                "session_id": run,
                "at_step": min(edited) if edited else live_from,
                "edit": None,
                "live_after": live_after,
                "path": None,
            },
            tool_edits=self.tool_edits,
            tool_errors=self.tool_errors,
            live_from=status.get("live_from"),
        )

    @property
    def id(self) -> str:
        return str(self.info["id"])

    @property
    def trace_paths(self) -> list[Path]:
        return self.book.paths

    def wrap(self, client: Any) -> Any:
        """A stand-in for ``client`` whose model calls go to the replay, then live."""
        module = type(client).__module__.split(".")[0]
        if module == "anthropic":
            base = self.info["anthropic_base_url"]
            return _Wrapped(self, client, client.with_options(base_url=base), "anthropic")
        if module == "openai":
            base = self.info["openai_base_url"]
            return _Wrapped(self, client, client.with_options(base_url=base), "openai")
        raise UserError(
            f"cannot wrap a {type(client).__name__}: give an anthropic or openai client"
        )

    def close(self) -> None:
        """End the fork's trace and drop the replay from the server."""
        self.book.close()
        headers = {"x-regista-token": self.token} if self.token else {}
        with contextlib.suppress(httpx2.HTTPError):  # else it expires on its own
            httpx2.delete(f"{self.url.rstrip('/')}/v1/replays/{self.id}", headers=headers)

    def __enter__(self) -> ReplaySession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _record(self, provider: str, kwargs: dict[str, Any], result: Any, source: str) -> None:
        # ``provider``: ``anthropic``, ``openai`` (chat completions) or ``openai-responses``
        if kwargs.get("stream") or not hasattr(result, "model_dump"):
            return
        # Anthropic: fields the SDK fills with None are not the provider's (as the proxy sees it)
        data = result.model_dump(mode="json", exclude_none=provider == "anthropic")
        self._record_body(provider, kwargs, data, source)

    def _record_body(
        self, provider: str, kwargs: dict[str, Any], data: dict[str, Any], source: str
    ) -> None:
        from regista.types import LlmResponse
        from regista.wire.openai_responses import responses_request, responses_response
        from regista.wire.shapes import anthropic_request, openai_request, openai_response

        body = _jsonable(kwargs)
        api = None
        try:
            if provider == "anthropic":
                request = anthropic_request(body)
                response = LlmResponse.model_validate(data)
            elif provider == "openai-responses":
                prev = body.get("previous_response_id")
                prior = self.book.conversation_of(prev) if isinstance(prev, str) else None
                request = responses_request(body, prior)
                response = responses_response(_unparsed(data))
                provider, api = "openai", "openai-responses"
            else:
                request = openai_request(body)
                response = openai_response(data)
        except Exception:  # a call regista cannot read is still answered, just not written
            return
        self.book.record(provider, request, response, source=source, api=api)

    def _observe(self, provider: str, kwargs: dict[str, Any], result: Any, source: str) -> Any:
        """Write ``result`` (a stream: once it has been read to its end); return what the
        agent gets."""
        if kwargs.get("stream"):
            return _RecordedStream(self, provider, kwargs, result, source)
        self._record(provider, kwargs, result, source)
        return result


class _RecordedStream:
    """A stream from the SDK (sync or async), passed through event by event and written
    when it ends."""

    def __init__(
        self, rs: ReplaySession, provider: str, kwargs: dict[str, Any], inner: Any, source: str
    ) -> None:
        from regista.wire.accumulate import stream_for

        self._rs, self._provider, self._kwargs, self._inner = rs, provider, kwargs, inner
        self._source = source
        self._acc = stream_for(provider)
        self._written = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _see(self, event: Any) -> None:
        anthropic = self._provider == "anthropic"
        dump = getattr(event, "model_dump", None)
        data = dump(mode="json", exclude_none=anthropic) if dump is not None else event
        if isinstance(data, dict):
            self._acc.add(data)

    def _done(self) -> None:
        if self._written:
            return
        self._written = True
        data = self._acc.result() if self._acc.complete else None  # not a stream cut short
        if data is not None:
            self._rs._record_body(self._provider, self._kwargs, data, self._source)

    def __iter__(self) -> Any:
        for event in self._inner:
            self._see(event)
            yield event
        self._done()

    def __next__(self) -> Any:
        try:
            event = next(self._inner)
        except StopIteration:
            self._done()
            raise
        self._see(event)
        return event

    async def __aiter__(self) -> Any:
        async for event in self._inner:
            self._see(event)
            yield event
        self._done()

    async def __anext__(self) -> Any:
        try:
            event = await self._inner.__anext__()
        except StopAsyncIteration:
            self._done()
            raise
        self._see(event)
        return event

    def __enter__(self) -> _RecordedStream:
        self._inner.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._inner.__exit__(*exc)

    async def __aenter__(self) -> _RecordedStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


class _StreamManager:
    """Anthropic ``messages.stream(...)``, OpenAI ``chat.completions.stream(...)`` and
    ``responses.stream(...)``: served
    from the replay, live past the cut, and written from the final message when the
    ``with`` block ends (once the stream was read to its end)."""

    def __init__(self, endpoint: _Endpoint, kwargs: dict[str, Any]) -> None:
        self._ep, self._kwargs = endpoint, kwargs
        self._mgr: Any = None
        self._stream: Any = None
        self._sent: dict[str, Any] = kwargs
        self._source = "recorded"

    def _live(self) -> Any:
        self._ep._rs.live = True
        self._sent, self._source = self._ep._live_kwargs(self._kwargs), "live"
        return self._ep._real.stream(**self._sent)

    def __enter__(self) -> Any:
        if self._ep._rs.live:
            self._mgr = self._live()
            self._stream = self._mgr.__enter__()
            return self._stream
        self._mgr = self._ep._replay.stream(**self._kwargs)
        try:
            self._stream = self._mgr.__enter__()
        except Exception as exc:
            if not _is_live_signal(exc):
                raise
            self._mgr = self._live()
            self._stream = self._mgr.__enter__()
        return self._stream

    def __exit__(self, *exc: Any) -> Any:
        if exc[0] is None:
            self._write()
        return self._mgr.__exit__(*exc)

    async def __aenter__(self) -> Any:
        if self._ep._rs.live:
            self._mgr = self._live()
            self._stream = await self._mgr.__aenter__()
            return self._stream
        self._mgr = self._ep._replay.stream(**self._kwargs)
        try:
            self._stream = await self._mgr.__aenter__()
        except Exception as exc:
            if not _is_live_signal(exc):
                raise
            self._mgr = self._live()
            self._stream = await self._mgr.__aenter__()
        return self._stream

    async def __aexit__(self, *exc: Any) -> Any:
        if exc[0] is None:
            self._write()
        return await self._mgr.__aexit__(*exc)

    def _write(self) -> None:
        rs = self._ep._rs
        if self._ep._provider == "openai-responses":
            # the helper's final response, once ``response.completed`` was read
            final = getattr(getattr(self._stream, "_state", None), "_completed_response", None)
            if final is not None:
                data = final.model_dump(mode="json")
                rs._record_body("openai-responses", self._sent, data, self._source)
            return
        if self._ep._provider == "openai":
            try:
                data = _completion_body(self._stream.current_completion_snapshot)
            except Exception:  # nothing was received
                return
            if data is not None:  # else abandoned before the finish_reason
                rs._record_body("openai", self._sent, data, self._source)
            return
        try:
            snapshot = self._stream.current_message_snapshot
        except Exception:  # nothing was received
            return
        if getattr(snapshot, "stop_reason", None) is None:
            return  # abandoned before message_stop
        rs._record("anthropic", self._sent, snapshot, self._source)


class _Wrapped:
    """Proxies a client; ``messages`` / ``chat.completions`` / ``responses`` calls are
    intercepted."""

    def __init__(self, rs: ReplaySession, real: Any, replay: Any, provider: str) -> None:
        self._rs, self._real, self._replay, self._provider = rs, real, replay, provider

    def __getattr__(self, name: str) -> Any:
        if self._provider == "anthropic" and name == "messages":
            return _Endpoint(self._rs, self._real.messages, self._replay.messages, "anthropic")
        if self._provider == "openai" and name == "chat":
            return _Chat(self._rs, self._real.chat, self._replay.chat)
        if self._provider == "openai" and name == "responses":
            return _Endpoint(
                self._rs, self._real.responses, self._replay.responses, "openai-responses"
            )
        if self._provider == "openai" and name == "beta":
            return _Beta(self._rs, self._real.beta, self._replay.beta)
        return getattr(self._real, name)


class _Beta:
    """OpenAI's ``client.beta``: its ``chat`` (the stream helper's older home) is wrapped."""

    def __init__(self, rs: ReplaySession, real: Any, replay: Any) -> None:
        self._rs, self._real, self._replay = rs, real, replay

    def __getattr__(self, name: str) -> Any:
        if name == "chat":
            return _Chat(self._rs, self._real.chat, self._replay.chat)
        return getattr(self._real, name)


class _Chat:
    def __init__(self, rs: ReplaySession, real: Any, replay: Any) -> None:
        self._rs, self._real, self._replay = rs, real, replay

    def __getattr__(self, name: str) -> Any:
        if name == "completions":
            return _Endpoint(self._rs, self._real.completions, self._replay.completions, "openai")
        return getattr(self._real, name)


class _Endpoint:
    def __init__(self, rs: ReplaySession, real: Any, replay: Any, provider: str) -> None:
        self._rs, self._real, self._replay, self._provider = rs, real, replay, provider

    def _live_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """What goes to the real provider: the edited tool results in place of the agent's
        (and a Responses call chained to an answer of the replay sent whole: the provider
        never saw that answer)."""
        if self._provider == "openai-responses":
            from regista.wire.openai_responses import input_items, substitute_outputs

            prev = kwargs.get("previous_response_id")
            prior = self._rs.book.conversation_of(prev) if isinstance(prev, str) else None
            if prior is not None:
                own = _jsonable(kwargs.get("input", []))
                own = [{"role": "user", "content": own}] if isinstance(own, str) else own
                kwargs = {k: v for k, v in kwargs.items() if k != "previous_response_id"}
                kwargs["input"] = [*input_items(prior), *own]
            if self._rs.tool_edits and isinstance(kwargs.get("input"), list):
                items = _jsonable(kwargs["input"])
                substitute_outputs(items, self._rs.tool_edits)
                kwargs = {**kwargs, "input": items}
            return kwargs
        if not self._rs.tool_edits or "messages" not in kwargs:
            return kwargs
        from regista.wire.sessions import substitute_tool_results

        body = {"messages": _jsonable(kwargs["messages"])}
        substitute_tool_results(body, self._provider, self._rs.tool_edits, self._rs.tool_errors)
        return {**kwargs, "messages": body["messages"]}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real if self._rs.live else self._replay, name)

    def stream(self, **kwargs: Any) -> Any:
        """Anthropic ``messages.stream(...)``, OpenAI ``chat.completions.stream(...)`` and
        ``responses.stream(...)``."""
        return _StreamManager(self, kwargs)

    def create(self, **kwargs: Any) -> Any:
        rs = self._rs
        if rs.live:
            live = self._live_kwargs(kwargs)
            return self._finish(self._real.create(**live), live, "live")
        try:
            result = self._replay.create(**kwargs)
        except Exception as exc:
            if not _is_live_signal(exc):
                raise
            rs.live = True
            live = self._live_kwargs(kwargs)
            return self._finish(self._real.create(**live), live, "live")
        if inspect.isawaitable(result):
            return self._async(result, kwargs)
        return rs._observe(self._provider, kwargs, result, "recorded")

    async def _async(self, pending: Any, kwargs: dict[str, Any]) -> Any:
        rs = self._rs
        try:
            result = await pending
        except Exception as exc:
            if not _is_live_signal(exc):
                raise
            rs.live = True
            live = self._live_kwargs(kwargs)
            result = await self._real.create(**live)
            return rs._observe(self._provider, live, result, "live")
        return rs._observe(self._provider, kwargs, result, "recorded")

    def _finish(self, result: Any, kwargs: dict[str, Any], source: str) -> Any:
        if inspect.isawaitable(result):

            async def done() -> Any:
                return self._rs._observe(self._provider, kwargs, await result, source)

            return done()
        return self._rs._observe(self._provider, kwargs, result, source)
