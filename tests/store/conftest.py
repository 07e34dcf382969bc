"""Fixtures for the store tests: ``lib``, the small traces folder of :mod:`library`, made
anew in the test's folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from library import Library, build_library


@pytest.fixture
async def lib(tmp_path: Path) -> Library:
    return await build_library(tmp_path / "traces")
