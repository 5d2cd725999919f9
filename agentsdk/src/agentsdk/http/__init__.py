"""The HTTP layer under the model connectors: one POST, answered whole or as a stream of lines.

Small on purpose: a connector needs a pooled POST, a reply it can read two ways, and two
kinds of failure it can act on, never a library's own exception types::

    from agentsdk.http import CannotSend, HttpClient, TransportFailure

    client = HttpClient(timeout=120.0)            # aiohttp: pip install 'agentsdk[http]'
    reply = await client.post(url, body, {"Content-Type": "application/json"})
    if reply.ok:
        data = json.loads(reply.body)
    reply = await client.post(url, body, headers, stream=True)
    try:
        async for line in reply.lines():          # server-sent events, say
            ...
    finally:
        await reply.aclose()
    await client.aclose()

* ``TransportFailure``: connect, read and write errors, bodies and streams cut short, a server
  silent past the read timeout. Worth another attempt; ``dropped`` (closed before answering,
  most often a stale pooled connection) is worth one at once.
* ``CannotSend``: a malformed URL or header, an untrusted TLS certificate, a pool closed
  under the request. Retrying won't help.

aiohttp does the work by default (imported only when a client first POSTs; the core
installs without it). ``HttpClient(transport=...)`` runs any ``httpx.AsyncBaseTransport``
instead (``httpx.MockTransport`` in tests). Proxies come from the environment
(``HTTPS_PROXY``, ``NO_PROXY``...; loopback is never proxied); https trusts
``SSL_CERT_FILE``/``SSL_CERT_DIR`` when set, else certifi's bundle. Redirects are not followed.
"""

from ._client import HttpClient
from ._reply import CONNECT_TIMEOUT, MAX_CONNECTIONS, CannotSend, Reply, TransportFailure
from ._tls import tls_context

__all__ = [
    "CONNECT_TIMEOUT",
    "MAX_CONNECTIONS",
    "CannotSend",
    "HttpClient",
    "Reply",
    "TransportFailure",
    "tls_context",
]
