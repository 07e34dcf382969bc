"""What an MCP tool call answered, read the same way by every test that drives the real
``mcp`` SDK client (the SDK's versions name the fields either way)."""

from __future__ import annotations

import json
from typing import Any


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
