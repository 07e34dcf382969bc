"""The trace's schema version, event type names and kinds of step, importable without the
event models.

``regista.trace.events`` re-exports them; code that only tells events apart by their type
(a scan of line heads, a first screen drawn before the models load) imports them from here.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "CONTEXT_COMPACTION",
    "ERROR",
    "LLM_REQUEST",
    "LLM_RESPONSE",
    "PERMISSION_DECISION",
    "SCHEMA_VERSION",
    "SESSION_END",
    "SESSION_START",
    "STEP_KINDS",
    "TOOL_CALL",
    "TOOL_RESULT",
    "USAGE_COUNTS",
    "StepKind",
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

#: What a step is: one model call, one tool call or one compaction (see docs/trace-format.md).
StepKind = Literal["model", "tool", "compaction"]

#: The one table of step kinds: the event that opens a step, and the kind of step it opens.
#: A step begins with its opener; an event of a step number that no opener began belongs to
#: no step. Every reader groups steps by this table (a reader that meets types as bytes
#: derives its keys from it).
STEP_KINDS: Final[dict[str, StepKind]] = {
    LLM_REQUEST: "model",
    TOOL_CALL: "tool",
    CONTEXT_COMPACTION: "compaction",
}

#: The token counts of a recorded usage (``regista.types.Usage``'s fields), in its order.
USAGE_COUNTS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
