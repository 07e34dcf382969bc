"""One vocabulary: the CLI, the TUI and the share page say kinds and costs the same way."""

from __future__ import annotations

from regista.vocab import (
    COST_UNKNOWN,
    KIND_COLOURS,
    KIND_MARKS,
    KINDS,
    LABELS,
    cost_amount,
    cost_text,
)


def test_an_unknown_cost_is_never_a_silent_zero() -> None:
    assert cost_text(None) == COST_UNKNOWN == "cost unknown"
    assert cost_amount(None) == "unknown"
    assert cost_text(0.0) == cost_amount(0.0) == "$0.0000"
    assert cost_text(0.01234) == "$0.0123"


def test_every_kind_has_one_label_colour_and_mark_used_everywhere() -> None:
    from regista.cli.cmd_diff import STYLES
    from regista_tui.widgets.diff.pair_list import KIND_STYLE

    assert set(LABELS) == set(KIND_COLOURS) == set(KIND_MARKS) == set(KINDS)
    assert STYLES is KIND_COLOURS
    for kind in KINDS:
        assert KIND_STYLE[kind].split()[-1] == KIND_COLOURS[kind]
    assert KIND_COLOURS["delete"] == "magenta" and KIND_COLOURS["changed_decision"] == "red"
