"""``regista.engine``, the one module the TUI imports engine code from: re-exports only,
every name resolves, and importing it loads no UI."""

from __future__ import annotations

import ast
from pathlib import Path

from fresh import fresh_python

import regista.engine

_SOURCE = Path(regista.engine.__file__).read_text(encoding="utf-8")


def test_every_name_resolves() -> None:
    for name in regista.engine.__all__:
        assert getattr(regista.engine, name) is not None, name


def test_it_holds_re_exports_only() -> None:
    tree = ast.parse(_SOURCE)
    kinds = {type(node).__name__ for node in tree.body}
    assert kinds <= {"Expr", "ImportFrom", "Import", "Assign"}, kinds


def test_importing_it_loads_no_ui() -> None:
    loaded = fresh_python(
        "import sys, regista.engine; print(sorted(m for m in ('textual', 'rich') "
        "if m in sys.modules))"
    )
    assert loaded.strip() == "[]"
