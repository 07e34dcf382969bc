"""The ``Provider`` protocol: the seam between the agent loop and a model.

A provider takes a normalised :class:`~regista.types.LlmRequest` and returns a
:class:`~regista.types.LlmResponse`. Anthropic, the scripted test model and the replay
tape all implement it, so the loop never knows which one answered; the trace does.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol, runtime_checkable
from urllib.parse import urlsplit

from regista.aio import await_maybe
from regista.types import LlmRequest, LlmResponse

__all__ = [
    "Provider",
    "ResponseMeta",
    "TextCallback",
    "meta_of",
    "server_of",
    "set_meta",
    "stream_recorded",
    "text_chunks",
]

#: Receives text deltas while a streaming provider generates them.
TextCallback = Callable[[str], Any | Awaitable[Any]]


@runtime_checkable
class Provider(Protocol):
    """Anything that can answer a model request.

    Attributes:
        name: Shown wherever a person sees who answered ("anthropic", "scripted", …).
    """

    name: str

    async def complete(
        self, request: LlmRequest, *, on_text: TextCallback | None = None
    ) -> LlmResponse:
        """Answer ``request``; call ``on_text`` with text deltas when streaming."""
        ...


class ResponseMeta:
    """Who answered a call and how: kept off the recorded payload."""

    __slots__ = ("matched", "provider", "recorded_ms", "server", "source", "stream")

    def __init__(
        self,
        provider: str,
        source: Literal["live", "recorded", "edit"],
        matched: bool | None = None,
        recorded_ms: float = 0.0,
        stream: bool | None = None,
        server: dict[str, Any] | None = None,
    ) -> None:
        self.provider = provider
        self.source = source
        self.matched = matched
        #: For a recorded answer: the model time the recording spent on it.
        self.recorded_ms = recorded_ms
        #: Whether the call asked for a streamed answer; ``None``: not an API call.
        self.stream = stream
        #: ``{"address", "port"}`` of the API that answered; ``None``: not known.
        self.server = server


def set_meta(
    response: LlmResponse,
    provider: str,
    source: str = "live",
    matched: bool | None = None,
    recorded_ms: float = 0.0,
    *,
    stream: bool | None = None,
    server: dict[str, Any] | None = None,
) -> LlmResponse:
    """Attach who answered (``provider``), how (``source``: live, recorded, edit), for
    positional playback whether the request ``matched`` the recording, for a recorded
    answer the model time it took when recorded, and for an API call whether it was
    streamed and the ``server`` it went to (see :func:`server_of`)."""
    meta = ResponseMeta(
        provider,
        source,  # type: ignore[arg-type]
        matched,
        recorded_ms,
        stream,
        server,
    )
    object.__setattr__(response, "__regista_meta__", meta)
    return response


def server_of(base_url: str | None) -> dict[str, Any] | None:
    """``{"address": host, "port": port}`` of an API's base URL, or ``None``.

    Only the host and the port are kept: user names, passwords, paths and query strings
    (where keys sometimes ride) never leave the URL. The port defaults to the scheme's
    (443 for ``https``, 80 for ``http``).
    """
    if not base_url:
        return None
    try:
        parts = urlsplit(str(base_url))
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number, a bad IPv6 literal
        return None
    if not host:
        return None
    if port is None:
        port = {"https": 443, "http": 80}.get(parts.scheme.lower())
    return {"address": host, "port": port} if port is not None else {"address": host}


def meta_of(response: LlmResponse, default_provider: str) -> ResponseMeta:
    meta = getattr(response, "__regista_meta__", None)
    if isinstance(meta, ResponseMeta):
        return meta
    return ResponseMeta(default_provider, "live")


#: A word and the white space after it (or white space a text starts with).
_CHUNK = re.compile(r"\S+\s*|\s+")


def text_chunks(text: str) -> list[str]:
    """``text`` cut into word-sized deltas, as a streaming model sends them; they join back
    into exactly ``text``."""
    return _CHUNK.findall(text)


async def stream_recorded(on_text: TextCallback | None, response: LlmResponse) -> None:
    """Feed a recorded answer's text to ``on_text`` as a stream: each text block in
    word-sized deltas, so a replay streams like the live run did (the deltas of all blocks
    join into ``response.text``)."""
    if on_text is None:
        return
    for block in response.content:
        if block.get("type") != "text":
            continue
        for delta in text_chunks(str(block.get("text", ""))):
            await await_maybe(on_text(delta))
