"""What a run cost: a per-model price table and the arithmetic on ``Usage``.

The table holds US dollars per million tokens for the hosted models the
connectors name (input, output, cached input, and cache writes where a vendor
charges extra for them). Models served on this machine or on your own server
(``local:``, ``vllm:``, ``sglang:``, ``ollama:``, ``llamacpp:``) cost nothing.

**The prices may be out of date.** They were copied by hand from the vendors'
published pricing pages as of ``PRICES_AS_OF`` (see ``PRICE_SOURCES``) and are
not fetched at run time. Override or add models with ``set_price`` or with a JSON
file named by ``AGENTSDK_PRICES`` (``{"openai:gpt-4.1": {"input": 2.0, "output":
8.0, "cached_input": 0.5}}``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .messages import Usage

__all__ = [
    "LOCAL_SCHEMES",
    "PRICES_AS_OF",
    "PRICE_SOURCES",
    "Cost",
    "Price",
    "cost_of",
    "price_for",
    "prices",
    "reset_prices",
    "set_price",
    "turn_cost",
]

PRICES_AS_OF = "2025-11-01"
"""The day the built-in prices were last checked against the vendors' pages."""

PRICE_SOURCES = {
    "openai": "https://openai.com/api/pricing/",
    "anthropic": "https://www.anthropic.com/pricing#api",
    "deepseek": "https://api-docs.deepseek.com/quick_start/pricing",
    "dashscope": "https://www.alibabacloud.com/help/en/model-studio/models (international)",
}
"""Where the built-in prices come from, per connector scheme."""

LOCAL_SCHEMES = frozenset({"local", "vllm", "sglang", "ollama", "llamacpp"})
"""Schemes of models that run on hardware you own: their price is zero."""


class Price(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)
    """Input tokens read from the vendor's prompt cache (``None``: billed as input)."""
    cache_write: float | None = Field(default=None, ge=0)
    """Input tokens written to the prompt cache (``None``: billed as input)."""


class Cost(BaseModel):
    """A run's cost in US dollars, in total and per model."""

    model_config = ConfigDict(frozen=True)

    usd: float = 0.0
    by_model: dict[str, float] = Field(default_factory=dict)
    unpriced: list[str] = Field(default_factory=list)
    """Models with no price in the table (hosted models the table does not know): their
    tokens are not in ``usd``."""

    @property
    def known(self) -> bool:
        """True when every model of the run had a price."""
        return not self.unpriced

    def __str__(self) -> str:
        text = f"${self.usd:.4f}" if self.usd < 1 else f"${self.usd:.2f}"
        if self.unpriced:
            text += f" (no price for {', '.join(self.unpriced)})"
        return text


def _p(i: float, o: float, cached: float | None = None, write: float | None = None) -> Price:
    return Price(input=i, output=o, cached_input=cached, cache_write=write)


# Keys are "<scheme>:<model>"; a served model name with a date or version suffix
# ("gpt-4.1-2025-04-14") takes the price of its longest listed prefix.
_BUILTIN: dict[str, Price] = {
    # OpenAI: cached input is a discount; writing the cache costs nothing extra.
    "openai:gpt-5": _p(1.25, 10.00, 0.125),
    "openai:gpt-5-mini": _p(0.25, 2.00, 0.025),
    "openai:gpt-5-nano": _p(0.05, 0.40, 0.005),
    "openai:gpt-4.1": _p(2.00, 8.00, 0.50),
    "openai:gpt-4.1-mini": _p(0.40, 1.60, 0.10),
    "openai:gpt-4.1-nano": _p(0.10, 0.40, 0.025),
    "openai:gpt-4o": _p(2.50, 10.00, 1.25),
    "openai:gpt-4o-mini": _p(0.15, 0.60, 0.075),
    "openai:o3": _p(2.00, 8.00, 0.50),
    "openai:o3-mini": _p(1.10, 4.40, 0.55),
    "openai:o4-mini": _p(1.10, 4.40, 0.275),
    # Anthropic: cache reads at 0.1x input, 5-minute cache writes at 1.25x input.
    "anthropic:claude-opus-4-5": _p(5.00, 25.00, 0.50, 6.25),
    "anthropic:claude-opus-4-1": _p(15.00, 75.00, 1.50, 18.75),
    "anthropic:claude-opus-4": _p(15.00, 75.00, 1.50, 18.75),
    "anthropic:claude-sonnet-4-5": _p(3.00, 15.00, 0.30, 3.75),
    "anthropic:claude-sonnet-4": _p(3.00, 15.00, 0.30, 3.75),
    "anthropic:claude-3-7-sonnet": _p(3.00, 15.00, 0.30, 3.75),
    "anthropic:claude-haiku-4-5": _p(1.00, 5.00, 0.10, 1.25),
    "anthropic:claude-3-5-haiku": _p(0.80, 4.00, 0.08, 1.00),
    "anthropic:claude-3-haiku": _p(0.25, 1.25, 0.03, 0.30),
    "anthropic:claude-3-opus": _p(15.00, 75.00, 1.50, 18.75),
    "anthropic:claude-3-sonnet": _p(3.00, 15.00, 0.30, 3.75),
    # DeepSeek (V3.2): one price for chat and reasoner; cache hits at a tenth.
    "deepseek:deepseek-chat": _p(0.28, 0.42, 0.028),
    "deepseek:deepseek-reasoner": _p(0.28, 0.42, 0.028),
    # Alibaba Model Studio, international deployment, lowest input tier.
    "dashscope:qwen-max": _p(1.60, 6.40),
    "dashscope:qwen-plus": _p(0.40, 1.20),
    "dashscope:qwen-turbo": _p(0.05, 0.20),
}

_overrides: dict[str, Price] = {}
_file_cache: tuple[str, float, dict[str, Price]] | None = None


def _from_file() -> dict[str, Price]:
    """Prices from the JSON file ``AGENTSDK_PRICES`` names (re-read when it changes)."""
    global _file_cache
    name = os.environ.get("AGENTSDK_PRICES")
    if not name:
        return {}
    path = Path(name)
    try:
        mtime = path.stat().st_mtime
    except OSError as exc:
        raise ValueError(f"AGENTSDK_PRICES names {name!r}, which cannot be read: {exc}") from exc
    if _file_cache is not None and _file_cache[:2] == (name, mtime):
        return _file_cache[2]
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(raw, dict):
            raise ValueError("the file must hold a JSON object of model -> price")
        table = {str(k): Price.model_validate(v) for k, v in raw.items()}
    except (ValueError, ValidationError) as exc:
        raise ValueError(
            f"AGENTSDK_PRICES file {name!r} is not a price table "
            '({"scheme:model": {"input": 2.0, "output": 8.0, "cached_input": 0.5}}): '
            f"{exc}"
        ) from exc
    _file_cache = (name, mtime, table)
    return table


def prices() -> dict[str, Price]:
    """The table in force: built-in prices, then the ``AGENTSDK_PRICES`` file, then
    ``set_price`` calls (later ones win)."""
    return {**_BUILTIN, **_from_file(), **_overrides}


def set_price(model: str, price: Price | Mapping[str, float]) -> None:
    """Use ``price`` for ``model`` (``"scheme:model"``, or a prefix of served names)."""
    _overrides[model] = price if isinstance(price, Price) else Price.model_validate(price)


def reset_prices() -> None:
    """Forget every ``set_price`` override."""
    _overrides.clear()


def price_for(model: str) -> Price | None:
    """The price of ``model`` (as a run names it, ``"openai:gpt-4.1"``): an exact entry,
    else the longest entry that prefixes it, zero for local engines, else ``None``."""
    table = prices()
    if model in table:
        return table[model]
    best = max((k for k in table if model.startswith(k + "-")), key=len, default=None)
    if best is not None:
        return table[best]
    scheme, sep, _ = model.partition(":")
    if (sep and scheme in LOCAL_SCHEMES) or not sep:
        # no scheme: a test model or a custom Model object, which no vendor bills
        return Price(input=0.0, output=0.0)
    return None


def turn_cost(model: str, usage: Usage) -> float | None:
    """Dollars for ``usage`` of ``model``; ``None`` when it has no price."""
    price = price_for(model)
    if price is None:
        return None
    cached = min(usage.cache_read_tokens, usage.input_tokens)
    written = min(usage.cache_write_tokens, usage.input_tokens - cached)
    fresh = usage.input_tokens - cached - written  # input_tokens counts both cache kinds
    dollars = (
        fresh * price.input
        + cached * (price.input if price.cached_input is None else price.cached_input)
        + written * (price.input if price.cache_write is None else price.cache_write)
        + usage.output_tokens * price.output
    )
    return dollars / 1_000_000


def cost_of(usage_by_model: Mapping[str, Usage]) -> Cost:
    """The cost of a run from its usage per model (``RunResult.usage_by_model``)."""
    by_model: dict[str, float] = {}
    unpriced: list[str] = []
    for model, usage in usage_by_model.items():
        dollars = turn_cost(model, usage)
        if dollars is None:
            unpriced.append(model)
        else:
            by_model[model] = dollars
    return Cost(usd=sum(by_model.values()), by_model=by_model, unpriced=unpriced)
