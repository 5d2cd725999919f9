"""A small OTLP/HTTP receiver on 127.0.0.1 for tests: it accepts what a collector
would (protobuf ``ExportTraceServiceRequest`` / ``ExportMetricsServiceRequest`` on
``/v1/traces`` and ``/v1/metrics``), checks a bearer token, and keeps the decoded
requests."""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2


class OTLPReceiver:
    """``with OTLPReceiver(token="t") as rx:`` then point an exporter at ``rx.endpoint``."""

    def __init__(self, token: str | None = None):
        self.token = token
        self.traces: list[Any] = []
        self.metrics: list[Any] = []
        self.rejected = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                if receiver.token is not None and (
                    self.headers.get("Authorization") != f"Bearer {receiver.token}"
                ):
                    with receiver._lock:
                        receiver.rejected += 1
                    self.send_response(401)
                    self.end_headers()
                    return
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path == "/v1/traces":
                    request: Any = trace_service_pb2.ExportTraceServiceRequest()
                    reply: Any = trace_service_pb2.ExportTraceServiceResponse()
                    bucket = receiver.traces
                elif self.path == "/v1/metrics":
                    request = metrics_service_pb2.ExportMetricsServiceRequest()
                    reply = metrics_service_pb2.ExportMetricsServiceResponse()
                    bucket = receiver.metrics
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                request.ParseFromString(body)
                with receiver._lock:
                    bucket.append(request)
                data = reply.SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        """The base URL, as ``OTEL_EXPORTER_OTLP_ENDPOINT`` takes it."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def spans(self) -> list[Any]:
        """Every span received, as protobuf ``Span`` messages."""
        with self._lock:
            return [
                span
                for req in self.traces
                for rs in req.resource_spans
                for ss in rs.scope_spans
                for span in ss.spans
            ]

    def metric_names(self) -> set[str]:
        with self._lock:
            return {
                m.name
                for req in self.metrics
                for rm in req.resource_metrics
                for sm in rm.scope_metrics
                for m in sm.metrics
            }

    def __enter__(self) -> OTLPReceiver:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def attributes(span: Any) -> dict[str, Any]:
    """A protobuf span's attributes as plain values."""
    out: dict[str, Any] = {}
    for kv in span.attributes:
        value = kv.value
        kind = value.WhichOneof("value")
        if kind == "array_value":
            out[kv.key] = [getattr(v, v.WhichOneof("value")) for v in value.array_value.values]
        else:
            out[kv.key] = getattr(value, kind) if kind else None
    return out
