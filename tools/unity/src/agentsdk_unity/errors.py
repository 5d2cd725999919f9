"""Exceptions raised by the Unity bridge client."""

from __future__ import annotations


class UnityBridgeError(Exception):
    """A command failed inside the editor; ``code`` is the bridge's typed error code."""

    def __init__(self, code: str, message: str, *, retryable: bool = False) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retryable = retryable


class BridgeUnavailableError(UnityBridgeError):
    """No editor is listening (or it stayed busy longer than the client was willing to wait)."""

    def __init__(self, message: str) -> None:
        super().__init__("unavailable", message)


class BridgeAuthError(UnityBridgeError):
    """The editor refused the hello line (wrong token or protocol)."""


class BridgeConnectionLost(Exception):
    """The connection dropped; the client reconnects and asks the journal (internal)."""


class BridgeTooManyConnectionsError(UnityBridgeError):
    """The editor is listening but already serves as many clients as it allows."""

    def __init__(self, message: str) -> None:
        super().__init__("too_many_connections", message, retryable=True)
