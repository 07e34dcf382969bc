"""The sweep's public names, and the TUI's one way into the engine."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import regista.engine
import regista.sweep

ROOT = Path(__file__).resolve().parents[2]


def test_the_sweep_package_names() -> None:
    assert regista.sweep.__all__ == [
        "CANCEL_FILE",
        "Fork",
        "Sweep",
        "SweepRow",
        "SweepRunner",
        "Variant",
        "load_sweep",
        "parse_variants_file",
        "plan_sweep",
        "sweep_rows",
        "table_json",
        "table_text",
        "variant_of_flag",
        "write_junit",
    ]


def test_the_engine_facade_holds_the_sweeps_names() -> None:
    names = {"load_sweep", "sweep_rows", "sweep_masks", "table_cells", "align_many"}
    assert names <= set(regista.engine.__all__)


def test_the_engine_facade_loads_no_ui() -> None:
    code = (
        "import sys, regista.engine as e\n"
        "[getattr(e, n) for n in e.__all__]\n"
        "assert 'textual' not in sys.modules and 'rich' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_the_sweep_view_imports_the_engine_only_through_the_facade() -> None:
    source = (ROOT / "regista_tui" / "screens" / "sweep.py").read_text(encoding="utf-8")
    engine_imports = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("regista"):
            if not node.module.startswith("regista_tui"):
                engine_imports.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            engine_imports += [(a.name, []) for a in node.names if a.name.startswith("regista.")]
    assert engine_imports == [("regista", ["engine"])]
