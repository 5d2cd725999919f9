"""Classified market-data failures.

Every provider failure carries a ``kind`` so callers (and the model, through a
``ToolError``) can tell a typo in a ticker from a network outage.
"""

from __future__ import annotations

from typing import Literal

FailureKind = Literal[
    "network", "rate_limited", "no_data", "invalid_symbol", "invalid_params", "bad_data"
]


class MarketDataError(Exception):
    """A provider could not return data; ``kind`` says why.

    Attributes:
        kind: one of ``network``, ``rate_limited``, ``no_data``, ``invalid_symbol``,
            ``invalid_params``, ``bad_data`` (the source holds rows that would give wrong
            numbers: zero/negative/non-finite prices, conflicting duplicate dates).
        reason: a human-readable explanation, safe to show to a model.
        symbol: the ticker involved, when there is one.
        provider: the provider's name.
        rows: for ``bad_data`` about particular rows, those rows as the reason lists them
            (``line 52 (2008-03-14): close 0; ...``); empty otherwise.
        where: the file or endpoint the rows are in, when ``rows`` are given.
    """

    def __init__(
        self,
        kind: FailureKind,
        reason: str,
        *,
        symbol: str | None = None,
        provider: str = "",
        rows: str = "",
        where: str = "",
    ) -> None:
        self.kind: FailureKind = kind
        self.reason = reason
        self.symbol = symbol
        self.provider = provider
        self.rows = rows
        self.where = where
        where = f"{provider} " if provider else ""
        about = f" for {symbol}" if symbol else ""
        super().__init__(f"{where}{kind}{about}: {reason}")

    @property
    def retryable(self) -> bool:
        """True for failures that may go away on their own (network, rate limiting)."""
        return self.kind in ("network", "rate_limited")


class SampleDataUnavailable(RuntimeError):
    """The sample data files could not be found or fetched (see the message for the fix)."""
