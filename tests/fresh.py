"""Code run in a new interpreter: what importing a module loads can only be seen there."""

from __future__ import annotations

import subprocess
import sys


def fresh_python(code: str) -> str:
    """The standard output of ``python -c CODE`` in a new interpreter; fails if it fails."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout
