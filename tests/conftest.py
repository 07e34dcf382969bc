"""Fixtures for the whole suite.

- Every test runs without Anthropic credentials or endpoints from the environment
  (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``, …), so no test can reach the real API by
  accident, and without the machine's ``OTEL_*`` settings, so none changes what an export
  sends; a test that needs them sets them with ``monkeypatch``.
- ``fake_anthropic``: a fake Messages API on 127.0.0.1 (see
  ``tests/fakes/anthropic_server.py``), started for the test and stopped after it::

      def test_x(fake_anthropic):
          fake_anthropic.script(
              {"content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
              {"content": [{"type": "text", "text": "done"}]},
          )
          provider = AnthropicProvider("claude-sonnet-4-6", api_key="k",
                                       base_url=fake_anthropic.url, max_retries=0)
          ...
          fake_anthropic.requests[0].body      # what the SDK sent (dict)
          fake_anthropic.requests[0].headers   # lower-case names → values

  Errors: ``fake_anthropic.script(FakeError(429, message="slow down"))``; every request:
  ``fake_anthropic.answer_with(lambda body: {...})``.
- ``sample_db``: the sample shop's database in the test's folder, for tests that replay, fork
  or resume the sample agents (``pytestmark = pytest.mark.usefixtures("sample_db")``).

The folders mirror the packages: ``core/`` holds the tests of ``regista``'s top-level modules
(agent, loop, replay, fork, tools, policy, redact, savings, vocab, …) and ``trace/``, ``cli/``,
``diff/``, ``providers/``, ``testing/``, ``samples/``, ``server/``, ``store/``, ``importers/``,
``share/`` and ``tui/`` those of the package of the same name; ``fuzz/`` and ``conformance/``
cut across them. A folder's data and helpers sit beside its tests; fixtures that several of its
files share are in its ``conftest.py``. A folder without ``__init__.py`` (all but
``conformance/``, ``importers/`` and ``fakes/``) is put on ``sys.path`` by pytest, so the file
names of their modules must be unique in the whole of ``tests/``.

Helpers that several folders share live beside this file: ``builders.py`` (small agents that
write traces), ``engine_helpers.py`` (a scripted session with a few tools), ``files.py`` (the
committed traces, and ``found``: a glob that fails when it finds nothing, for every loop or
``parametrize`` over found files), ``show_odd.py`` (traces of odd shapes for ``show``),
``library.py`` (a traces folder with every kind of run), ``fresh.py`` (``python -c`` in a new
interpreter, to see what an import loads), ``client_requests.py``; ``fakes/`` holds the fake
providers.
"""

from __future__ import annotations

import compileall
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conformance.report import (  # the conformance matrix, printed at the end
    pytest_sessionfinish,
    pytest_sessionstart,
    pytest_terminal_summary,
)
from fakes.anthropic_server import FakeAnthropicServer

__all__ = [
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_report_header",
    "pytest_sessionfinish",
    "pytest_sessionstart",
    "pytest_terminal_summary",
    "pytest_xdist_auto_num_workers",
]

# The suite starts hundreds of Python processes (the CLI, agents, frameworks), and each
# would compile regista's modules again where PYTHONDONTWRITEBYTECODE is set, as pytest
# would rewrite every test module again in each worker: cache the bytecode (in the
# __pycache__ folders git ignores) for this run, its children and the next run.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker per CPU this process may use (its affinity and its cgroup's
    quota, not the host's count: a container on a big host would start dozens of workers
    that each import the frameworks), at most 8."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cpus = min(cpus or 1, max(1, int(quota) // int(period)))
    except (OSError, ValueError):
        pass
    return max(1, min(cpus or 1, 8))


#: The slow parts, each a marker (``slow`` is any of them): ``pytest -m "not slow"`` is the
#: fast set, ``-m clients`` the conformance matrix alone. A module is put in a part by
#: what it does, so that a new test file is placed without a list to keep up to date.
_PARTS = {
    "clients": "the real-client conformance matrix (npm CLIs, frameworks): tests/conformance",
    "browser": "headless Chromium (a module that launches it)",
    "subprocess": "starts a process: regista's CLI, an agent program, a pytest run",
    "fuzz": "seeded fuzz runs, long with REGISTA_FUZZ_ITERATIONS (a fuzz module)",
    "tui": "drives the TUI (an app's run_test with Pilot, or its snapshot)",
}
_PART_OF: dict[Path, list[str]] = {}
#: What a module that starts processes says: a program run with this Python (an agent
#: under ``regista record -- …``), a subprocess, a pytest run of its own, or ``python -c``
#: in a new interpreter (tests/fresh.py).
_STARTS_A_PROCESS = (
    "import subprocess",
    "create_subprocess_exec",
    "sys.executable",
    "runpytest",
    "fresh_python(",
)


def _parts(module: Path) -> list[str]:
    parts = _PART_OF.get(module)
    if parts is None:
        try:
            source = module.read_text(encoding="utf-8")
        except OSError:
            source = ""
        found = {
            "clients": "conformance" in module.parts,
            "browser": ".chromium." in source or "chromium.launch" in source,
            "subprocess": any(sign in source for sign in _STARTS_A_PROCESS),
            "fuzz": "fuzz" in module.parts or "fuzz" in module.name,
            "tui": ".run_test(" in source or "snap_compare" in source,
        }
        parts = _PART_OF[module] = [name for name, hit in found.items() if hit]
    return parts


#: The parts that start real programs (the CLIs and frameworks of the conformance matrix, and
#: regista's own command line and agent programs, each a new Python process): ``pytest`` with
#: no arguments leaves them out, so that the default run takes minutes on two cores; ``--all``
#: runs them too, as CI does, and so does naming files or choosing parts with ``-m``.
_REAL_PROGRAMS = ("clients", "subprocess")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--all",
        action="store_true",
        help="run every part of the suite, the real programs too (what CI runs): "
        + ", ".join(_REAL_PROGRAMS),
    )


def _default_run(config: pytest.Config) -> bool:
    """``pytest`` alone: no ``--all``, no ``-m``, no files or tests named."""
    return (
        not config.getoption("--all")
        and not config.option.markexpr
        and config.args_source == pytest.Config.ArgsSource.TESTPATHS
    )


def pytest_report_header(config: pytest.Config) -> str | None:
    if _default_run(config):
        return (
            "regista: the default run leaves out the tests that start real programs ("
            + ", ".join(_REAL_PROGRAMS)
            + "); pytest --all runs every part (CI does)"
        )
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = _parts(item.path)
        for name in parts:
            item.add_marker(name)
        if parts:
            item.add_marker("slow")
    if _default_run(config):
        kept = [i for i in items if not any(i.get_closest_marker(m) for m in _REAL_PROGRAMS)]
        if len(kept) < len(items):
            left = set(kept)
            config.hook.pytest_deselected(items=[i for i in items if i not in left])
            items[:] = kept


def pytest_configure(config: pytest.Config) -> None:
    for name, what in _PARTS.items():
        config.addinivalue_line("markers", f"{name}: {what}")
    config.addinivalue_line("markers", "slow: any of " + ", ".join(_PARTS))
    if not hasattr(config, "workerinput"):  # once, before the workers import it
        root = Path(__file__).resolve().parents[1]
        for package in ("regista", "regista_tui"):
            compileall.compile_dir(root / package, quiet=1)


_ANTHROPIC_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_ORGANIZATION_ID",
)


@pytest.fixture(autouse=True)
def _no_anthropic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide the real Anthropic credentials and endpoint from every test."""
    for name in _ANTHROPIC_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _no_otel_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's ``OTEL_*`` settings must not change what a test's export sends."""
    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        monkeypatch.delenv(name)


@pytest.fixture
def sample_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sample shop's database, in the test's folder (``REGISTA_SAMPLE_DB``): the sample
    agents made again from a trace's ``agent_ref`` (replay, fork, resume) share it."""
    from regista.samples.refund import DB_ENV

    path = tmp_path / "shop.sqlite"
    monkeypatch.setenv(DB_ENV, str(path))
    return path


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropicServer]:
    """A running :class:`FakeAnthropicServer`; its ``url`` is the SDK's ``base_url``."""
    with FakeAnthropicServer() as server:
        yield server
