"""An agent program on the Claude Agent SDK: ``python claude_agent_sdk_main.py TASK``.

It runs the task with the SDK's bundled Claude Code (tools allowed without asking), prints
each text block the model answers and the run's result, and exits 0 when the run ended
well, 1 when it ended in an error.
"""

from __future__ import annotations

import asyncio
import sys

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ResultMessage,
    TextBlock,
    query,
)


async def main(task: str) -> int:
    options = ClaudeAgentOptions(permission_mode="bypassPermissions", max_turns=8)
    code = 1
    async for message in query(prompt=task, options=options):
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, TextBlock):
                    print(block.text, flush=True)
        elif isinstance(message, ResultMessage):
            print(f"RESULT: {message.subtype} {message.result}", flush=True)
            code = 1 if message.is_error else 0
    return code


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
