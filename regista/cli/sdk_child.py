"""``regista record|replay|fork|rewind … -- CMD``: run any agent against regista's server.

The child runs with ``ANTHROPIC_BASE_URL`` and ``OPENAI_BASE_URL`` pointing at a server on
127.0.0.1 (a free port) inside this process: the recording proxy, or a replay of a trace.
Its own API keys are forwarded (live calls) and never written. Where no key is needed (a
replay, or calls that go on to an upstream on this machine, such as a local fake or model
server), a placeholder is set when the child has none, so the SDKs start. The Codex CLI
reads no base URL from the environment: when the command is Codex, regista adds
configuration overrides to its arguments instead (:mod:`regista.cli.codex_child`).
"""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from regista.cli.codex_child import CodexChild, codex_child
from regista.errors import UserError

__all__ = ["fork_child", "record", "replay_child", "upstreams"]

_PLACEHOLDER_KEY = "regista-replay-needs-no-key"
#: The SDKs' key variables, by provider (the placeholder is set only where none is).
_KEYS = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "openai": ("OPENAI_API_KEY",),
}


def is_local(url: str) -> bool:
    """Whether ``url`` names this machine (localhost or a loopback address)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _placeholders(env: dict[str, str], keys: list[str]) -> None:
    """Set the placeholder key in ``env`` for each of ``keys`` the child has no value for."""
    for key in keys:
        if not os.environ.get(key) and not env.get(key):
            env[key] = _PLACEHOLDER_KEY


def _local_keys(ups: dict[str, str]) -> list[str]:
    """The key variables of the providers whose upstream is on this machine, when the child
    has none of that provider's (a local fake or model server takes any key)."""
    return [
        names[0]
        for provider, names in _KEYS.items()
        if is_local(ups.get(provider, "")) and not any(os.environ.get(n) for n in names)
    ]


def upstreams() -> dict[str, str]:
    """The upstreams named by ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``, if set."""
    ups = {}
    if os.environ.get("ANTHROPIC_BASE_URL"):
        ups["anthropic"] = os.environ["ANTHROPIC_BASE_URL"]
    if os.environ.get("OPENAI_BASE_URL"):
        ups["openai"] = os.environ["OPENAI_BASE_URL"]
    return ups


def _codex_upstreams(codex: CodexChild | None) -> dict[str, str]:
    """The upstreams, with Codex's provider as the OpenAI one when the command is Codex."""
    ups = upstreams()
    if codex is not None:
        named = ups.get("openai")
        if named and named.rstrip("/") != codex.upstream.rstrip("/"):
            print(
                f"regista: Codex's provider {codex.provider!r} sends its calls to "
                f"{codex.upstream}; OpenAI calls go there too, not to OPENAI_BASE_URL ({named})",
                file=sys.stderr,
            )
        ups["openai"] = codex.upstream
    return ups


#: Told the child's process once it has started (e.g. to stop it from another thread).
OnStart = Callable[["subprocess.Popen[bytes]"], None]


def _run(
    cmd: list[str],
    env_updates: dict[str, str],
    output: IO[Any] | None = None,
    on_start: OnStart | None = None,
) -> int:
    """Run ``cmd``; ``output``: where its stdout and stderr go (and its stdin is empty),
    instead of this process's own (a TUI keeps its terminal)."""
    if not cmd:
        raise UserError("give the command to run after --, e.g. -- python agent.py")
    env = {**os.environ, **env_updates}
    quiet: dict[str, Any] = {}
    if output is not None:
        quiet = {"stdin": subprocess.DEVNULL, "stdout": output, "stderr": subprocess.STDOUT}
    try:
        proc = subprocess.Popen(cmd, env=env, **quiet)
    except FileNotFoundError:
        raise UserError(f"cannot run {cmd[0]!r}: no such program") from None
    except PermissionError:
        raise UserError(f"cannot run {cmd[0]!r}: permission denied") from None
    with proc:
        if on_start is not None:
            on_start(proc)
        try:
            code = proc.wait()
        except BaseException:  # as subprocess.run: the child does not outlive us
            proc.kill()
            raise
    return 128 - code if code < 0 else code  # killed by signal N: 128 + N, as a shell says


def record(cmd: list[str], trace_dir: str | Path) -> tuple[int, list[Path]]:
    """Run ``cmd`` through the recording proxy; its exit code and the traces written."""
    from regista.server import BackgroundServer, create_app
    from regista.server.record import book

    codex = codex_child(cmd)
    ups = _codex_upstreams(codex)
    app = create_app(trace_dir, upstreams=ups)
    with BackgroundServer(app) as server:
        env = {
            "ANTHROPIC_BASE_URL": f"{server.url}/v1/record/anthropic",
            "OPENAI_BASE_URL": f"{server.url}/v1/record/openai",
        }
        if codex is not None:
            cmd = codex.command(cmd, env["OPENAI_BASE_URL"], replay=False)
            env.update(codex.env)
        _placeholders(env, _local_keys(ups))
        try:
            code = _run(cmd, env)
        finally:
            sessions = book(app.state.ctx)
            sessions.close()
    return code, sessions.paths


def replay_child(
    trace_path: str | Path,
    cmd: list[str],
    *,
    mode: str | None = None,
    answers: dict[int, Any] | None = None,
    tool_results: dict[int, Any] | None = None,
    tool_errors: set[int] | None = None,
    live_after: int | None = None,
    loose_after_edits: bool = False,
    trace_dir: str | Path = ".regista/traces",
    masks: Any = None,
    output: IO[Any] | None = None,
    on_start: OnStart | None = None,
    model: str | None = None,
) -> tuple[int, Any, list[Path]]:
    """Serve ``trace_path`` to ``cmd``; a fork or rewind goes live through the proxy.

    ``masks`` (a :class:`~regista.diff.masks.MaskSet`) are the volatile spans a strict match
    ignores; default: the built-in set and ``masks.toml`` beside the trace. ``output`` and
    ``on_start``: see :func:`_run`. ``model``: the model every live call of a fork asks
    for, whatever the program names (the recorded prefix is served as it was).

    Returns:
        The child's exit code, the replay (its counts and first divergence), and the fork's
        trace paths (none for a plain replay).
    """
    from regista.diff.masks import mask_set
    from regista.errors import RegistaError
    from regista.server import BackgroundServer, HttpError, create_app
    from regista.server.replays import registry
    from regista.server.sdk_replay import SdkReplay, SdkReplayMode, Spec
    from regista.trace.reader import Trace

    trace = Trace.load(trace_path)
    if masks is None:
        masks = mask_set(beside=Path(trace_path).parent)
    is_fork = bool(answers or tool_results) or live_after is not None
    if model is not None and (not is_fork or loose_after_edits):
        raise UserError("another model needs a live half: a fork that goes live (not --loose)")
    spec = Spec(
        run=trace.session_id,
        mode=SdkReplayMode.parse(mode) if mode and not is_fork else SdkReplayMode.STRICT,
        mode_given=bool(mode) and not is_fork,  # else the run decides (imported: loose)
        answers=dict(answers or {}),
        tool_results=dict(tool_results or {}),
        tool_errors=set(tool_errors or ()),
        live_after=live_after,
        live="proxy" if is_fork and not loose_after_edits else None,
        model=model,
    )
    codex = codex_child(cmd)
    ups = _codex_upstreams(codex)
    app = create_app(trace_dir, upstreams=ups)
    try:
        replay = SdkReplay(trace, spec, ttl=365 * 86400.0, masks=masks)
    except HttpError as exc:
        raise UserError(exc.message) from None
    except RegistaError:
        raise
    if loose_after_edits:
        replay.live_from = None
    if is_fork:
        replay.book = replay.fork_book(trace_dir)
    registry(app.state.ctx).add(replay)
    env = {}
    with BackgroundServer(app) as server:
        base = f"{server.url}/v1/replays/{replay.id}"
        env["ANTHROPIC_BASE_URL"] = f"{base}/anthropic"
        env["OPENAI_BASE_URL"] = f"{base}/openai/v1"
        keys = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"]
        if codex is not None:
            cmd = codex.command(cmd, env["OPENAI_BASE_URL"], replay=True)
            env.update(codex.env)
            keys += [codex.key_env] if codex.key_env else []
        if not is_fork or loose_after_edits:  # no call leaves this machine
            _placeholders(env, keys)
        else:
            _placeholders(env, _local_keys(ups))
        try:
            code = _run(cmd, env, output, on_start)
        finally:
            if replay.book is not None:
                replay.book.close()
    return code, replay, replay.book.paths if replay.book is not None else []


def fork_child(
    trace_path: str | Path,
    cmd: list[str],
    edits: list[tuple[int, Any]],
    live_after: int | None,
    *,
    loose: bool = False,
    trace_dir: str | Path = ".regista/traces",
    output: IO[Any] | None = None,
    on_start: OnStart | None = None,
    model: str | None = None,
) -> tuple[int, Any, list[Path]]:
    """``regista fork|rewind TRACE … -- CMD`` (and the TUI's fork of a recorded program):
    the prefix from the tape, the edits (``(step, ToolResultEdit | ModelAnswerEdit)``),
    then live through the proxy after step ``live_after`` (a rewind to step 0: ``-1``),
    each live call sent with ``model`` in place of the program's when it is given.

    Returns:
        As :func:`replay_child`.
    """
    from regista.fork import ModelAnswerEdit

    answers = {n: e for n, e in edits if isinstance(e, ModelAnswerEdit)}
    tool_results = {n: e.content for n, e in edits if not isinstance(e, ModelAnswerEdit)}
    tool_errors = {n for n, e in edits if not isinstance(e, ModelAnswerEdit) and e.is_error}
    if live_after is not None and live_after < 0:
        live_after = -1
    return replay_child(
        trace_path,
        cmd,
        answers=answers,
        tool_results=tool_results,
        tool_errors=tool_errors,
        live_after=live_after,
        loose_after_edits=loose,
        trace_dir=trace_dir,
        output=output,
        on_start=on_start,
        model=model,
    )
