"""``regista serve [--store DIR] [--host 127.0.0.1] [--port 8787] [--token …]``."""

from __future__ import annotations

import argparse
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path

from regista.cli.cmd_masks import add_mask_options, masks_from_args
from regista.defaults import DEFAULT_TRACE_DIR
from regista.errors import UserError

#: Mirror ``regista.server.context``'s defaults (not imported: it loads Starlette).
DEFAULT_SESSION_IDLE = 300.0
DEFAULT_REPLAY_TTL = 3600.0

DEFAULT_STORE = str(DEFAULT_TRACE_DIR)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the traces folder over HTTP (SDK replays, record proxy, runs, diff)",
        description="Run regista's HTTP server over a folder of traces. It binds 127.0.0.1 "
        "unless told otherwise; any other address needs a token, which every request must "
        "then carry (Authorization: Bearer TOKEN, or as the SDK's API key). The record "
        "proxy and live forks forward to ANTHROPIC_BASE_URL / OPENAI_BASE_URL when set "
        "(default: the public APIs).",
    )
    p.add_argument(
        "--store", default=DEFAULT_STORE, help=f"traces folder (default {DEFAULT_STORE})"
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8787, help="port (default 8787; 0: any free port)")
    p.add_argument(
        "--until-stdin-closes",
        action="store_true",
        help="stop when standard input closes: for a program that starts the server as its "
        "child (the TypeScript client's tape tests), so it never outlives that program",
    )
    p.add_argument(
        "--token",
        default=os.environ.get("REGISTA_TOKEN"),
        help="a secret every request must carry (default: $REGISTA_TOKEN)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a name requests may give as their Host besides the address the server is "
        "reached on (a name of this machine, a proxy's); repeat for more; '*': any",
    )
    p.add_argument(
        "--cors",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a web page origin (https://app.example) allowed to call the server from a "
        "browser; repeat for more (default: none, every cross-origin request is refused)",
    )
    p.add_argument(
        "--session-idle",
        type=float,
        default=DEFAULT_SESSION_IDLE,
        metavar="SECONDS",
        help="end a recorded session (session.end) once no call has continued it for this "
        f"long; 0: only when the server stops (default {DEFAULT_SESSION_IDLE:g})",
    )
    p.add_argument(
        "--replay-ttl",
        type=float,
        default=DEFAULT_REPLAY_TTL,
        metavar="SECONDS",
        help="how long a replay lives in memory unless its POST sets ttl_seconds "
        f"(default {DEFAULT_REPLAY_TTL:g})",
    )
    add_mask_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from regista.server import check_bind
    from regista.server.runner import listening_socket

    if not args.session_idle >= 0:
        raise UserError(f"--session-idle must be 0 or more seconds, not {args.session_idle:g}")
    if not 0 < args.replay_ttl <= 86400:
        raise UserError(f"--replay-ttl must be 1 second to a day, not {args.replay_ttl:g}")
    if not 0 <= args.port < 65536:
        raise UserError(f"--port must be between 0 (any free port) and 65535, not {args.port}")
    check_bind(args.host, args.token)
    # the port first: a busy one is said before the store folder is made
    sock = listening_socket(args.host, args.port)
    try:
        try:
            sock.listen()
        except OSError as exc:
            where = f"{args.host}:{args.port}"
            raise UserError(f"cannot listen on {where}: {exc.strerror or exc}") from None
        return _serve(args, sock)
    finally:
        sock.close()


def _serve(args: argparse.Namespace, sock: socket.socket) -> int:
    from regista.cli.sdk_child import upstreams
    from regista.server import create_app, serve
    from regista.server.lifecycle import SessionReaper

    created = _ready_store(Path(args.store))
    masks = masks_from_args(args, Path(args.store))
    app = create_app(
        args.store,
        token=args.token,
        upstreams=upstreams(),
        session_idle=args.session_idle or None,
        replay_ttl=args.replay_ttl,
        masks=masks,
        allow_hosts=args.allow_host,
        cors=args.cors,
    )
    host = f"[{args.host}]" if ":" in args.host and not args.host.startswith("[") else args.host
    made = " (a new, empty folder)" if created else ""
    port = sock.getsockname()[1]  # --port 0: the free port the system chose
    print(f"regista: serving {args.store}{made} on http://{host}:{port}", file=sys.stderr)
    lifeline = _stop_when_stdin_closes if getattr(args, "until_stdin_closes", False) else None
    with SessionReaper(app.state.ctx) as reaper:
        serve(app, args.host, args.port, on_stop=reaper.stop, sock=sock, stopper=lifeline)
    return 0


def _stop_when_stdin_closes(stop: Callable[[], None]) -> None:
    """Call ``stop`` (the server stops as on Ctrl-C: gracefully, fork traces ended) once
    standard input reaches its end: the process that started this one went away."""
    import threading

    def watch() -> None:
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except (OSError, ValueError):
            pass
        stop()

    threading.Thread(target=watch, name="regista-stdin-lifeline", daemon=True).start()


def _ready_store(store: Path) -> bool:
    """Make sure ``store`` is a folder the server can list and write traces in; create it
    when it does not exist (say so: a mistyped path would otherwise serve no runs without
    a word). Returns whether it was created.

    Raises:
        UserError: It is a file, or it cannot be created, listed or written.
    """
    if store.exists() and not store.is_dir():
        raise UserError(f"--store {store}: is a file, not a folder of traces")
    created = not store.exists()
    try:
        store.mkdir(parents=True, exist_ok=True)
        with os.scandir(store) as entries:
            next(entries, None)
    except OSError as exc:
        raise UserError(f"--store {store}: cannot use it ({exc.strerror})") from None
    if not os.access(store, os.W_OK | os.X_OK):
        raise UserError(f"--store {store}: not writable (recorded runs are written there)")
    return created
