"""Matplotlib (Agg) PNG charts: price with moving averages and drawdown; normalised comparison."""

from __future__ import annotations

import io
import textwrap
from typing import TYPE_CHECKING

import pandas as pd

from agentsdk_finance.indicators import sma
from agentsdk_finance.models import PriceHistory

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Figures are built with the object API on the Agg canvas, never pyplot: no global
# state, so charts can be drawn from worker threads. Matplotlib is imported when the
# first chart is drawn (~0.2 s that a run drawing none does not pay).


def _png(fig: Figure, dpi: int) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def _source_line(histories: list[PriceHistory]) -> str:
    sources = sorted({h.provenance.source for h in histories})
    return textwrap.fill("Source: " + "; ".join(sources), width=140)


def price_chart(
    history: PriceHistory, windows: tuple[int, ...] = (50, 200), dpi: int = 90
) -> bytes:
    """Price with simple moving averages (top) and drawdown from the running peak (bottom)."""
    from matplotlib.figure import Figure

    prices = history.price.dropna()
    fig = Figure(figsize=(8, 5))
    fig.subplots_adjust(left=0.09, right=0.98, top=0.93, bottom=0.1, hspace=0.08)
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    top.plot(prices.index, prices.to_numpy(), lw=1.1, label=f"{history.symbol} close")
    for w in windows:
        if len(prices) > w:
            top.plot(prices.index, sma(prices, w).to_numpy(), lw=0.9, label=f"SMA {w}")
    adj = "adjusted" if history.provenance.adjusted else "unadjusted"
    top.set_title(
        f"{history.symbol} {history.start}..{history.end} ({adj}, {history.provenance.currency})"
    )
    top.legend(loc="upper left", fontsize=8)
    top.grid(alpha=0.3)
    depth = prices / prices.cummax() - 1.0
    bottom.fill_between(depth.index, depth.to_numpy() * 100, 0, color="tab:red", alpha=0.4)
    bottom.set_ylabel("drawdown %")
    bottom.grid(alpha=0.3)
    fig.text(0.01, 0.005, _source_line([history]), fontsize=7, color="gray")
    return _png(fig, dpi)


def normalised(histories: list[PriceHistory]) -> pd.DataFrame:
    """Prices rebased to 100 at the first common date, one column per symbol."""
    frame = pd.concat({h.symbol: h.price for h in histories}, axis=1, join="inner").dropna()
    return frame / frame.iloc[0] * 100.0


def comparison_chart(histories: list[PriceHistory], dpi: int = 90) -> bytes:
    """Several symbols rebased to 100 on the first common date."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    frame = normalised(histories)
    fig = Figure(figsize=(8, 4.5))
    fig.subplots_adjust(left=0.09, right=0.98, top=0.92, bottom=0.14)
    ax = fig.subplots()
    for col in frame.columns:
        ax.plot(frame.index, frame[col].to_numpy(), lw=1.1, label=str(col))
    ax.set_yscale("log")
    # minor log ticks unlabelled: their text layout dominated the render time
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("growth of 100 (log scale)")
    first, last = frame.index[0].date(), frame.index[-1].date()
    ax.set_title(f"{', '.join(map(str, frame.columns))} rebased to 100, {first}..{last}")
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(alpha=0.3)
    fig.text(0.01, 0.005, _source_line(histories), fontsize=7, color="gray")
    return _png(fig, dpi)
