"""A requests transport adapter that answers like Yahoo Finance from recorded fixtures.

The fixtures in ``fixtures/yahoo`` are written by hand in the shape of Yahoo's chart
API v8, quoteSummary and fundamentals-timeseries responses. ``YahooReplay`` serves them
through ``requests.Session.mount`` so yfinance runs its real code path offline.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import requests
from requests.adapters import BaseAdapter
from requests.models import PreparedRequest, Response
from requests.structures import CaseInsensitiveDict

FIXTURES = Path(__file__).parent / "fixtures" / "yahoo"


def _load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


class YahooReplay(BaseAdapter):
    """Serves recorded Yahoo responses; ``script`` forces statuses for chosen requests.

    Args:
        known: symbols that have a ``chart_<SYM>.json`` fixture.
        history_statuses: per symbol, statuses to return (in order) for history
            requests (those with period1/period2) before serving the fixture.
        empty_history: symbols whose history requests return a valid but empty chart.
        damaged: per symbol, {bar position: value} written over the close and adjusted
            close of the recorded chart (None is Yahoo's null), to serve bad bars.
    """

    def __init__(
        self,
        *,
        history_statuses: dict[str, list[int]] | None = None,
        empty_history: set[str] | None = None,
        damaged: dict[str, dict[int, float | None]] | None = None,
    ) -> None:
        super().__init__()
        self.damaged = damaged or {}
        self.history_statuses = defaultdict(list, history_statuses or {})
        self.empty_history = empty_history or set()
        self.requests: list[str] = []

    def close(self) -> None:
        """Nothing to release."""

    def send(self, request: PreparedRequest, **kwargs: object) -> Response:  # type: ignore[override]
        url = request.url or ""
        self.requests.append(url)
        parts = urlsplit(url)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        path = parts.path
        if parts.hostname == "fc.yahoo.com":
            return self._reply(request, 404, "text/html", b"<html>not found</html>")
        if path.endswith("/v1/test/getcrumb"):
            return self._reply(request, 200, "text/plain", b"replayCrumb123")
        if "/v8/finance/chart/" in path:
            return self._chart(request, path.rsplit("/", 1)[-1], query)
        if "/v10/finance/quoteSummary/" in path:
            sym = path.rsplit("/", 1)[-1]
            body = json.dumps(_load("quote_summary_not_found.json")).replace("{symbol}", sym)
            return self._reply(request, 404, "application/json", body.encode())
        if "/fundamentals-timeseries/" in path:
            return self._timeseries(request, query)
        return self._reply(request, 404, "text/html", b"<html>not recorded</html>")

    def _chart(self, request: PreparedRequest, sym: str, query: dict[str, str]) -> Response:
        fixture = FIXTURES / f"chart_{sym}.json"
        if not fixture.exists():
            body = json.dumps(_load("chart_not_found.json")).encode()
            return self._reply(request, 404, "application/json", body)
        is_history = "period1" in query
        if is_history and self.history_statuses[sym]:
            status = self.history_statuses[sym].pop(0)
            return self._reply(request, status, "text/plain", b"Too Many Requests\r\n")
        doc = json.loads(fixture.read_text())
        result = doc["chart"]["result"][0]
        for i, value in self.damaged.get(sym, {}).items():
            result["indicators"]["quote"][0]["close"][i] = value
            result["indicators"]["adjclose"][0]["adjclose"][i] = value
        if is_history:
            lo, hi = int(query["period1"]), int(query["period2"])
            keep = [i for i, t in enumerate(result["timestamp"]) if lo <= t < hi]
            if sym in self.empty_history:
                keep = []
            if keep:
                result["timestamp"] = [result["timestamp"][i] for i in keep]
                for block in (
                    result["indicators"]["quote"][0],
                    result["indicators"]["adjclose"][0],
                ):
                    for k, values in block.items():
                        block[k] = [values[i] for i in keep]
            else:
                # Yahoo's shape for a valid symbol with no bars in the range
                result.pop("timestamp", None)
                result["indicators"] = {"quote": [{}], "adjclose": [{}]}
        return self._reply(request, 200, "application/json", json.dumps(doc).encode())

    def _timeseries(self, request: PreparedRequest, query: dict[str, str]) -> Response:
        sym = query.get("symbol", "")
        fixture = FIXTURES / f"timeseries_{sym}_annual.json"
        wanted = set(query.get("type", "").split(","))
        if not fixture.exists():
            return self._reply(
                request,
                200,
                "application/json",
                json.dumps({"timeseries": {"result": [], "error": None}}).encode(),
            )
        doc = json.loads(fixture.read_text())
        results = []
        for name in sorted(wanted):
            match = [r for r in doc["timeseries"]["result"] if r["meta"]["type"] == [name]]
            # Yahoo lists a requested type it has no data for with its meta only
            results.extend(match or [{"meta": {"symbol": [sym], "type": [name]}}])
        body = {"timeseries": {"result": results, "error": None}}
        return self._reply(request, 200, "application/json", json.dumps(body).encode())

    @staticmethod
    def _reply(request: PreparedRequest, status: int, ctype: str, body: bytes) -> Response:
        response = Response()
        response.status_code = status
        response._content = body
        response.headers = CaseInsensitiveDict({"Content-Type": ctype})
        response.url = request.url or ""
        response.request = request
        response.encoding = "utf-8"
        return response


def replay_session(adapter: YahooReplay) -> requests.Session:
    """A session whose every https request is answered by ``adapter``."""
    session = requests.Session()
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session
