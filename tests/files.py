"""The committed files that tests read, and a glob that cannot come back empty.

A loop or a ``parametrize`` over the files a glob finds passes without checking anything when
the glob finds none (a folder moved, a pattern mistyped). :func:`found` fails instead::

    @pytest.mark.parametrize("path", found(SAMPLES, "*.jsonl"), ids=lambda p: p.stem)
    def test_x(path: Path) -> None: ...

    for path in found(tmp_path, "*.jsonl"):
        ...
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The sample traces committed with the project (``sample_traces/``).
SAMPLES = ROOT / "sample_traces"
HAPPY = SAMPLES / "refund_happy.jsonl"
LOOP = SAMPLES / "refund_search_loop.jsonl"
DENIED = SAMPLES / "refund_denied_compaction.jsonl"

#: Traces as schema version 1 wrote them, kept as they were: every reader migrates them.
V1_TRACES = Path(__file__).resolve().parent / "trace" / "traces_v1"


def search_hit() -> str:
    """The happy run's step 1 result: the order search that finds ORD-1042 (the edit that
    ends the search loop's run when a fork gives it at step 1)."""
    from regista.trace.reader import Trace

    result = Trace.load(HAPPY).steps()[1].result
    assert result is not None and isinstance(result.content, str)
    return result.content


def found(folder: Path, pattern: str = "*.jsonl", *, recursive: bool = False) -> list[Path]:
    """The paths in ``folder`` that match ``pattern``, sorted; fails when there are none."""
    paths = sorted(folder.rglob(pattern) if recursive else folder.glob(pattern))
    assert paths, f"nothing matches {pattern} in {folder}"
    return paths
