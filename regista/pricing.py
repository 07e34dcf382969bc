"""The price table (USD per million tokens), the cost of one call, and a run's cost with its
basis.

The table lists the list prices that Anthropic and OpenAI published, as of :data:`DATE`
(:data:`SOURCE`): Claude models with their 5-minute and 1-hour cache-write rates, OpenAI's
chat and reasoning models and Codex's, each with its cached-input rate. A model id is looked
up without its date (``-20250929``, ``-2025-08-07``, ``-latest``), its provider prefix
(``anthropic/``, ``openai/``) and its cloud form (Bedrock's ``anthropic.claude-…-v1:0`` and
``us.`` / ``eu.`` / ``apac.`` / ``global.`` profiles, Vertex's ``claude-…@20250929``), so one
entry prices them all. Bedrock and Vertex bill the same list prices for these models.

A model that is not in the table costs ``None`` (unknown), never a silent $0; a sum with an
unknown part is unknown (:func:`add_costs`). Users add or replace prices with a JSON file
(:func:`load_prices`): ``$REGISTA_PRICES`` if set, else ``.regista/prices.json`` in the
working directory, else ``~/.config/regista/prices.json``; or in code with
:func:`register_price`.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regista.errors import PricingWarning, UserError
from regista.tokens import Tokens, tokens_of

__all__ = [
    "DATE",
    "PRICES",
    "SOURCE",
    "Price",
    "add_costs",
    "cost_basis",
    "cost_usd",
    "load_prices",
    "price_for",
    "register_price",
    "round_cost",
    "run_cost_basis",
    "total_cost",
]

#: When the table was last checked against :data:`SOURCE`.
DATE = "2026-12-01"
#: Where the table's prices come from.
SOURCE = (
    "https://platform.claude.com/docs/en/about-claude/pricing, "
    "https://developers.openai.com/api/docs/pricing"
)
#: The environment variable naming a price file.
PRICES_ENV = "REGISTA_PRICES"


def add_costs(total: float | None, cost: float | None) -> float | None:
    """``total + cost``, where an unknown (``None``) cost makes the total unknown."""
    return None if total is None or cost is None else total + cost


def total_cost(costs: Iterable[float | None]) -> float | None:
    """The cost of a run from its parts' (model calls and compactions), added in order as
    the run added them (float sums depend on it): unknown when any part is unknown. Every
    reader of a trace sums a run's cost with it."""
    total = 0.0
    for cost in costs:
        if cost is None:
            return None
        total += cost
    return total


def round_cost(cost: float | None) -> float | None:
    """A cost as it is printed and returned (MCP, JSON): to the millionth of a dollar, so a
    sum reads ``0.00441``, not ``0.004410000000000001``."""
    return None if cost is None else round(cost, 6)


@dataclass(frozen=True)
class Price:
    """USD per million tokens.

    ``cache_write`` is the 5-minute cache-write rate; ``cache_write_1h`` the 1-hour rate
    (twice the input rate when not given, as Anthropic bills it). ``long`` is
    ``(threshold, price)``: a call whose prompt (input, cache reads and writes) is over
    ``threshold`` tokens is billed at ``price`` in full, as Anthropic bills long prompts.
    """

    input: float
    output: float
    cache_write: float
    cache_read: float
    cache_write_1h: float = -1.0
    long: tuple[int, Price] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.cache_write_1h < 0:
            object.__setattr__(self, "cache_write_1h", self.input * 2)

    def cost(self, tokens: Tokens) -> float:
        """The cost of one call's ``tokens``, in US dollars."""
        price = self
        if self.long is not None:
            threshold, over = self.long
            if tokens.input + tokens.cache_read + tokens.cache_write > threshold:
                price = over
        total = (
            tokens.input * price.input
            + tokens.output * price.output
            + tokens.cache_write_5m * price.cache_write
            + tokens.cache_write_1h * price.cache_write_1h
            + tokens.cache_read * price.cache_read
        )
        return round(total / 1_000_000, 10)


def _claude(inp: float, out: float, read: float | None = None) -> Price:
    """Anthropic's rule: 5-minute writes 1.25×, 1-hour writes 2×, reads 0.1× the input rate
    (a model whose read rate differs says so)."""
    return Price(inp, out, inp * 1.25, inp * 0.1 if read is None else read, inp * 2)


def _openai(inp: float, out: float, cached: float | None) -> Price:
    """OpenAI bills cached input at its own rate and has no cache writes."""
    return Price(inp, out, inp, inp if cached is None else cached, inp)


# Anthropic's long-prompt rates: Sonnet 4 and 4.5 past 200k tokens (the 1M-token window),
# Haiku 5.5 past 100k.
_SONNET_4_LONG = (200_000, _claude(6.0, 22.5))
_HAIKU_5_5_LONG = (100_000, _claude(0.5, 2.5))

PRICES: dict[str, Price] = {
    # Anthropic
    "claude-fable-5-1": _claude(10.0, 50.0, 0.25),
    "claude-mythos-5-1": _claude(10.0, 50.0, 0.25),
    "claude-fable-5": _claude(10.0, 50.0),
    "claude-mythos-5": _claude(10.0, 50.0),
    "claude-opus-5-5": _claude(4.0, 20.0, 0.2),
    "claude-opus-5": _claude(5.0, 25.0),
    "claude-opus-4-8": _claude(5.0, 25.0),
    "claude-opus-4-7": _claude(5.0, 25.0),
    "claude-opus-4-6": _claude(5.0, 25.0),
    "claude-opus-4-5": _claude(5.0, 25.0),
    "claude-opus-4-1": _claude(15.0, 75.0),
    "claude-opus-4-0": _claude(15.0, 75.0),
    "claude-opus-4": _claude(15.0, 75.0),
    "claude-3-opus": _claude(15.0, 75.0),
    "claude-sonnet-5-5": _claude(2.0, 10.0, 0.1),
    "claude-sonnet-5": _claude(2.0, 10.0),
    "claude-sonnet-4-6": _claude(3.0, 15.0),
    "claude-sonnet-4-5": Price(3.0, 15.0, 3.75, 0.3, 6.0, _SONNET_4_LONG),
    "claude-sonnet-4-0": Price(3.0, 15.0, 3.75, 0.3, 6.0, _SONNET_4_LONG),
    "claude-sonnet-4": Price(3.0, 15.0, 3.75, 0.3, 6.0, _SONNET_4_LONG),
    "claude-3-7-sonnet": _claude(3.0, 15.0),
    "claude-3-5-sonnet": _claude(3.0, 15.0),
    "claude-haiku-5-5": Price(0.1, 0.5, 0.125, 0.01, 0.2, _HAIKU_5_5_LONG),
    "claude-haiku-4-5": _claude(1.0, 5.0),
    "claude-3-5-haiku": _claude(0.8, 4.0),
    "claude-3-haiku": Price(0.25, 1.25, 0.30, 0.03, 0.50),
    # OpenAI: chat and reasoning models
    "gpt-5.5": _openai(5.0, 30.0, 0.5),
    "gpt-5.4": _openai(2.5, 15.0, 0.25),
    "gpt-5.4-mini": _openai(0.75, 4.5, 0.075),
    "gpt-5.4-nano": _openai(0.2, 1.25, 0.02),
    "gpt-5.2": _openai(1.75, 14.0, 0.175),
    "gpt-5.2-pro": _openai(21.0, 168.0, None),
    "gpt-5.1": _openai(1.25, 10.0, 0.125),
    "gpt-5": _openai(1.25, 10.0, 0.125),
    "gpt-5-mini": _openai(0.25, 2.0, 0.025),
    "gpt-5-nano": _openai(0.05, 0.4, 0.005),
    "gpt-5-pro": _openai(15.0, 120.0, None),
    "gpt-4.1": _openai(2.0, 8.0, 0.5),
    "gpt-4.1-mini": _openai(0.4, 1.6, 0.1),
    "gpt-4.1-nano": _openai(0.1, 0.4, 0.025),
    "gpt-4o": _openai(2.5, 10.0, 1.25),
    "gpt-4o-mini": _openai(0.15, 0.6, 0.075),
    "gpt-4-turbo": _openai(10.0, 30.0, None),
    "o1": _openai(15.0, 60.0, 7.5),
    "o1-mini": _openai(1.1, 4.4, 0.55),
    "o1-pro": _openai(150.0, 600.0, None),
    "o3": _openai(2.0, 8.0, 0.5),
    "o3-mini": _openai(1.1, 4.4, 0.55),
    "o3-pro": _openai(20.0, 80.0, None),
    "o4-mini": _openai(1.1, 4.4, 0.275),
    # OpenAI: Codex's models
    "gpt-5.3-codex": _openai(1.75, 14.0, 0.175),
    "gpt-5.2-codex": _openai(1.75, 14.0, 0.175),
    "gpt-5.1-codex-max": _openai(1.25, 10.0, 0.125),
    "gpt-5.1-codex": _openai(1.25, 10.0, 0.125),
    "gpt-5.1-codex-mini": _openai(0.25, 2.0, 0.025),
    "gpt-5-codex": _openai(1.25, 10.0, 0.125),
    "gpt-5-codex-mini": _openai(0.25, 2.0, 0.025),
    "codex-mini": _openai(1.5, 6.0, 0.375),
    # The offline models cost nothing, by definition.
    "scripted": Price(0.0, 0.0, 0.0, 0.0, 0.0),
}

#: The table as shipped, before any price file or :func:`register_price`.
_SHIPPED = dict(PRICES)
#: Where each entry came from, when not from the shipped table: model -> file.
_FROM: dict[str, str] = {}

_DATE_SUFFIX = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$")
_BEDROCK = re.compile(
    r"^(?:(?:us|eu|apac|au|jp|ca|us-gov|global)\.)?anthropic\.(.+?)(?:-v\d+(?::\d+)?)?$"
)
_warned: set[str] = set()


def register_price(model: str, price: Price) -> None:
    """Add or replace the price of ``model``."""
    PRICES[model] = price
    _FROM[model] = "register_price"


def _candidates(model: str) -> list[str]:
    """``model`` and the forms it is listed under, most specific first."""
    names = [model]
    m = model.strip().lower()
    for prefix in ("anthropic/", "openai/", "bedrock/", "vertex_ai/", "azure/"):
        if m.startswith(prefix):
            m = m[len(prefix) :]
    bedrock = _BEDROCK.match(m)
    if bedrock:
        m = bedrock.group(1)
    m = m.split("@", 1)[0]  # Vertex: claude-sonnet-4-5@20250929
    m = m.removesuffix("[1m]")
    names.append(m)
    names.append(_DATE_SUFFIX.sub("", m))
    return names


def price_for(model: str) -> Price | None:
    """The price of ``model``, in any of the forms the module docstring lists."""
    _load_default()
    return next((PRICES[n] for n in _candidates(model) if n in PRICES), None)


def _entry(model: str) -> str | None:
    return next((n for n in _candidates(model) if n in PRICES), None)


def cost_usd(model: str, usage: Any) -> float | None:
    """Cost of one call (its ``usage``: a :class:`~regista.types.Usage`, a recorded usage
    dict or :class:`~regista.tokens.Tokens`), or ``None`` (with a :class:`PricingWarning`)
    for a model without a price."""
    price = price_for(model)
    if price is None:
        if model not in _warned:
            _warned.add(model)
            warnings.warn(
                f"no price known for model {model!r}: its cost is reported as unknown "
                f"(add one to a price file, see {PRICES_ENV})",
                PricingWarning,
                stacklevel=2,
            )
        return None
    return price.cost(usage if isinstance(usage, Tokens) else tokens_of(usage))


def cost_basis(cost: float | None, model: str | None = None, *, recorded: bool = True) -> str:
    """How a cost figure was made: ``recorded`` (the trace's own figure, which the recorder
    or importer priced from this table when it wrote the trace), ``price table DATE:
    ENTRY`` (priced now), or ``unknown: no price for MODEL``."""
    if cost is None:
        return f"unknown: no price for {model}" if model else "unknown"
    if recorded:
        return "recorded"
    entry = _entry(model or "")
    where = _FROM.get(entry or "", f"price table {DATE}")
    return f"{where}: {entry}" if entry else where


def run_cost_basis(cost: float | None, model: str) -> str:
    """The basis of a run's recorded cost (``model``: the run's): ``recorded``, or why it is
    unknown."""
    if cost is None and price_for(model) is not None:
        return "unknown: a call's model has no price"
    return cost_basis(cost, model)


# -- price files -----------------------------------------------------------------------


def _price_files() -> list[Path]:
    env = os.environ.get(PRICES_ENV)
    if env:
        return [Path(env).expanduser()]
    home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return [Path(".regista/prices.json"), home / "regista" / "prices.json"]


_RATE_KEYS = ("input", "output", "cache_write", "cache_write_1h", "cache_read")


def _parse_price(where: str, model: Any, spec: Any, base: Price | None) -> Price:
    if not isinstance(model, str) or not model.strip():
        raise UserError(f"{where}: a model id must be a non-empty string, not {model!r}")
    if not isinstance(spec, Mapping):
        raise UserError(
            f"{where}: the price of {model!r} must be an object of USD per million tokens "
            f"({', '.join(_RATE_KEYS)}), not {type(spec).__name__}"
        )
    unknown = sorted(str(k) for k in spec if k not in _RATE_KEYS)
    if unknown:
        raise UserError(
            f"{where}: unknown field {unknown[0]!r} in the price of {model!r} "
            f"(fields: {', '.join(_RATE_KEYS)})"
        )
    rates: dict[str, float] = {}
    for key, value in spec.items():
        if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
            raise UserError(
                f"{where}: {model!r}.{key} must be a number of USD per million tokens "
                f"(0 or more), not {value!r}"
            )
        rates[key] = float(value)
    if "input" not in rates and base is None:
        raise UserError(f"{where}: the price of {model!r} needs at least 'input' and 'output'")
    if "output" not in rates and base is None:
        raise UserError(f"{where}: the price of {model!r} needs at least 'input' and 'output'")
    inp = rates.get("input", base.input if base else 0.0)
    return Price(
        input=inp,
        output=rates.get("output", base.output if base else 0.0),
        cache_write=rates.get("cache_write", base.cache_write if base else inp * 1.25),
        cache_read=rates.get("cache_read", base.cache_read if base else inp * 0.1),
        cache_write_1h=rates.get("cache_write_1h", base.cache_write_1h if base else inp * 2),
    )


def parse_prices(data: bytes | str, where: str = "prices") -> dict[str, Price]:
    """The prices a price file holds.

    The file is a JSON object of model id to rates in USD per million tokens::

        {"my-model": {"input": 1.0, "output": 4.0},
         "claude-opus-4-7": {"cache_read": 0.4}}

    ``input`` and ``output`` are needed for a model the table does not list; for one it
    lists, the fields given replace the table's. Cache writes default to 1.25× (5 minutes)
    and 2× (1 hour) the input rate, cache reads to 0.1×.

    Raises:
        UserError: The file is not such an object (one message naming the file and what
            is wrong).
    """
    import json

    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as e:
        raise UserError(f"{where}: not valid JSON ({e})") from None
    if not isinstance(doc, dict):
        raise UserError(
            f"{where}: a price file is a JSON object of model id to prices, not "
            f"{type(doc).__name__}"
        )
    return {
        model: _parse_price(where, model, spec, _SHIPPED.get(model)) for model, spec in doc.items()
    }


def load_prices(path: str | Path | None = None) -> list[Path]:
    """Add the prices of a price file to the table (see the module docstring for where it
    is looked for when ``path`` is ``None``); the files read.

    Raises:
        UserError: The file named is missing or unreadable, or a file is malformed.
    """
    files = [Path(path)] if path is not None else _price_files()
    named = path is not None or bool(os.environ.get(PRICES_ENV))
    for file in files:
        try:
            data = file.read_bytes()
        except FileNotFoundError:
            if named:
                raise UserError(f"{file}: no such price file") from None
            continue
        except OSError as e:
            raise UserError(f"{file}: cannot read the price file ({e.strerror})") from None
        prices = parse_prices(data, str(file))
        PRICES.update(prices)
        _FROM.update(dict.fromkeys(prices, str(file)))
        return [file]
    return []


_loaded = False


def _load_default() -> None:
    """Read the user's price file once, the first time a price is looked up."""
    global _loaded
    if not _loaded:
        _loaded = True
        load_prices()
