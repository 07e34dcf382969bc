"""The wire: what the server and :mod:`regista.client` both speak.

The request and response shapes of the provider APIs (Anthropic Messages, OpenAI Chat
Completions and Responses) and their normalisation (:mod:`~regista.wire.shapes`,
:mod:`~regista.wire.openai_responses`), server-sent events (:mod:`~regista.wire.sse`), a
stream accumulated into one response (:mod:`~regista.wire.accumulate`), the traces written
from observed calls (:mod:`~regista.wire.sessions`) and the errors a body can earn
(:mod:`~regista.wire.errors`). Nothing here imports the server (Starlette) or the client.
"""
