"""Market data providers: live (yfinance), local files (CSV) and the bundled sample data."""

from agentsdk_finance.providers.base import MarketData, parse_day
from agentsdk_finance.providers.csv import CsvProvider
from agentsdk_finance.providers.sample import SampleDataProvider
from agentsdk_finance.providers.yahoo import RateLimiter, YFinanceProvider

__all__ = [
    "CsvProvider",
    "MarketData",
    "RateLimiter",
    "SampleDataProvider",
    "YFinanceProvider",
    "parse_day",
]
