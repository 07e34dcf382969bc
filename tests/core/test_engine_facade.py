"""``regista.engine``, the one module the TUI imports engine code from besides the public API
(as harlequin's UI talks to its adapters through one interface): re-exports only, every name
resolves, importing it loads no UI; and the TUI imports no other module of the engine's and
never sets the engine's state."""

from __future__ import annotations

import ast
from pathlib import Path

from fresh import fresh_python

import regista
import regista.engine

_SOURCE = Path(regista.engine.__file__).read_text(encoding="utf-8")
TUI = Path(__file__).parents[2] / "regista_tui"
ALLOWED = {"regista", "regista.engine"}


def test_every_name_resolves() -> None:
    for name in regista.engine.__all__:
        assert getattr(regista.engine, name) is not None, name
    assert set(regista.engine._LAZY) == set(regista.engine.__all__)


def test_it_holds_re_exports_only() -> None:
    """Imports, the table of names and the module ``__getattr__`` that imports a name on
    first use (with ``__dir__``): no code of its own."""
    tree = ast.parse(_SOURCE)
    kinds = {type(node).__name__ for node in tree.body}
    assert kinds <= {"Expr", "ImportFrom", "Import", "Assign", "AnnAssign", "If", "FunctionDef"}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            assert node.name in {"__getattr__", "__dir__"}, node.name
        if isinstance(node, ast.If):  # only the names for the type checker
            assert ast.unparse(node.test) == "TYPE_CHECKING"
            assert all(isinstance(n, ast.ImportFrom) for n in node.body)


def test_importing_it_loads_no_ui() -> None:
    loaded = fresh_python(
        "import sys, regista.engine; print(sorted(m for m in ('textual', 'rich') "
        "if m in sys.modules))"
    )
    assert loaded.strip() == "[]"


def _tui_files() -> list[Path]:
    files = sorted(TUI.rglob("*.py"))
    assert len(files) > 20
    return files


def _engine_imports(tree: ast.AST) -> list[tuple[int, str, list[str]]]:
    """Every import of an engine module: (line, module, names)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            root = node.module.split(".")[0]
            if root == "regista":
                found.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "regista":
                    found.append((node.lineno, alias.name, []))
        elif isinstance(node, ast.Call) and _name(node.func) in {
            "importlib.import_module",
            "import_module",
            "__import__",
        }:
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and str(arg.value).startswith("regista"):
                found.append((node.lineno, str(arg.value), []))
    return found


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return ""


def test_the_tui_imports_only_the_public_api_and_the_facade() -> None:
    bad = []
    for path in _tui_files():
        for line, module, names in _engine_imports(ast.parse(path.read_text())):
            where = f"{path.relative_to(TUI.parent)}:{line}"
            if module not in ALLOWED:
                bad.append(f"{where}: imports {module}")
            elif module == "regista" and not set(names) <= {*regista.__all__, "engine"}:
                bad.append(f"{where}: imports {sorted(set(names) - set(regista.__all__))}")
            elif module == "regista.engine":
                private = [n for n in names if n.startswith("_") or n not in regista.engine.__all__]
                if private:
                    bad.append(f"{where}: imports {private} from regista.engine")
    assert not bad, "\n".join(bad)


def _state_sets(tree: ast.AST) -> list[tuple[int, str]]:
    """Every place that sets, deletes or ``setattr``s something that came from the engine."""
    engine_names = {"regista"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "regista":
            engine_names |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            engine_names |= {a.asname for a in node.names if a.asname and a.name[:8] == "regista."}
    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif (
            isinstance(node, ast.Call)
            and _name(node.func) in {"setattr", "delattr"}
            and node.args
            and _name(node.args[0]).split(".")[0] in engine_names
        ):
            found.append((node.lineno, f"{_name(node.func)}({_name(node.args[0])}, …)"))
        for target in targets:
            if isinstance(target, ast.Attribute | ast.Subscript):
                base = _name(target.value) if isinstance(target, ast.Subscript) else _name(target)
                if base.split(".")[0] in engine_names:
                    found.append((node.lineno, f"sets {base}"))
    return found


def test_the_tui_sets_no_engine_state() -> None:
    """No ``regista.x.y = …``, ``engine_name.attr = …``, ``setattr`` or ``del`` on what
    comes from the engine: a setting the debugger makes goes through a facade function."""
    bad = [
        f"{path.relative_to(TUI.parent)}:{line}: {what}"
        for path in _tui_files()
        for line, what in _state_sets(ast.parse(path.read_text()))
    ]
    assert not bad, "\n".join(bad)


def test_a_check_finds_what_it_forbids() -> None:
    """The checks above see each kind of breach (so an empty finding means something)."""
    code = (
        "from regista.trace.index import TraceIndex\n"
        "import regista.store.runs\n"
        "from regista import _gc\n"
        "from regista.engine import _LAZY\n"
        "regista.samples.demo_delay = 1\n"
        "setattr(TraceIndex, 'x', 1)\n"
        "import regista.engine as engine\n"
        "engine.TraceIndex = None\n"
    )
    tree = ast.parse(code)
    found = [module for _, module, _ in _engine_imports(tree)]
    assert found == [
        "regista.trace.index",
        "regista.store.runs",
        "regista",
        "regista.engine",
        "regista.engine",
    ]
    assert "_gc" not in regista.__all__ and "_LAZY" not in regista.engine.__all__
    assert sorted(_state_sets(tree)) == [
        (5, "sets regista.samples.demo_delay"),
        (6, "setattr(TraceIndex, …)"),
        (8, "sets engine.TraceIndex"),
    ]
