"""Fixtures for the server tests.

- ``recording``: a plain Anthropic SDK agent (``sdk_agents.anthropic_agent``) recorded once
  per test module through ``/v1/record/anthropic``, against a fake that answers with
  ``sdk_agents.weather_answer`` (one tool call, then the tool's result said back).
- ``recorded``: that recording, copied alone into a store of the test's own.

A module that records something else defines its own ``recording`` / ``recorded``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import anthropic
import pytest
from fakes.anthropic_server import FakeAnthropicServer
from sdk_agents import anthropic_agent, regista_server, weather_answer


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("recording")
    with FakeAnthropicServer() as fake, regista_server(store, anthropic=fake.url) as server:
        fake.answer_with(weather_answer)
        client = anthropic.Anthropic(api_key="k", base_url=f"{server.url}/v1/record/anthropic")
        assert anthropic_agent(client) == "Tool: sunny in Paris"
        server.record_done()
    (path,) = store.glob("*.jsonl")
    return path


@pytest.fixture
def recorded(recording: Path, tmp_path: Path) -> Path:
    """The recording, alone in a store of this test's own."""
    store = tmp_path / "store"
    store.mkdir()
    path = store / recording.name
    shutil.copyfile(recording, path)
    return path
