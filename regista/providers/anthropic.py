"""``AnthropicProvider``: the Messages API through the official ``anthropic`` SDK.

The SDK is imported when a provider is made, never when ``regista`` is imported (it costs
about a second, and replays, the CLI and the TUI do not need it).

Credentials are the SDK's: ``api_key=`` wins over ``ANTHROPIC_API_KEY`` (and
``ANTHROPIC_AUTH_TOKEN`` or an SDK profile), ``base_url=`` over ``ANTHROPIC_BASE_URL``.
A provider with no credential at all fails when it is made, with
:class:`~regista.errors.MissingCredentialsError`, so a program learns it before the first
call. Keys and headers live only in the SDK client: nothing this module returns (the
normalised response, error messages) carries them, so they never reach a trace.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from regista.aio import await_maybe
from regista.errors import MissingCredentialsError, ProviderError, UserError
from regista.providers.base import TextCallback, server_of, set_meta
from regista.trace.names import USAGE_COUNTS
from regista.types import LlmRequest, LlmResponse, Usage

if TYPE_CHECKING:
    import anthropic

__all__ = ["AnthropicProvider"]

#: Request fields that ``LlmRequest`` owns: a ``params`` entry may not override them.
_RESERVED = frozenset(
    {"model", "messages", "system", "tools", "tool_choice", "max_tokens", "stream"}
)
#: Message fields copied by name; any other non-null field is kept as an extra.
_MESSAGE_SKIP = frozenset({"type", "content", "usage", *LlmResponse.model_fields})


class AnthropicProvider:
    """Answers requests with Anthropic's Messages API (``anthropic.AsyncAnthropic``).

    Args:
        model: Default model; the request's ``model`` is what is sent.
        api_key: The API key; ``None`` uses ``ANTHROPIC_API_KEY`` (or the SDK's other
            credential sources).
        base_url: The API's address; ``None`` uses ``ANTHROPIC_BASE_URL`` or Anthropic's.
        stream: Use the streaming API and pass text deltas to ``on_text`` as they come.
            Without it, ``on_text`` receives each text block whole once the answer is in.
        max_retries: Retries of the SDK for connection errors, 408/409/429 and 5xx.
        timeout: Seconds per request; ``None`` keeps the SDK's default.
        client: A ready ``AsyncAnthropic`` to use instead of making one; then ``api_key``,
            ``base_url`` and ``timeout`` must not be given, and ``max_retries`` is the
            client's own.

    Raises:
        MissingCredentialsError: No API key was given or found.
    """

    name = "anthropic"

    def __init__(
        self,
        model: str = "claude-sonnet-4-6",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        stream: bool = False,
        max_retries: int = 2,
        timeout: float | None = None,
        client: anthropic.AsyncAnthropic | None = None,
    ) -> None:
        self.model = model
        self.stream = stream
        self._owns_client = client is None
        self._loop: asyncio.AbstractEventLoop | None = None
        if client is not None:
            if api_key is not None or base_url is not None or timeout is not None:
                raise UserError(
                    "AnthropicProvider: pass either client= or api_key/base_url/timeout, not both"
                )
            self._client = client
            self._settings: dict[str, Any] = {}
        else:
            self._settings = {"api_key": api_key, "base_url": base_url, "max_retries": max_retries}
            if timeout is not None:
                self._settings["timeout"] = timeout
            self._client = self._make_client()
        self.base_url = str(self._client.base_url)
        #: Where the calls go (host and port only), recorded with each answer.
        self.server = server_of(self.base_url)

    def __repr__(self) -> str:
        base_url = getattr(self, "base_url", None)
        return f"AnthropicProvider(model={self.model!r}, base_url={base_url!r})"

    # -- the client ----------------------------------------------------------------------

    def _make_client(self) -> anthropic.AsyncAnthropic:
        import anthropic

        try:
            client = anthropic.AsyncAnthropic(**self._settings)
        except anthropic.AnthropicError as exc:
            raise MissingCredentialsError(
                f"Anthropic credentials could not be loaded ({_one_line(str(exc))}); set the "
                "ANTHROPIC_API_KEY environment variable or pass api_key= to AnthropicProvider"
            ) from None
        if not _has_credentials(client):
            raise MissingCredentialsError(
                "no Anthropic API key: set the ANTHROPIC_API_KEY environment variable "
                "(or pass api_key= to AnthropicProvider)"
            )
        return client

    def _client_for_loop(self) -> anthropic.AsyncAnthropic:
        # The SDK's connection pool belongs to the event loop it first ran on; a provider
        # reused under a new loop (``run_sync`` twice) needs a client of its own there.
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif loop is not self._loop and self._owns_client:
            self._client = self._make_client()
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP connections of a client this provider made."""
        if self._owns_client:
            await self._client.close()

    # -- calls ---------------------------------------------------------------------------

    async def complete(
        self, request: LlmRequest, *, on_text: TextCallback | None = None
    ) -> LlmResponse:
        """Send ``request``; stream text deltas to ``on_text`` when ``stream`` is on.

        Raises:
            ProviderError: The API or the connection failed (one line: status, type, message).
        """
        client = self._client_for_loop()
        kwargs = to_sdk_kwargs(request)
        callback_error: BaseException | None = None
        try:
            if self.stream:
                async with client.messages.stream(**kwargs) as stream:
                    async for event in stream:
                        if event.type == "content_block_delta" and event.delta.type == "text_delta":
                            await _guarded_call(on_text, event.delta.text)
                    message = await stream.get_final_message()
            else:
                message = await client.messages.create(**kwargs)
        except _CallbackError as exc:  # the caller's own error, not the API's
            callback_error = exc.error
        except Exception as exc:
            raise ProviderError(self._scrub(describe_error(exc))) from None
        if callback_error is not None:
            raise callback_error
        if message.stop_reason is None:
            raise ProviderError(
                "the Anthropic API stream ended before the message was complete "
                "(no stop_reason): the connection was probably cut"
            )
        response = from_sdk_message(message)
        if not self.stream and on_text is not None:
            for block in response.content:
                if block.get("type") == "text" and block.get("text"):
                    await _call(on_text, str(block["text"]))
        return set_meta(response, self.name, stream=self.stream, server=self.server)

    def _scrub(self, message: str) -> str:
        # An error body may echo what was sent, whole or cut short: never let a
        # credential (or an identifying piece of one) ride along.
        from regista.providers.scrub import scrub_secrets

        return scrub_secrets(
            message, (self._client.api_key, getattr(self._client, "auth_token", None))
        )


def _has_credentials(client: Any) -> bool:
    return bool(
        getattr(client, "api_key", None)
        or getattr(client, "auth_token", None)
        or getattr(client, "credentials", None)
    )


class _CallbackError(Exception):
    """Carries an exception raised by ``on_text`` past the SDK error handling."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


async def _call(on_text: TextCallback | None, delta: str) -> None:
    if on_text is None:
        return
    await await_maybe(on_text(delta))


async def _guarded_call(on_text: TextCallback | None, delta: str) -> None:
    try:
        await _call(on_text, delta)
    except Exception as exc:
        raise _CallbackError(exc) from None


# -- conversion ---------------------------------------------------------------------------


def to_sdk_kwargs(request: LlmRequest) -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` / ``messages.stream`` for ``request``.

    Sampling parameters go through ``extra_body`` as they are, so every parameter the API
    accepts (temperature, top_k, thinking, metadata, …) works whatever the SDK's version.

    Raises:
        UserError: ``params`` tries to set a field the request owns (``model``, ``stream``, …).
    """
    clash = sorted(_RESERVED & request.params.keys())
    if clash:
        raise UserError(
            f"params may not set {', '.join(clash)}: use the Agent's own arguments for these"
        )
    kwargs: dict[str, Any] = {
        "model": request.model,
        "messages": request.messages,
        "max_tokens": request.max_tokens,
    }
    if request.system is not None:
        kwargs["system"] = request.system
    if request.tools:
        kwargs["tools"] = request.tools
    choice = request.tool_choice
    if choice is not None and choice.get("type") != "openai_tool_choice":
        # a choice recorded from OpenAI keeps its original under ``openai``: not the API's
        kwargs["tool_choice"] = {k: v for k, v in choice.items() if k != "openai"}
    if request.params:
        kwargs["extra_body"] = dict(request.params)
    return kwargs


def from_sdk_message(message: Any) -> LlmResponse:
    """The normalised response for an SDK ``Message``: plain dicts, no null fields."""
    data: dict[str, Any] = message.to_dict(mode="json", exclude_none=True)
    usage_raw: dict[str, Any] = dict(data.get("usage") or {})
    counts = {k: int(usage_raw.pop(k, 0) or 0) for k in USAGE_COUNTS}
    content = [_clean_block(b) for b in data.get("content") or []]
    extras = {k: v for k, v in data.items() if k not in _MESSAGE_SKIP}
    return LlmResponse(
        id=data.get("id"),
        model=data.get("model"),
        content=content,
        stop_reason=data.get("stop_reason"),
        stop_sequence=data.get("stop_sequence"),
        usage=Usage(**counts, **usage_raw),
        **extras,
    )


def _clean_block(block: dict[str, Any]) -> dict[str, Any]:
    # ``type`` first, as the API writes it; the stream helper's ``parsed_output`` dropped.
    out: dict[str, Any] = {"type": block.get("type")}
    out.update((k, v) for k, v in block.items() if k not in ("type", "parsed_output"))
    return out


def describe_error(exc: Exception) -> str:
    """One line for a person: what failed, the HTTP status, the API's error type and message."""
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        err_type = getattr(exc, "type", None) or _body_field(exc.body, "type")
        message = getattr(exc, "api_message", None) or _body_field(exc.body, "message")
        if 200 <= exc.status_code < 300:  # an ``error`` event in the middle of a stream
            line = "Anthropic API error while streaming"
            line += f", {err_type}" if err_type else ""
        else:
            line = f"Anthropic API error {exc.status_code}"
            line += f" {err_type}" if err_type else ""
        line += f": {message or exc.message}"
        request_id = getattr(exc, "request_id", None)
        if request_id:
            line += f" (request id {request_id})"
        return _one_line(line)
    if isinstance(exc, ValueError) and not isinstance(exc, anthropic.AnthropicError):
        # The SDK refuses some requests itself ("streaming is required" for long ones).
        return _one_line(f"Anthropic SDK refused the request: {exc}")
    if isinstance(exc, anthropic.APITimeoutError):
        return "Anthropic API request timed out" + _where(exc)
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        why = f": {type(cause).__name__}: {cause}" if cause else f": {exc}"
        return _one_line(f"connection to the Anthropic API failed{_where(exc)}{why}")
    return _one_line(f"Anthropic API call failed ({type(exc).__name__}): {exc}")


def _where(exc: Any) -> str:
    request = getattr(exc, "request", None)
    url = getattr(request, "url", None)
    if url is None:
        return ""
    # Only scheme, host and path: a query string could hold anything.
    host = url.netloc.decode() if isinstance(url.netloc, bytes) else url.netloc
    return f" at {url.scheme}://{host}{url.path}"


def _body_field(body: object, name: str) -> str | None:
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get(name), str):
            return str(error[name])
    return None


def _one_line(text: str) -> str:
    return " ".join(text.split())
