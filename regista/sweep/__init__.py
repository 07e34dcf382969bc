"""Counterfactual sweeps: K forks of one step at once, side by side.

- :mod:`regista.sweep.variants`: the variants (one edit each) and the ``--variants`` file;
- :mod:`regista.sweep.sweepfile`: the sweep file that links the parent and every fork;
- :mod:`regista.sweep.runner`: runs one ``regista fork`` per variant, ``jobs`` at once;
- :mod:`regista.sweep.table`: the result as a table (text, JSON, JUnit).
"""

from __future__ import annotations

from regista.sweep.runner import CANCEL_FILE, SweepRunner, plan_sweep
from regista.sweep.sweepfile import Fork, Sweep, load_sweep
from regista.sweep.table import SweepRow, sweep_rows, table_json, table_text, write_junit
from regista.sweep.variants import Variant, parse_variants_file, variant_of_flag

__all__ = [
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
