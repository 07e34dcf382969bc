"""A replay handed to a person: what a console's "Replay" tab gives.

:class:`ReplayDesk` keeps a regista server running in this process (one per folder of
runs, on a free port of 127.0.0.1, started on first use) and starts strict replays of runs
on it. Each :class:`ReplayHandoff` says what to paste into a terminal: the two environment
lines that point the SDKs at the replay, and a short Python and TypeScript snippet. The
replays live as long as the desk (the TUI that opened it), at most the server's TTL.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regista.errors import UserError

__all__ = ["REPLAY_KEY", "ReplayDesk", "ReplayHandoff"]

#: What the snippets give the SDKs as their key: a replay needs none, but they want one.
REPLAY_KEY = "regista-replay-needs-no-key"


@dataclass(frozen=True)
class ReplayHandoff:
    """A replay started for a person to point an agent at."""

    #: The replay's id on the server.
    id: str
    #: The recorded run (its session id).
    run: str
    #: The server that serves it.
    server: str
    anthropic_base_url: str
    openai_base_url: str
    #: ``strict`` or ``loose`` (an imported run replays loose).
    mode: str

    def env_lines(self) -> list[str]:
        """The two lines that point the SDKs at the replay, for a shell."""
        return [
            f"export ANTHROPIC_BASE_URL={self.anthropic_base_url}",
            f"export OPENAI_BASE_URL={self.openai_base_url}",
        ]

    def python_snippet(self) -> str:
        """The SDK clients made for the replay, in Python."""
        return "\n".join(
            [
                "import anthropic, openai",
                "",
                "claude = anthropic.Anthropic(",
                f'    base_url="{self.anthropic_base_url}",',
                f'    api_key="{REPLAY_KEY}",',
                ")",
                "gpt = openai.OpenAI(",
                f'    base_url="{self.openai_base_url}",',
                f'    api_key="{REPLAY_KEY}",',
                ")",
            ]
        )

    def typescript_snippet(self) -> str:
        """The SDK clients made for the replay, in TypeScript."""
        return "\n".join(
            [
                'import Anthropic from "@anthropic-ai/sdk";',
                'import OpenAI from "openai";',
                "",
                "const claude = new Anthropic({",
                f'  baseURL: "{self.anthropic_base_url}",',
                f'  apiKey: "{REPLAY_KEY}",',
                "});",
                "const gpt = new OpenAI({",
                f'  baseURL: "{self.openai_base_url}",',
                f'  apiKey: "{REPLAY_KEY}",',
                "});",
            ]
        )


class ReplayDesk:
    """Regista servers in this process, one per folder of runs, holding replays to paste."""

    def __init__(self) -> None:
        self._servers: dict[Path, Any] = {}
        self._lock = threading.Lock()

    def _server(self, folder: Path) -> Any:
        from regista.server import BackgroundServer, create_app

        with self._lock:
            server = self._servers.get(folder)
            if server is None:
                server = BackgroundServer(create_app(folder)).__enter__()
                self._servers[folder] = server
            return server

    def start(self, run_path: str | Path) -> ReplayHandoff:
        """Start a replay of the run at ``run_path`` (strict; an imported run: loose).

        Raises:
            UserError: The run cannot be replayed (unreadable, or not a trace).
        """
        from regista.server.replays import registry
        from regista.wire.errors import HttpError

        path = Path(run_path).resolve()
        server = self._server(path.parent)
        try:
            replay = registry(server.app.state.ctx).create({"run": path.name})
        except HttpError as exc:
            raise UserError(exc.message) from None
        base = f"{server.url}/v1/replays/{replay.id}"
        return ReplayHandoff(
            id=replay.id,
            run=replay.trace.session_id,
            server=server.url,
            anthropic_base_url=f"{base}/anthropic",
            openai_base_url=f"{base}/openai/v1",
            mode=replay.spec.mode.value,
        )

    def close(self) -> None:
        """Stop every server (their replays go with them)."""
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
        for server in servers:
            server.__exit__(None, None, None)
