"""The live half of a ``signal`` fork whose trace the server writes.

A replay created with ``"live": "signal", "trace": "server"`` answers its calls from the
tape until its live point, then 409 ``replay_live``. The client (the TypeScript client
does this) then sends that call, and every later one, to the replay's live URLs::

    …/v1/replays/rp_…/live/anthropic      (as ANTHROPIC_BASE_URL)
    …/v1/replays/rp_…/live/openai         (as OPENAI_BASE_URL)

They forward to the server's upstream exactly as the recording proxy does (the client's
own API key forwarded, never written), with the fork's edited tool results in place of
the agent's, and write each answered call into the fork's trace, after the ones the tape
served: one trace, linked to its parent by ``forked_from``, ended (``session.end``, with
its outcome and cost) when the replay is deleted or expires.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from regista.server.context import ServerContext, read_body, read_json
from regista.server.record import api_of, forward, provider_of
from regista.server.replays import _responses_request, registry
from regista.wire.errors import HttpError
from regista.wire.shapes import anthropic_request, openai_request

__all__ = ["routes"]


def routes(ctx: ServerContext) -> list[BaseRoute]:
    reg = registry(ctx)

    async def live(request: Request) -> Response:
        provider, shape = provider_of(request)
        replay = reg.get(request.path_params["rid"], shape)
        if replay.book is None or replay.spec.live != "signal":
            raise HttpError(
                400,
                "this replay has no live half of its own: create it with "
                '"live": "signal" and "trace": "server"',
                shape=shape,
            )
        rest = request.path_params["rest"].strip("/")
        if api_of(provider, rest) is None:
            # not a model call (a token count, a model list): passed on, not written
            raw = await read_body(request, ctx, shape=shape)  # bounded, as the proxy reads it
            return await forward(ctx, request, provider, rest, raw)
        if reg.live_handler is None:
            raise HttpError(502, "this server has no upstream to go live with", shape=shape)
        body = await read_json(request, ctx, shape=shape)
        # read as the replay reads a call (a body it cannot read is a 400 in the provider's
        # shape, never passed on half-understood)
        api = api_of(provider, rest)
        if api == "anthropic":
            anthropic_request(body)
        elif api == "openai-responses":
            _responses_request(replay, body)
        else:
            openai_request(body)
        # the client went live: the tape serves no more calls (``live_calls`` counts the
        # calls the replay signalled; the fork's trace holds every live one)
        replay.is_live = True
        return await reg.live_handler(replay, provider, body, request)

    methods = ["GET", "POST"]
    path = "/v1/replays/{rid}/live/{provider}/{rest:path}"
    return [Route(path, live, methods=methods)]
