"""The real ``mcp`` SDK client as every test drives it: started over stdio, and what a tool
call answered, read the same way (the SDK's versions name the fields either way)."""

from __future__ import annotations

import json
import sys
from typing import Any


def stdio(params: Any) -> Any:
    """``stdio_client(params)`` with the server's stderr sent to the process's own.

    The SDK binds its default (``sys.stderr``) when ``mcp.client.stdio`` is first imported:
    imported under a test's ``capsys`` that is a buffer without a file descriptor, and every
    later start in that worker fails (``io.UnsupportedOperation: fileno``).
    """
    from mcp.client.stdio import stdio_client

    return stdio_client(params, errlog=sys.__stderr__)


def is_error(result: Any) -> bool:
    """Whether the tool call answered an error."""
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


def payload(result: Any) -> Any:
    """The value a tool call answered (it must not be an error)."""
    assert not is_error(result), result.content
    structured = getattr(result, "structuredContent", None) or getattr(
        result, "structured_content", None
    )
    if structured is not None:  # a list comes wrapped as {"result": [...]}
        return structured["result"] if set(structured) == {"result"} else structured
    return json.loads(result.content[0].text)
