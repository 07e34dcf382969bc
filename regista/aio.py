"""Small bridges between sync and async code, written once."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

__all__ = ["await_maybe", "run_sync"]

T = TypeVar("T")


async def await_maybe(value: T | Awaitable[T]) -> T:
    """``value``, awaited first if it is awaitable (for callbacks that may be async)."""
    if inspect.isawaitable(value):
        return await value
    return value


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to the end from synchronous code.

    Where an event loop is already running in this thread (a notebook, an async test), the
    coroutine runs on a loop of its own in a helper thread.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
