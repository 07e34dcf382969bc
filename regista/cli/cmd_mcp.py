"""``regista mcp [DIR]``: let an agent query its own traces (Model Context Protocol, stdio)."""

from __future__ import annotations

import argparse

from regista.store.runs import DEFAULT_DIR


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve a traces folder to agents over the Model Context Protocol (stdio)",
        description="An MCP server on stdin/stdout with tools to list runs, read a run's "
        "summary and a step, diff two runs and recall runs by their words. The runs are "
        "those regista runs lists for DIR: for .regista/traces, with .regista/imports and "
        "the forks of the sweeps in .regista/sweeps.",
    )
    p.add_argument("dir", nargs="?", help="the traces folder (default .regista/traces)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from regista.store.mcp_server import serve

    serve(args.dir or DEFAULT_DIR)
    return 0
