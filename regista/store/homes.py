"""Where the tools keep their sessions and where the library lives.

- Claude Code: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude`` (sessions in ``projects/``);
- Codex: ``$CODEX_HOME``, else ``~/.codex`` (``sessions/`` and ``archived_sessions/``);
- the library: ``$REGISTA_LIBRARY``, else ``$XDG_DATA_HOME/regista/library``, else
  ``~/.local/share/regista/library``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "LIBRARY_ENV",
    "Root",
    "claude_home",
    "codex_home",
    "default_library",
    "default_roots",
    "library_or",
]

LIBRARY_ENV = "REGISTA_LIBRARY"


def _home(env: Mapping[str, str] | None = None) -> Path:
    return Path((os.environ if env is None else env).get("HOME") or Path.home())


def default_library() -> Path:
    """``$REGISTA_LIBRARY``, else ``$XDG_DATA_HOME/regista/library``, else
    ``~/.local/share/regista/library``."""
    env = os.environ.get(LIBRARY_ENV)
    if env:
        return Path(env).expanduser()
    data = os.environ.get("XDG_DATA_HOME")
    return (Path(data) if data else _home() / ".local" / "share") / "regista" / "library"


def library_or(folder: str | Path | None, library: bool = False) -> str | Path | None:
    """The folder a ``runs`` / ``recall`` reads: ``folder`` when given; the library with
    ``library``, or when there is no ``.regista/`` folder here and the library exists; else
    ``None`` (the command's own default)."""
    from regista.errors import UserError
    from regista.store.runs import has_default_runs

    if folder is not None:
        if library:
            raise UserError("give a folder or --library, not both")
        return folder
    lib = default_library()
    if library:
        if not lib.is_dir():
            raise UserError(f"{lib}: no library yet; regista watch --once makes it")
        return lib
    if not has_default_runs() and lib.is_dir():
        return lib
    return None


def claude_home(env: Mapping[str, str] | None = None) -> Path:
    """Claude Code's configuration folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``
    (read from ``env``, default this process's environment)."""
    folder = (os.environ if env is None else env).get("CLAUDE_CONFIG_DIR")
    return Path(folder).expanduser() if folder else _home(env) / ".claude"


def codex_home(env: Mapping[str, str] | None = None) -> Path:
    """Codex's home: ``$CODEX_HOME``, else ``~/.codex`` (read from ``env``, default this
    process's environment)."""
    folder = (os.environ if env is None else env).get("CODEX_HOME")
    return Path(folder).expanduser() if folder else _home(env) / ".codex"


@dataclass(frozen=True)
class Root:
    """A folder of one tool's sessions.

    Attributes:
        tool: ``claude-code`` or ``codex``.
        path: The folder (``~/.claude/projects``, ``~/.codex/sessions``, …).
        label: Its name under ``.sources/<tool>/`` (the folder's own name).
    """

    tool: str
    path: Path
    label: str

    @classmethod
    def of(cls, tool: str, path: str | Path) -> Root:
        p = Path(path).expanduser().absolute()
        with contextlib.suppress(OSError):
            p = p.resolve()
        return cls(tool, p, p.name or tool)


def default_roots(claude: Path | None = None, codex: Path | None = None) -> list[Root]:
    """The folders a library watches: Claude Code's projects folder and Codex's sessions (and
    archived sessions) folders, or the folders given."""
    roots = [Root.of("claude-code", claude or claude_home() / "projects")]
    if codex is not None:
        roots.append(Root.of("codex", codex))
    else:
        roots += [Root.of("codex", codex_home() / d) for d in ("sessions", "archived_sessions")]
    return roots
