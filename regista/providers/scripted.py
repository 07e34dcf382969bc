"""``ScriptedProvider``: the offline model for tests and demos.

Each item of the script is a response in the Anthropic Messages response shape, or a
callable that takes the :class:`LlmRequest` and returns one. A single callable may stand
for the whole script (it answers every call). It is recorded like any other provider and
says "scripted" wherever a person sees which model answered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import ValidationError

from regista.aio import await_maybe
from regista.errors import ProviderError
from regista.providers.base import TextCallback, set_meta
from regista.types import LlmRequest, LlmResponse

__all__ = ["ScriptFn", "ScriptedProvider"]

ScriptFn = Callable[[LlmRequest], Any]


class ScriptedProvider:
    """Plays a fixed script of responses, in order.

    Args:
        script: Response dicts and/or callables ``(request) -> dict``; or one callable
            that answers every call.
        stream_chunk: When set, text blocks are fed to ``on_text`` in chunks of this many
            characters, imitating a streaming model.
        delay: Seconds each answer takes (spread over its streamed chunks), so a demo
            plays at a pace a person can follow. ``0`` answers at once.
    """

    name = "scripted"

    def __init__(
        self,
        script: Iterable[Any] | ScriptFn,
        *,
        stream_chunk: int | None = None,
        delay: float = 0.0,
    ):
        self._fn: ScriptFn | None = None
        self._items: list[Any] = []
        if callable(script) and not isinstance(script, list | tuple):
            self._fn = script
        else:
            self._items = list(script)
        self.stream_chunk = stream_chunk
        self.delay = max(0.0, delay)
        self.calls = 0
        self.requests: list[LlmRequest] = []

    async def complete(
        self, request: LlmRequest, *, on_text: TextCallback | None = None
    ) -> LlmResponse:
        n = self.calls
        self.calls += 1
        self.requests.append(request)
        if self._fn is not None:
            item: Any = self._fn
        elif n < len(self._items):
            item = self._items[n]
        else:
            raise ProviderError(
                f"ScriptedProvider: the script has {len(self._items)} responses and call "
                f"{n + 1} asked for another (a list answers each call once, so a provider "
                "that already ran a session has nothing left for a fork, rewind or resume: "
                "script a function of the request, or pass a fresh provider)"
            )
        raw = await await_maybe(item(request) if callable(item) else item)
        if isinstance(raw, dict) and "content" not in raw:  # e.g. a typo in a key
            keys = ", ".join(sorted(map(str, raw))) or "none"
            raise ProviderError(
                f"ScriptedProvider: response {n + 1} has no 'content' (its keys: {keys})"
            )
        try:
            response = (
                raw if isinstance(raw, LlmResponse) else LlmResponse.model_validate(raw)
            ).model_copy(deep=True)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'response'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ProviderError(
                f"ScriptedProvider: response {n + 1} is invalid: {problems}"
            ) from None
        # Generated ids derive from the request, so they are deterministic and never
        # collide with the ids of earlier turns (e.g. when a fork goes live mid-session).
        tag = request.hash[:12]
        response.id = response.id or f"msg_scripted_{tag}"
        response.model = "scripted"
        for i, block in enumerate(response.content):
            if block.get("type") == "tool_use":
                block.setdefault("id", f"toolu_scripted_{tag}_{i}")
                block.setdefault("input", {})
        given = raw.get("stop_reason") if isinstance(raw, dict) else response.stop_reason
        if given is None:
            response.stop_reason = "tool_use" if response.tool_uses else "end_turn"
        if on_text is not None:
            await _feed(on_text, response, self.stream_chunk, self.delay)
        elif self.delay:
            await asyncio.sleep(self.delay)
        return set_meta(response, self.name)


async def _feed(
    on_text: TextCallback, response: LlmResponse, chunk: int | None, delay: float
) -> None:
    pieces: list[str] = []
    for block in response.content:
        if block.get("type") != "text":
            continue
        text = str(block.get("text", ""))
        size = chunk or max(len(text), 1)
        pieces.extend(text[i : i + size] for i in range(0, len(text), size))
    pause = delay / max(len(pieces), 1)
    if not pieces and delay:
        await asyncio.sleep(delay)
    for piece in pieces:
        if pause:
            await asyncio.sleep(pause)
        await await_maybe(on_text(piece))
