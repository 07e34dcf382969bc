"""The trace layer is below the importers: it offers a registry of formats that they fill
(``regista.trace.formats``) and never imports them, directly, by name at call time, or
through anything it imports."""

from __future__ import annotations

import ast
from pathlib import Path

from fresh import fresh_python

TRACE = Path(__file__).parents[2] / "regista" / "trace"


def _modules() -> list[str]:
    return sorted(f"regista.trace.{p.stem}" for p in TRACE.glob("*.py") if p.stem != "__init__")


def _mentions_importers(tree: ast.AST) -> list[int]:
    """Lines that import ``regista.importers``, or name it in a string (an import by name)."""

    def named(name: str) -> bool:
        return name.startswith("regista.importers") and " " not in name

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            hits = named(node.module or "") or (
                node.module == "regista" and any(a.name == "importers" for a in node.names)
            )
        elif isinstance(node, ast.Import):
            hits = any(named(a.name) for a in node.names)
        else:
            hits = (
                isinstance(node, ast.Constant) and isinstance(node.value, str) and named(node.value)
            )
        if hits:
            lines.append(node.lineno)
    return lines


def test_no_trace_module_imports_the_importers() -> None:
    files = sorted(TRACE.glob("*.py"))
    assert len(files) > 10
    bad = [
        f"{path.name}:{line}"
        for path in files
        for line in _mentions_importers(ast.parse(path.read_text()))
    ]
    assert not bad, bad
    code = "import regista.importers\nfrom regista import importers as i\nx = 'regista.importers'\n"
    assert _mentions_importers(ast.parse(code)) == [1, 2, 3]


def test_importing_every_trace_module_loads_no_importer() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {_modules()!r}:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.startswith('regista.importers')))\n"
    )
    assert fresh_python(code).strip() == "[]"


def test_reading_a_file_no_format_claims_loads_no_importer(tmp_path: Path) -> None:
    """Opening through the trace layer alone knows regista's own format only (the
    importers join when imported: ``regista.open_run`` and every command import them)."""
    other = tmp_path / "other.jsonl"
    other.write_text('{"type": "user", "sessionId": "x"}\n')
    code = (
        "import sys\n"
        "from regista.errors import TraceError\n"
        "from regista.trace.formats import open_run\n"
        "from regista.trace.reader import Trace\n"
        f"print(open_run({str(other)!r}).format.name)\n"
        "try:\n"
        f"    Trace.load({str(other)!r})\n"
        "except TraceError:\n"
        "    print('refused')\n"
        "print(sorted(m for m in sys.modules if m.startswith('regista.importers')))\n"
        "import regista\n"
        f"print(regista.open_run({str(other)!r}).format.name)\n"
    )
    assert fresh_python(code).split() == ["regista", "refused", "[]", "claude-code"]
