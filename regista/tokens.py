"""A run's tokens, defined once: what every view (``show``, ``runs``, the TUI, share, MCP)
counts and prints.

A model call's usage, as recorded, is read into :class:`Tokens`:

- ``input``: uncached input tokens (Anthropic's ``input_tokens``; for OpenAI, whose
  ``input_tokens`` include the cached ones, the importers store the uncached part);
- ``output``: output tokens, reasoning included;
- ``cache_read``: input read from the prompt cache;
- ``cache_write_5m`` and ``cache_write_1h``: input written to the cache for 5 minutes or an
  hour (``cache_creation.ephemeral_{5m,1h}_input_tokens``; a write without the split is a
  5-minute write, the API's default);
- ``reasoning``: the part of ``output`` spent reasoning, where the provider says.

:func:`token_totals` sums recorded usages; :meth:`Tokens.text` is how a person reads them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from regista.types import Usage

__all__ = ["Tokens", "token_totals", "tokens_of"]


@dataclass(frozen=True, slots=True)
class Tokens:
    """Token counts of one call or of a whole run (see the module docstring)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    reasoning: int = 0

    @property
    def cache_write(self) -> int:
        """Cache writes of both durations (Anthropic's ``cache_creation_input_tokens``)."""
        return self.cache_write_5m + self.cache_write_1h

    @property
    def total(self) -> int:
        """Every token billed: input, output, cache reads and writes (reasoning is part of
        the output)."""
        return self.input + self.output + self.cache_read + self.cache_write

    def __add__(self, other: Tokens) -> Tokens:
        if other is _NONE:  # none counted (a tool step's): a run's sum adds many
            return self
        return Tokens(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write_5m + other.cache_write_5m,
            self.cache_write_1h + other.cache_write_1h,
            self.reasoning + other.reasoning,
        )

    def as_usage(self) -> Usage:
        """The counts as a :class:`~regista.types.Usage` (what ``usage`` fields hold)."""
        from regista.types import Usage

        return Usage(**self.usage_dict())

    def as_dict(self) -> dict[str, int]:
        """The counts for JSON output (``show --json``, ``runs --json``, MCP)."""
        return {
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_write_5m": self.cache_write_5m,
            "cache_write_1h": self.cache_write_1h,
            "reasoning": self.reasoning,
            "total": self.total,
        }

    def usage_dict(self) -> dict[str, Any]:
        """The counts as a recorded usage reads them (Anthropic's shape, with the split of
        cache writes): :func:`tokens_of` reads it back unchanged."""
        usage: dict[str, Any] = {
            "input_tokens": self.input,
            "output_tokens": self.output,
            "cache_creation_input_tokens": self.cache_write,
            "cache_read_input_tokens": self.cache_read,
        }
        if self.cache_write_1h:
            usage["cache_creation"] = {
                "ephemeral_5m_input_tokens": self.cache_write_5m,
                "ephemeral_1h_input_tokens": self.cache_write_1h,
            }
        if self.reasoning:
            usage["reasoning_output_tokens"] = self.reasoning
        return usage

    def text(self, *, brief: bool = False) -> str:
        """``in 180 · out 28,763 · cache read 12,301,544 · cache write 5m 0 / 1h 41,220``,
        with reasoning when there is some; ``brief``: without the cache parts that are 0."""
        parts = [f"in {self.input:,}", f"out {self.output:,}"]
        if self.cache_read or not brief:
            parts.append(f"cache read {self.cache_read:,}")
        if self.cache_write or not brief:
            parts.append(f"cache write 5m {self.cache_write_5m:,} / 1h {self.cache_write_1h:,}")
        if self.reasoning:
            parts.append(f"reasoning {self.reasoning:,}")
        return " · ".join(parts)

    def short(self) -> str:
        """A step's tokens in a table column: ``in/out`` and, when cached, ``+cache``
        (reads and writes), so a column never hides the cache."""
        cached = self.cache_read + self.cache_write
        head = f"{self.input:,}/{self.output:,}"
        return f"{head}+{compact_count(cached)}" if cached else head


def compact_count(n: int) -> str:
    """A count in a narrow column: 9,999, then 12k, then 1.2M."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    return f"{n:,}"


def _count(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0


def tokens_of(raw: Any) -> Tokens:
    """The :class:`Tokens` of one recorded usage (a dict, a :class:`~regista.types.Usage`
    or ``None``; a :class:`Tokens` is its own).

    The four main counts are read as :class:`~regista.types.Usage` reads them (an odd value
    is validated, and refused, as it would be); the split of cache writes and the reasoning
    count are read when they are plain counts, else left out.
    """
    if type(raw) is Tokens:  # read already
        return raw
    if type(raw) is dict and raw and _MORE.isdisjoint(raw):  # a usage as most are recorded
        get = raw.get
        a, b = get("input_tokens", 0), get("output_tokens", 0)
        c, d = get("cache_creation_input_tokens", 0), get("cache_read_input_tokens", 0)
        if type(a) is int and type(b) is int and type(c) is int and type(d) is int:
            return Tokens(a, b, d, c)
    if raw is None or raw == {}:
        return _NONE
    if not isinstance(raw, dict):
        dump = getattr(raw, "model_dump", None)
        raw = dump() if dump is not None else raw
    if not isinstance(raw, dict):
        from regista.types import Usage

        raw = Usage.model_validate(raw).model_dump()  # raises as ``Usage`` would
    get = raw.get
    a, b = get("input_tokens", 0), get("output_tokens", 0)
    c, d = get("cache_creation_input_tokens", 0), get("cache_read_input_tokens", 0)
    if type(a) is not int or type(b) is not int or type(c) is not int or type(d) is not int:
        from regista.types import Usage

        u = Usage.model_validate(raw)  # raises as ``Usage`` would
        a, b = u.input_tokens, u.output_tokens
        c, d = u.cache_creation_input_tokens, u.cache_read_input_tokens
    split = get("cache_creation")
    hour = 0
    if isinstance(split, dict):
        hour = _count(split.get("ephemeral_1h_input_tokens"))
        if not c:  # only the split was given
            c = _count(split.get("ephemeral_5m_input_tokens")) + hour
        hour = min(hour, c)
    reasoning = get("reasoning_output_tokens")
    if reasoning is None:
        details = get("output_tokens_details")
        if isinstance(details, dict):
            reasoning = details.get("reasoning_tokens")
    return Tokens(a, b, d, c - hour, hour, _count(reasoning))


_NONE = Tokens()
#: The keys of a usage that are read beyond its four counts.
_MORE = frozenset(("cache_creation", "reasoning_output_tokens", "output_tokens_details"))


def token_totals(raws: Iterable[Any]) -> Tokens:
    """The sum of recorded usages (see :func:`tokens_of`): the one place a run's tokens are
    added up."""
    a = b = c = d = e = f = 0
    for raw in raws:
        t = tokens_of(raw)
        a += t.input
        b += t.output
        c += t.cache_read
        d += t.cache_write_5m
        e += t.cache_write_1h
        f += t.reasoning
    return Tokens(a, b, c, d, e, f)
