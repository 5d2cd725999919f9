"""YFinanceProvider through yfinance's real code path, answered by recorded Yahoo responses
served via the session seam (a requests transport adapter)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
import requests
from agentsdk_finance import MarketDataError, RateLimiter, YFinanceProvider
from finance_yahoo_replay import YahooReplay, replay_session
from requests.adapters import BaseAdapter


def _provider(adapter: BaseAdapter, cache_dir: Path, sleeps: list[float] | None = None):
    session = requests.Session()
    session.mount("https://", adapter)
    return YFinanceProvider(
        session,
        rate_limiter=RateLimiter(0.0),
        sleep=(sleeps.append if sleeps is not None else lambda s: None),
        yf_cache_dir=cache_dir,
    )


def test_history_through_the_session(yf_cache_dir: Path) -> None:
    adapter = YahooReplay()
    provider = YFinanceProvider(
        replay_session(adapter), rate_limiter=RateLimiter(0.0), yf_cache_dir=yf_cache_dir
    )
    history = provider.history("aapl", date(2024, 1, 2), date(2024, 1, 9))
    assert list(history.frame.index.date) == [date(2024, 1, d) for d in (2, 3, 4, 5, 8, 9)]
    assert history.frame.loc["2024-01-02", "close"] == 185.64
    assert history.frame.loc["2024-01-09", "adj_close"] == 184.23
    prov = history.provenance
    assert (prov.symbol, prov.currency, prov.adjusted) == ("AAPL", "USD", True)
    assert prov.period == "2024-01-02..2024-01-09" and "yfinance" in prov.source
    assert any("/v8/finance/chart/AAPL" in url and "period1=" in url for url in adapter.requests)


def test_429_then_success_backs_off_and_retries(yf_cache_dir: Path) -> None:
    # yfinance retries a 429 once itself; two 429s reach the provider, which backs off.
    sleeps: list[float] = []
    adapter = YahooReplay(history_statuses={"AAPL": [429, 429]})
    provider = _provider(adapter, yf_cache_dir, sleeps)
    history = provider.history("AAPL", date(2024, 1, 3), date(2024, 1, 5))
    assert len(history.frame) == 3
    assert sleeps == [1.0]
    assert provider.attempts == 2


def test_persistent_429_is_rate_limited_after_bounded_retries(yf_cache_dir: Path) -> None:
    sleeps: list[float] = []
    adapter = YahooReplay(history_statuses={"AAPL": [429] * 20})
    provider = _provider(adapter, yf_cache_dir, sleeps)
    provider.max_retries = 2
    with pytest.raises(MarketDataError) as err:
        provider.history("AAPL", date(2024, 1, 3), date(2024, 1, 4))
    assert err.value.kind == "rate_limited" and err.value.retryable
    assert sleeps == [1.0, 2.0]
    assert provider.attempts == 3


def test_empty_frame_is_no_data_with_a_reason(yf_cache_dir: Path) -> None:
    provider = _provider(YahooReplay(empty_history={"AAPL"}), yf_cache_dir)
    with pytest.raises(MarketDataError) as err:
        provider.history("AAPL", date(2024, 1, 2), date(2024, 1, 5))
    assert err.value.kind == "no_data"
    assert "no price data" in err.value.reason


def test_invalid_symbol(yf_cache_dir: Path) -> None:
    provider = _provider(YahooReplay(), yf_cache_dir)
    with pytest.raises(MarketDataError) as err:
        provider.history("NOSUCHTICKER", date(2024, 1, 2), date(2024, 1, 5))
    assert err.value.kind == "invalid_symbol"
    assert "NOSUCHTICKER" in str(err.value)


class _Unreachable(BaseAdapter):
    def send(self, request, **kwargs):  # type: ignore[override]
        raise requests.ConnectionError(f"Failed to resolve {request.url}")

    def close(self) -> None:
        pass


def test_network_failure(yf_cache_dir: Path) -> None:
    provider = _provider(_Unreachable(), yf_cache_dir)
    with pytest.raises(MarketDataError) as err:
        provider.history("MSFT", date(2024, 1, 2), date(2024, 1, 5))
    assert err.value.kind == "network"


def test_bad_params_fail_before_any_request(yf_cache_dir: Path) -> None:
    adapter = YahooReplay()
    provider = _provider(adapter, yf_cache_dir)
    with pytest.raises(MarketDataError) as err:
        provider.history("AAPL", date(2024, 1, 2), date(2024, 1, 5), interval="7d")
    assert err.value.kind == "invalid_params" and "1wk" in err.value.reason
    with pytest.raises(MarketDataError) as err:
        provider.history("AAPL", date(2024, 2, 1), date(2024, 1, 1))
    assert err.value.kind == "invalid_params"
    assert adapter.requests == []


def test_fundamentals_are_normalised(yf_cache_dir: Path) -> None:
    provider = _provider(YahooReplay(), yf_cache_dir)
    data = provider.fundamentals("AAPL")
    assert [p.period_end for p in data.periods] == [date(2023, 9, 30), date(2022, 9, 30)]
    fy23 = data.periods[0]
    assert fy23.value("revenue") == 383_285e6
    assert fy23.value("net_income") == 96_995e6
    assert fy23.value("total_equity") == 62_146e6
    assert fy23.value("free_cash_flow") == 99_584e6
    assert fy23.value("eps_diluted") == 6.13
    with pytest.raises(MarketDataError) as err:
        provider.fundamentals("NOSUCHTICKER")
    assert err.value.kind == "no_data"


def test_rate_limiter_spaces_calls() -> None:
    now = [100.0]
    waited: list[float] = []

    def sleep(seconds: float) -> None:
        waited.append(seconds)
        now[0] += seconds

    limiter = RateLimiter(0.5, clock=lambda: now[0], sleep=sleep)
    limiter.wait()
    limiter.wait()
    now[0] += 0.2
    limiter.wait()
    assert waited == [0.5, pytest.approx(0.3)]


@pytest.fixture
def clean_yf_memory():
    """yfinance keeps past-range responses in a process-wide LRU cache: a damaged replay
    must neither see earlier responses nor leave its own for later tests."""
    from yfinance.data import YfData

    YfData.cache_get.cache_clear()
    yield YfData.cache_get.cache_clear
    YfData.cache_get.cache_clear()


@pytest.mark.parametrize("value", [None, 0.0, -1.0])
def test_bad_bars_from_yahoo_are_named_or_dropped_on_request(
    yf_cache_dir: Path, value, clean_yf_memory
) -> None:
    def provider(**kwargs):
        clean_yf_memory()
        return YFinanceProvider(
            replay_session(YahooReplay(damaged={"AAPL": {2: value}})),
            rate_limiter=RateLimiter(0.0),
            yf_cache_dir=yf_cache_dir,
            **kwargs,
        )

    with pytest.raises(MarketDataError) as err:
        provider().history("AAPL", date(2024, 1, 2), date(2024, 1, 9))
    assert err.value.kind == "bad_data" and "2024-01-04" in err.value.reason
    kept = provider(bad_bars="drop").history("AAPL", date(2024, 1, 2), date(2024, 1, 9))
    assert date(2024, 1, 4) not in set(kept.frame.index.date) and len(kept.frame) == 5
    assert "dropped 1 bad bar(s): 2024-01-04" in kept.provenance.note
