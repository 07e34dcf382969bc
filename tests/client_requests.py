"""Requests shaped as the coding-agent CLIs send them (trimmed), for tests of what a client
varies by itself: the date, its folder, its ids (see ``regista.diff.masks``)."""

from __future__ import annotations

from typing import Any

__all__ = ["claude_code_request", "codex_input"]


def claude_code_request(
    *, date: str = "2026-11-30", cwd: str = "/home/ann/shop", task: str = "fix the bug"
) -> tuple[str, list[dict[str, Any]]]:
    """A system prompt and messages as Claude Code 2.1 sends them (trimmed)."""
    slug = cwd.replace("/", "-")
    system = (
        "x-anthropic-billing-header: cc_version=2.1.197.1c0; cc_entrypoint=sdk-cli;\n\n"
        "You are a Claude agent, built on Anthropic's Claude Agent SDK.\n\n"
        "# Memory\n\nYou have a persistent file-based memory at "
        f"`/root/.claude/projects/{slug}/memory/`. This directory already exists.\n\n"
        "# Environment\nYou have been invoked in the following environment: \n"
        f" - Primary working directory: {cwd}\n"
        " - Is a git repository: false\n - Platform: linux\n - Shell: bash\n"
        " - OS Version: Linux 6.18.44\n"
        " - You are powered by the model named Opus 4.8. The exact model ID is claude-opus-4-8."
    )
    messages = [
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "<system-reminder>\nAs you answer the user's questions, you can use "
                    f"the following context:\n# currentDate\nToday's date is {date}.\n\n"
                    "</system-reminder>\n\n",
                },
                {"type": "text", "text": task, "cache_control": {"type": "ephemeral"}},
            ],
        }
    ]
    return system, messages


def codex_input(*, cwd: str = "/work/a", date: str = "2026-11-30") -> list[Any]:
    """Codex's environment message and task, normalised (item ids are not kept)."""
    env = (
        f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <shell>bash</shell>\n"
        f"  <current_date>{date}</current_date>\n  <timezone>Etc/UTC</timezone>\n"
        f"  <filesystem><workspace_roots><root>{cwd}</root></workspace_roots></filesystem>\n"
        "</environment_context>"
    )
    return [
        {"role": "user", "content": [{"type": "text", "text": env}]},
        {"role": "user", "content": [{"type": "text", "text": "say hello"}]},
    ]
