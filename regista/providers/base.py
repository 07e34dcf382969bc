"""The ``Provider`` protocol: the seam between the agent loop and a model.

A provider takes a normalised :class:`~regista.types.LlmRequest` and returns a
:class:`~regista.types.LlmResponse`. Anthropic, the scripted test model and the replay
tape all implement it, so the loop never knows which one answered; the trace does.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol, runtime_checkable

from regista.aio import await_maybe
from regista.types import LlmRequest, LlmResponse

__all__ = [
    "Provider",
    "ResponseMeta",
    "TextCallback",
    "meta_of",
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

    __slots__ = ("matched", "provider", "recorded_ms", "source")

    def __init__(
        self,
        provider: str,
        source: Literal["live", "recorded", "edit"],
        matched: bool | None = None,
        recorded_ms: float = 0.0,
    ) -> None:
        self.provider = provider
        self.source = source
        self.matched = matched
        #: For a recorded answer: the model time the recording spent on it.
        self.recorded_ms = recorded_ms


def set_meta(
    response: LlmResponse,
    provider: str,
    source: str = "live",
    matched: bool | None = None,
    recorded_ms: float = 0.0,
) -> LlmResponse:
    """Attach who answered (``provider``), how (``source``: live, recorded, edit), for
    positional playback whether the request ``matched`` the recording, and for a recorded
    answer the model time it took when recorded."""
    meta = ResponseMeta(provider, source, matched, recorded_ms)  # type: ignore[arg-type]
    object.__setattr__(response, "__regista_meta__", meta)
    return response


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
