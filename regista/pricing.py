"""An explicit price table (USD per million tokens) and the cost of one call.

A model that is not in the table costs ``None`` (unknown) and warns once: regista never
reports a silent $0 for a call it cannot price. Add your own with :func:`register_price`.
Prices are those Anthropic published for each model; cache writes are the 5-minute rate.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

from regista.errors import PricingWarning
from regista.types import Usage

__all__ = ["PRICES", "Price", "add_costs", "cost_usd", "price_for", "register_price"]


def add_costs(total: float | None, cost: float | None) -> float | None:
    """``total + cost``, where an unknown (``None``) cost makes the total unknown."""
    return None if total is None or cost is None else total + cost


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float


def _p(inp: float, out: float) -> Price:
    return Price(input=inp, output=out, cache_write=inp * 1.25, cache_read=inp * 0.1)


PRICES: dict[str, Price] = {
    "claude-opus-4-6": _p(5.0, 25.0),
    "claude-opus-4-5": _p(5.0, 25.0),
    "claude-opus-4-1": _p(15.0, 75.0),
    "claude-opus-4-0": _p(15.0, 75.0),
    "claude-opus-4": _p(15.0, 75.0),
    "claude-sonnet-4-6": _p(3.0, 15.0),
    "claude-sonnet-4-5": _p(3.0, 15.0),
    "claude-sonnet-4-0": _p(3.0, 15.0),
    "claude-sonnet-4": _p(3.0, 15.0),
    "claude-3-7-sonnet": _p(3.0, 15.0),
    "claude-haiku-4-5": _p(1.0, 5.0),
    "claude-3-5-haiku": _p(0.8, 4.0),
    "claude-3-haiku": _p(0.25, 1.25),
    # The offline models cost nothing, by definition.
    "scripted": Price(0.0, 0.0, 0.0, 0.0),
}

_DATE_SUFFIX = re.compile(r"-(\d{8}|latest)$")
_warned: set[str] = set()


def register_price(model: str, price: Price) -> None:
    """Add or replace the price of ``model``."""
    PRICES[model] = price


def price_for(model: str) -> Price | None:
    """The price of ``model``, ignoring a ``-YYYYMMDD`` / ``-latest`` suffix."""
    if model in PRICES:
        return PRICES[model]
    return PRICES.get(_DATE_SUFFIX.sub("", model))


def cost_usd(model: str, usage: Usage) -> float | None:
    """Cost of one call, or ``None`` (with a :class:`PricingWarning`) for an unknown model."""
    price = price_for(model)
    if price is None:
        if model not in _warned:
            _warned.add(model)
            warnings.warn(
                f"no price known for model {model!r}: its cost is reported as unknown "
                "(register one with regista.pricing.register_price)",
                PricingWarning,
                stacklevel=2,
            )
        return None
    total = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_creation_input_tokens * price.cache_write
        + usage.cache_read_input_tokens * price.cache_read
    )
    return round(total / 1_000_000, 10)
