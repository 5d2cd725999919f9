"""``YFinanceProvider``: live Yahoo data through yfinance, with every failure classified.

yfinance hides most failures (it logs them and returns an empty frame). This provider
watches the HTTP responses of the session it passes to yfinance and yfinance's own
log records during a call, so an empty result becomes a ``MarketDataError`` whose
``kind`` says why: network, rate_limited, no_data, invalid_symbol or invalid_params.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from agentsdk_finance.bars import BadBars, clean_bars
from agentsdk_finance.errors import FailureKind, MarketDataError
from agentsdk_finance.fundamentals import fundamentals_from_yfinance_frames
from agentsdk_finance.models import Fundamentals, PriceHistory, Provenance
from agentsdk_finance.providers.base import check_request
from agentsdk_finance.sampledata import default_cache_dir

YAHOO_INTERVALS = (
    "1d",
    "5d",
    "1wk",
    "1mo",
    "3mo",
    "1h",
    "60m",
    "90m",
    "30m",
    "15m",
    "5m",
    "2m",
    "1m",
)
_NETWORK_HINTS = (
    "resolve",
    "dns",
    "connection",
    "timed out",
    "timeout",
    "failed to perform",
    "unreachable",
)
# yfinance keeps one process-wide session and cookie jar: serialise calls.
_YF_LOCK = threading.Lock()
T = TypeVar("T")


class RateLimiter:
    """Spaces calls at least ``min_interval`` seconds apart (thread-safe).

    Args:
        min_interval: seconds between two calls.
        clock: monotonic time source; injectable for tests.
        sleep: how to wait; injectable for tests.
    """

    def __init__(
        self,
        min_interval: float = 0.5,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.min_interval = min_interval
        self._clock = clock
        self._sleep = sleep
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        """Block until the next call is allowed."""
        with self._lock:
            now = self._clock()
            if now < self._next:
                self._sleep(self._next - now)
                now = self._next
            self._next = now + self.min_interval


@dataclass
class _CallObservation:
    """What happened on the wire and in yfinance's log during one call."""

    responses: list[tuple[str, int, str]] = field(default_factory=list)  # url, status, body head
    log_lines: list[str] = field(default_factory=list)

    def chart_error(self) -> tuple[str, str] | None:
        """(code, description) of the last Yahoo API error body seen, if any."""
        for url, _status, body in reversed(self.responses):
            if "/v8/finance/chart/" not in url and "quoteSummary" not in url:
                continue
            with contextlib.suppress(ValueError, AttributeError, TypeError):
                doc = json.loads(body)
                section = doc.get("chart") or doc.get("quoteSummary") or {}
                err = section.get("error")
                if err:
                    return str(err.get("code", "")), str(err.get("description", ""))
        return None


class _LogCollector(logging.Handler):
    def __init__(self, sink: list[str]) -> None:
        super().__init__(level=logging.ERROR)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self.sink.append(record.getMessage())


@contextlib.contextmanager
def _observe(session: Any) -> Iterator[_CallObservation]:
    seen = _CallObservation()

    def on_response(response: Any, *args: Any, **kwargs: Any) -> Any:
        body = (
            response.text[:2000] if response.status_code >= 400 or "chart" in response.url else ""
        )
        seen.responses.append((response.url, response.status_code, body))
        return response

    hooks = getattr(session, "hooks", None)
    if isinstance(hooks, dict):
        hooks.setdefault("response", []).append(on_response)
    yf_log = logging.getLogger("yfinance")
    collector = _LogCollector(seen.log_lines)
    yf_log.addHandler(collector)
    try:
        yield seen
    finally:
        yf_log.removeHandler(collector)
        if isinstance(hooks, dict) and on_response in hooks.get("response", []):
            hooks["response"].remove(on_response)


def _is_api(url: str) -> bool:
    return "/v8/finance/chart/" in url or "/quoteSummary/" in url


def classify_failure(
    symbol: str, seen: _CallObservation, exc: BaseException | None = None
) -> tuple[FailureKind, str]:
    """Decide why a yfinance call produced nothing; returns (kind, reason)."""
    text = f"{type(exc).__name__}: {exc}" if exc else ""
    statuses = [status for _, status, _ in seen.responses]
    if type(exc).__name__ == "YFRateLimitError" or (statuses and statuses[-1] == 429):
        return "rate_limited", "Yahoo answered HTTP 429 Too Many Requests"
    if type(exc).__name__ == "YFInvalidPeriodError":
        return "invalid_params", str(exc)
    error = seen.chart_error()
    if error:
        code, description = error
        if code.lower() == "not found":
            return "invalid_symbol", f"Yahoo does not know {symbol!r} ({description})"
        if "interval" in description.lower() or "invalid input" in description.lower():
            return "invalid_params", description
        return "no_data", description
    if any(status == 404 and _is_api(url) for url, status, _ in seen.responses):
        return "invalid_symbol", f"Yahoo does not know {symbol!r} (HTTP 404)"
    lowered = (text + " " + " ".join(seen.log_lines)).lower()
    if not seen.responses and (exc is not None or any(h in lowered for h in _NETWORK_HINTS)):
        return "network", (text or "; ".join(seen.log_lines) or "no response")[:300]
    if isinstance(exc, ValueError):
        return "invalid_params", str(exc)
    if exc is not None:
        return "network", text[:300]
    detail = "; ".join(seen.log_lines)[:300]
    return "no_data", f"Yahoo returned no rows{': ' + detail if detail else ''}"


class YFinanceProvider:
    """Live prices and statements from Yahoo Finance through yfinance.

    Args:
        session: a ``requests.Session`` (or curl_cffi session) handed to yfinance; mount
            an adapter on it to record or replay traffic. None: yfinance's default.
        rate_limiter: spacing between calls (default 0.5 s).
        max_retries: extra attempts after an HTTP 429.
        backoff: first retry delay in seconds, doubled each retry.
        sleep: how to wait between retries (injectable for tests).
        yf_cache_dir: where yfinance keeps its timezone/cookie cache (not ~/.cache).
        bad_bars: ``"error"`` (default): rows Yahoo sends with a missing, zero, negative
            or non-finite close are a ``bad_data`` error naming their dates; ``"drop"``:
            skip them and list them in the provenance note.
    """

    name = "yfinance"
    intervals: tuple[str, ...] = YAHOO_INTERVALS

    def __init__(
        self,
        session: Any = None,
        *,
        rate_limiter: RateLimiter | None = None,
        max_retries: int = 3,
        backoff: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        yf_cache_dir: str | Path | None = None,
        bad_bars: BadBars = "error",
    ) -> None:
        if bad_bars not in ("error", "drop"):
            raise ValueError(f"bad_bars must be 'error' or 'drop', not {bad_bars!r}")
        self.bad_bars: BadBars = bad_bars
        import yfinance as yf

        self._yf = yf
        self.session = session
        self.rate_limiter = rate_limiter or RateLimiter()
        self.max_retries = max_retries
        self.backoff = backoff
        self._sleep = sleep
        folder = Path(yf_cache_dir) if yf_cache_dir else default_cache_dir() / "yfinance"
        folder.mkdir(parents=True, exist_ok=True)
        yf.set_tz_cache_location(str(folder))
        self.attempts = 0

    def symbols(self) -> list[str]:
        """Yahoo has no offline list."""
        return []

    def cache_identity(self, symbol: str, kind: str = "history") -> str:
        """Yahoo's chart API as this provider asks it (unadjusted OHLC + adj close)."""
        return f"yfinance|auto_adjust=False|actions=False|bad_bars={self.bad_bars}"

    def _with_retries(self, symbol: str, fetch: Callable[[], T]) -> T:
        for attempt in range(self.max_retries + 1):
            self.rate_limiter.wait()
            self.attempts += 1
            try:
                return fetch()
            except MarketDataError as err:
                if err.kind != "rate_limited" or attempt == self.max_retries:
                    raise
                self._sleep(self.backoff * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def _ticker(self) -> Callable[[str], Any]:
        return lambda sym: self._yf.Ticker(sym, session=self.session)

    def history(
        self, symbol: str, start: date | None, end: date | None, interval: str = "1d"
    ) -> PriceHistory:
        """Bars for ``symbol`` in [start, end]; see ``MarketData.history``."""
        check_request(self.name, symbol, start, end, interval, self.intervals)
        sym = symbol.strip().upper()
        return self._with_retries(sym, lambda: self._history_once(sym, start, end, interval))

    def _history_once(
        self, sym: str, start: date | None, end: date | None, interval: str
    ) -> PriceHistory:
        kwargs: dict[str, Any] = {"interval": interval, "auto_adjust": False, "actions": False}
        if start or end:
            kwargs["start"] = (start or date(1970, 1, 2)).isoformat()
            # yfinance's end is exclusive
            kwargs["end"] = ((end or date.today()) + timedelta(days=1)).isoformat()
        else:
            kwargs["period"] = "max"
        with _YF_LOCK, _observe(self.session) as seen:
            ticker = self._ticker()(sym)
            try:
                raw = ticker.history(**kwargs)
            except Exception as exc:
                kind, reason = classify_failure(sym, seen, exc)
                raise MarketDataError(kind, reason, symbol=sym, provider=self.name) from exc
            if raw is None or raw.empty:
                kind, reason = classify_failure(sym, seen)
                raise MarketDataError(kind, reason, symbol=sym, provider=self.name)
            meta = ticker.history_metadata or {}
        rows = raw.rename_axis("date").reset_index()
        daily = interval in ("1d", "5d", "1wk", "1mo", "3mo")
        bars = clean_bars(
            rows[[c for c in rows.columns if str(c).lower() not in ("dividends", "stock splits")]],
            symbol=sym,
            provider=self.name,
            where=f"Yahoo's {interval} chart for {sym}",
            bad_bars=self.bad_bars,
            duplicates="last",  # Yahoo repeats the live bar; the last one is the newest
            first_line=None,
            keep_time=not daily,
        )
        frame = bars.frame
        first, last = frame.index[0].date(), frame.index[-1].date()
        prov = Provenance(
            source="Yahoo Finance chart API via yfinance",
            symbol=sym,
            period=f"{first}..{last}",
            as_of=last,
            currency=str(meta.get("currency") or "USD"),
            adjusted="adj_close" in frame.columns,
            note="; ".join(
                n
                for n in (
                    "returns use adj_close; OHLC unadjusted" if "adj_close" in frame else "",
                    bars.notes_between(first, last),
                )
                if n
            ),
        )
        return PriceHistory(symbol=sym, interval=interval, frame=frame, provenance=prov)

    def fundamentals(self, symbol: str) -> Fundamentals:
        """Annual income statement, balance sheet and cash flow, normalised."""
        sym = symbol.strip().upper()
        return self._with_retries(sym, lambda: self._fundamentals_once(sym))

    def _fundamentals_once(self, sym: str) -> Fundamentals:
        with _YF_LOCK, _observe(self.session) as seen:
            ticker = self._ticker()(sym)
            try:
                income = ticker.get_income_stmt(freq="yearly", pretty=False)
                balance = ticker.get_balance_sheet(freq="yearly", pretty=False)
                cash = ticker.get_cashflow(freq="yearly", pretty=False)
            except Exception as exc:
                kind, reason = classify_failure(sym, seen, exc)
                raise MarketDataError(kind, reason, symbol=sym, provider=self.name) from exc
        frames = [
            f if isinstance(f, pd.DataFrame) else pd.DataFrame() for f in (income, balance, cash)
        ]
        if all(f.empty for f in frames):
            kind, reason = classify_failure(sym, seen)
            if kind == "no_data":
                reason = "Yahoo returned no statements"
            raise MarketDataError(kind, reason, symbol=sym, provider=self.name)
        return fundamentals_from_yfinance_frames(sym, *frames)
