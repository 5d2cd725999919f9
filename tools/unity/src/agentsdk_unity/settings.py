"""Where the bridge is and how long to wait for it: explicit values, env vars, or the project's files."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from agentsdk.sandbox import pid_alive
from pydantic import BaseModel, SecretStr, ValidationError

BRIDGE_FOLDER = Path("Library") / "AgentSdkBridge"
BUSY_STATES = frozenset({"compiling", "reloading", "starting"})


class ConnectionFile(BaseModel):
    """``connection.json`` as the editor writes it."""

    host: str = "127.0.0.1"
    port: int
    token: str
    protocol: int = 1
    pid: int | None = None


class BridgeStatus(BaseModel):
    """``status.json``: what the editor is doing."""

    state: str
    pid: int | None = None
    updated_unix: float | None = None
    detail: str | None = None

    @property
    def busy(self) -> bool:
        """True while the editor compiles or reloads scripts (the bridge comes back by itself)."""
        return self.state in BUSY_STATES and (self.pid is None or pid_alive(self.pid))


class BridgeSettings(BaseModel):
    """How to reach the editor.

    Any field left empty is filled from the environment (``AGENTSDK_UNITY_PORT``,
    ``AGENTSDK_UNITY_TOKEN``, ``AGENTSDK_UNITY_BRIDGE_DIR``, ``AGENTSDK_UNITY_PROJECT``) and then
    from ``<project>/Library/AgentSdkBridge/connection.json``, which the editor package writes.
    The project defaults to the current directory.
    """

    port: int | None = None
    token: SecretStr | None = None
    bridge_dir: Path | None = None
    project_path: Path | None = None
    connect_timeout: float = 5.0
    request_timeout: float = 120.0
    busy_timeout: float = 180.0
    """How long to keep retrying while the editor reports compiling/reloading."""
    reconnect_timeout: float = 10.0
    """How long to retry a refused reconnect when there is no status file to consult."""
    max_frame_bytes: int = 256 * 1024 * 1024

    def folder(self) -> Path | None:
        """The bridge folder holding connection.json, status.json and the journal."""
        if self.bridge_dir is not None:
            return self.bridge_dir
        env_dir = os.environ.get("AGENTSDK_UNITY_BRIDGE_DIR")
        if env_dir:
            return Path(env_dir)
        project = self.project_path or Path(os.environ.get("AGENTSDK_UNITY_PROJECT") or Path.cwd())
        return project / BRIDGE_FOLDER

    def read_status(self) -> BridgeStatus | None:
        """The editor's status file, or None when there is none (or it is unreadable)."""
        folder = self.folder()
        if folder is None:
            return None
        try:
            return BridgeStatus.model_validate_json((folder / "status.json").read_bytes())
        except (OSError, ValidationError):
            return None

    def endpoint(self) -> tuple[int, str]:
        """Port and token, re-read each time: an editor restart may pick a new port."""
        port = self.port or _int_env("AGENTSDK_UNITY_PORT")
        token = (
            self.token.get_secret_value() if self.token else os.environ.get("AGENTSDK_UNITY_TOKEN")
        )
        if port is None or not token:
            folder = self.folder()
            path = folder / "connection.json" if folder else None
            found = _read_connection(path) if path else None
            if found is None:
                where = f" and found no {path}" if path else ""
                raise FileNotFoundError(
                    "No Unity bridge configured: set AGENTSDK_UNITY_PORT and AGENTSDK_UNITY_TOKEN, "
                    f"or AGENTSDK_UNITY_PROJECT to a project whose editor runs the agentsdk package{where}."
                )
            port = port or found.port
            token = token or found.token
        return port, token


def _int_env(name: str) -> int | None:
    value = os.environ.get(name)
    return int(value) if value else None


def _read_connection(path: Path) -> ConnectionFile | None:
    # The editor rewrites this file atomically; a torn read is retried once.
    for _ in range(2):
        try:
            return ConnectionFile.model_validate(json.loads(path.read_text("utf-8")))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, ValidationError):
            time.sleep(0.05)
    return None
