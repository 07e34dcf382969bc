"""What a replay, resume, fork or rewind did not spend again: the recorded prefix's cost.

A model call served from a recording costs nothing, but the recording paid for it once.
:class:`Savings` adds up, for every call served from the recording, its tokens, its price
(at the table's rate for its model; unknown when the model has no price) and the model
time the recording spent waiting for it. The loop writes the total into
``session.end.replay["saved"]``; every place that reports a replay, resume, fork or rewind
shows it (:meth:`Savings.describe`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from regista.pricing import add_costs
from regista.vocab import cost_text

__all__ = ["Savings"]


@dataclass
class Savings:
    """Tokens, dollars and model time a run did not spend because a recording answered.

    Attributes:
        calls: Model calls served from the recording.
        tokens: Their tokens (input, output and cache).
        cost_usd: What they cost when recorded; ``None`` when a model had no price.
        model_ms: The model time the recording spent on them.
    """

    calls: int = 0
    tokens: int = 0
    cost_usd: float | None = 0.0
    model_ms: float = 0.0

    def add(self, tokens: int, cost_usd: float | None, model_ms: float) -> None:
        """Count one call served from the recording."""
        self.calls += 1
        self.tokens += tokens
        self.cost_usd = add_costs(self.cost_usd, cost_usd)
        self.model_ms += model_ms

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "tokens": self.tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 8),
            "model_ms": round(self.model_ms, 3),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Savings | None:
        """Read ``session.end.replay["saved"]``; ``None`` when absent or not a mapping."""
        if not isinstance(data, dict):
            return None
        cost = data.get("cost_usd")
        return cls(
            calls=_int(data.get("calls")),
            tokens=_int(data.get("tokens")),
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
            model_ms=float(data["model_ms"])
            if isinstance(data.get("model_ms"), int | float)
            else 0.0,
        )

    def describe(self) -> str:
        """``saved 1,234 tokens, $0.0042, 3.1 s of model time (4 calls)``."""
        cost = cost_text(self.cost_usd)
        calls = "1 call" if self.calls == 1 else f"{self.calls} calls"
        return (
            f"saved {self.tokens:,} tokens, {cost}, {self.model_ms / 1000:.1f} s of model time "
            f"({calls} from the recording)"
        )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
