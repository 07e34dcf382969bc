"""Fixtures for the whole suite.

- Every test runs without Anthropic credentials or endpoints from the environment
  (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``, …), so no test can reach the real API by
  accident; a test that needs them sets them with ``monkeypatch``.
- ``fake_anthropic``: a fake Messages API on 127.0.0.1 (see
  ``tests/fakes/anthropic_server.py``), started for the test and stopped after it::

      def test_x(fake_anthropic):
          fake_anthropic.script(
              {"content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
              {"content": [{"type": "text", "text": "done"}]},
          )
          provider = AnthropicProvider("claude-sonnet-4-6", api_key="k",
                                       base_url=fake_anthropic.url, max_retries=0)
          ...
          fake_anthropic.requests[0].body      # what the SDK sent (dict)
          fake_anthropic.requests[0].headers   # lower-case names → values

  Errors: ``fake_anthropic.script(FakeError(429, message="slow down"))``; every request:
  ``fake_anthropic.answer_with(lambda body: {...})``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conformance.report import (  # the conformance matrix, printed at the end
    pytest_sessionfinish,
    pytest_sessionstart,
    pytest_terminal_summary,
)
from fakes.anthropic_server import FakeAnthropicServer

__all__ = ["pytest_sessionfinish", "pytest_sessionstart", "pytest_terminal_summary"]

_ANTHROPIC_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_ORGANIZATION_ID",
)


@pytest.fixture(autouse=True)
def _no_anthropic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide the real Anthropic credentials and endpoint from every test."""
    for name in _ANTHROPIC_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropicServer]:
    """A running :class:`FakeAnthropicServer`; its ``url`` is the SDK's ``base_url``."""
    with FakeAnthropicServer() as server:
        yield server
