"""Which certificates https requests trust."""

from __future__ import annotations

import functools
import os
import ssl

__all__ = ["tls_context"]


@functools.cache
def tls_context() -> ssl.SSLContext:
    """Certificates to trust for https: ``SSL_CERT_FILE``/``SSL_CERT_DIR`` when set, else certifi's.

    What httpx does. aiohttp alone would use the system store, which is empty on some
    installs (python.org builds on macOS, slim containers). Cached: call
    ``tls_context.cache_clear()`` after changing those variables in a running program.
    """
    if os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context()  # OpenSSL reads both variables
    import certifi

    return ssl.create_default_context(cafile=certifi.where())
