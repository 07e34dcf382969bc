"""The regista-tui application: a time-travel debugger for agent traces."""

from __future__ import annotations

import gc
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from regista.engine import DEFAULT_TRACE_DIR, TraceIndex

__all__ = ["RegistaApp"]


def _collect_garbage_again() -> None:
    """The first screen is up: the collector (paused by ``main`` while starting) resumes,
    leaving what start-up built, which lives as long as the app, out of its scans."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


class RegistaApp(App[None]):
    """Browse one trace, or compare two.

    Args:
        index: The (already opened) trace to browse, for one trace.
        compare: Two trace paths to compare side by side instead.
        agent: The agent for a fork's live half: ``module:attr`` (an ``Agent`` or a
            factory), or an ``Agent`` object; default: the trace's ``agent_ref``.
        trace_dir: Where forks write their traces.
        notice: Shown in the header (e.g. a dropped half-written line).
        settle_s: How long the step view waits for a scrubbing cursor to settle.
        runs: A ``RunList`` to show as the run list instead (``regista-tui DIR``).
        runs_folder: The folder the run list is of (for its header).
        command: The program a fork of a trace with no agent runs (``regista-tui TRACE
            -- CMD``), as ``regista fork TRACE … -- CMD`` does.
        sweep: A sweep file (``regista sweep``) to show in the N-way view instead.
    """

    CSS_PATH = "app.tcss"
    TITLE = "regista"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+p",
            "command_palette",
            "Commands",
            id="app.commands",
            show=False,
            tooltip="The command palette: every action of this screen",
        ),
    ]

    def __init__(
        self,
        index: TraceIndex | None = None,
        *,
        compare: tuple[Path, Path] | None = None,
        agent: Any = None,
        trace_dir: str | Path = DEFAULT_TRACE_DIR,
        notice: str = "",
        settle_s: float = 0.05,
        runs: Any = None,
        runs_folder: str = "",
        command: list[str] | None = None,
        sweep: Path | None = None,
    ) -> None:
        super().__init__()
        #: The step view waits this long for a moving cursor to settle (0: never waits).
        self.settle_s = settle_s
        self.index = index
        self.compare = compare
        self.agent = agent
        #: The ``--agent`` reference, when the agent was given as one.
        self.agent_ref = agent if isinstance(agent, str) else None
        self.trace_dir = Path(trace_dir)
        self.notice = notice
        #: A ``RunList`` to open the run list screen on (``regista-tui DIR``).
        self.runs = runs
        self.runs_folder = runs_folder
        self.command = command
        #: A sweep file to open the N-way view of (``regista-tui SWEEP``).
        self.sweep = sweep

    def on_mount(self) -> None:
        self.call_after_refresh(_collect_garbage_again)
        if self.sweep is not None:
            from regista_tui.screens.sweep import SweepScreen

            self.push_screen(SweepScreen(self.sweep))
        elif self.compare is not None:
            from regista_tui.screens.compare import CompareScreen

            self.push_screen(CompareScreen(*self.compare))
        elif self.runs is not None:
            from regista_tui.screens.runs import RunsScreen

            self.push_screen(RunsScreen(self.runs, self.runs_folder))
        elif self.index is not None:
            from regista_tui.screens.browser import BrowserScreen

            self.push_screen(BrowserScreen(self.index, notice=self.notice))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The palette lists every described action of the current screen, once: a key
        bound on the screen and on the app (``q`` and ctrl+q quit) is one entry, and an
        entry's help line is its key, not its title again."""
        titles: set[str] = set()
        for command in super().get_system_commands(screen):
            if command.title != "Keys":  # Textual's key panel: the help screen (?) says more
                titles.add(command.title)
                yield command
        seen: set[str] = set()
        for active in screen.active_bindings.values():
            binding = active.binding
            action = binding.action.removeprefix("app.")
            title = binding.tooltip or binding.description
            if not binding.description or action in seen or binding.description in titles:
                continue
            seen.add(action)
            titles.add(title)
            target = active.node
            key = f"[{self.get_key_display(binding)}]"
            help_line = key if title == binding.description else f"{binding.description}  {key}"
            yield SystemCommand(
                title,
                # The help line is markup: "[/]" would be a closing tag and "[N]" a style
                # (textual's escape() leaves upper case alone), so every "[" is escaped.
                help_line.replace("[", r"\["),
                lambda a=binding.action, t=target: self.call_later(t.run_action, a),  # type: ignore[misc]
            )
