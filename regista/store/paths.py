"""Where a store's readers may read: inside the folder, symlinks included.

A trace folder is shared (a server's store, an MCP folder, a team's tapes). A symlink or a
``..`` inside it must not make a reader show a file outside it, and every reader must
agree about which files are the store's: the server, ``regista runs``, recall, MCP and the
TUI's run list all go through :func:`store_path` (one by one) or :func:`inside` (while
walking the folder).
"""

from __future__ import annotations

from pathlib import Path

from regista.errors import UserError

__all__ = ["OutsideStore", "inside", "store_path"]


class OutsideStore(UserError):
    """A path that leaves the traces folder (by ``..``, an absolute path or a symlink)."""


def store_path(folder: str | Path, path: str | Path) -> Path:
    """``path`` (relative to ``folder``, or absolute) with every symlink resolved.

    Raises:
        OutsideStore: The resolved path is not inside ``folder`` (itself resolved).
    """
    root = Path(folder).resolve()
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        raise OutsideStore(f"{path}: cannot be resolved inside {folder}") from None
    if not resolved.is_relative_to(root):
        raise OutsideStore(f"{path}: not in the traces folder {folder}")
    return resolved


def inside(folder: str | Path, path: str | Path) -> bool:
    """Whether ``path`` is in ``folder`` once resolved (:func:`store_path` without the error).

    A walk calls it only for entries that are symlinks (``os.walk`` and ``os.scandir`` do
    not go through a symlinked folder, so only a linked file can leave).
    """
    try:
        store_path(folder, path)
    except OutsideStore:
        return False
    return True
