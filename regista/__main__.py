"""``python -m regista``."""

from regista.cli.main import run

run()
