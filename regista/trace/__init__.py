"""The trace: regista's durable state. See ``docs/trace-format.md``."""

from regista.trace.names import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION"]
