"""agentsdk-finance: market data with provenance, a persistent cache, metrics, charts and
cited research reports, as an agentsdk toolkit (``FinanceToolkit``, entry point ``finance``)."""

from agentsdk_finance.cache import CachedMarketData, PriceCache
from agentsdk_finance.errors import FailureKind, MarketDataError, SampleDataUnavailable
from agentsdk_finance.fundamentals import Ratios, compute_ratios
from agentsdk_finance.indicators import IndicatorSnapshot, indicator_snapshot
from agentsdk_finance.metrics import MetricsError, Performance, performance
from agentsdk_finance.models import FiscalPeriod, Fundamentals, PriceHistory, Provenance
from agentsdk_finance.providers import (
    CsvProvider,
    MarketData,
    RateLimiter,
    SampleDataProvider,
    YFinanceProvider,
)
from agentsdk_finance.sampledata import ensure_sample_data
from agentsdk_finance.toolkit import FinanceToolkit
from agentsdk_finance.xbrl import fundamentals_from_xbrl

__all__ = [
    "CachedMarketData",
    "CsvProvider",
    "FailureKind",
    "FinanceToolkit",
    "FiscalPeriod",
    "Fundamentals",
    "IndicatorSnapshot",
    "MarketData",
    "MarketDataError",
    "MetricsError",
    "Performance",
    "PriceCache",
    "PriceHistory",
    "Provenance",
    "RateLimiter",
    "Ratios",
    "SampleDataProvider",
    "SampleDataUnavailable",
    "YFinanceProvider",
    "compute_ratios",
    "ensure_sample_data",
    "fundamentals_from_xbrl",
    "indicator_snapshot",
    "performance",
]
