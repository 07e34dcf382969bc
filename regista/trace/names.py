"""The trace's schema version and event type names, importable without the event models.

``regista.trace.events`` re-exports them; code that only tells events apart by their type
(a scan of line heads, a first screen drawn before the models load) imports them from here.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CONTEXT_COMPACTION",
    "ERROR",
    "LLM_REQUEST",
    "LLM_RESPONSE",
    "PERMISSION_DECISION",
    "SCHEMA_VERSION",
    "SESSION_END",
    "SESSION_START",
    "TOOL_CALL",
    "TOOL_RESULT",
    "USAGE_COUNTS",
]

#: The trace schema this regista writes (and the newest it reads). See docs/trace-format.md.
SCHEMA_VERSION = 2

# The ``type`` of each event. Code that tells events apart by their type string uses these;
# each event class's ``Literal`` must say the same (a test checks).
SESSION_START: Final = "session.start"
LLM_REQUEST: Final = "llm.request"
LLM_RESPONSE: Final = "llm.response"
TOOL_CALL: Final = "tool.call"
PERMISSION_DECISION: Final = "permission.decision"
TOOL_RESULT: Final = "tool.result"
CONTEXT_COMPACTION: Final = "context.compaction"
ERROR: Final = "error"
SESSION_END: Final = "session.end"

#: The token counts of a recorded usage (``regista.types.Usage``'s fields), in its order.
USAGE_COUNTS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
