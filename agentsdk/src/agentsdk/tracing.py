"""Write the event stream of a run as JSON lines, with secrets redacted.

``Agent(trace="run.jsonl")`` appends one JSON object per event, written to the
file the moment the event happens (one ``write`` call per line, no buffering),
so ``tail -f`` follows a run and a killed process leaves a valid trace up to its
last event. Each line has the event's fields, ``"event"`` (its type) and ``"ts"``
(Unix time); ``TurnFinished`` and ``RunFinished`` lines carry ``cost_usd``.

When ``opentelemetry-api`` is installed and a tracer or meter provider is
configured, every run also becomes GenAI spans and metrics (``agentsdk.otel``),
with or without ``trace=``.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .events import Event, RunFinished, TurnFinished, event_to_dict
from .pricing import cost_of, turn_cost

if TYPE_CHECKING:  # pragma: no cover
    from .agent import Agent
    from .loop import RunConfig

__all__ = [
    "REDACTED",
    "JsonlTracer",
    "Observer",
    "Redactor",
    "TraceError",
    "observe_run",
    "read_trace",
    "redact",
    "secret_key",
]

REDACTED = "[REDACTED]"

# Key names are split into words, so `input_tokens` ("tokens") is a count and
# `auth_token` ("token") a secret.
_SECRET_WORDS = frozenset(
    {
        "secret",
        "secrets",
        "password",
        "passwd",
        "passphrase",
        "credential",
        "credentials",
        "authorization",
        "cookie",
        "apikey",
        "token",
        "auth",
        "pat",
    }
)
_SECRET_PAIRS = frozenset(
    {("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key")}
)
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")

# (pattern, lowercase substrings one of which any match contains): a pattern only
# runs on text that has a trigger, so ordinary text costs a few substring checks.
_SECRET_TEXT = [
    # API keys of OpenAI (sk-..., sk-proj-...) and Anthropic (sk-ant-api03-...)
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{20,}"), ("sk-",)),
    # AWS access key ids
    (re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"), ("akia", "asia", "abia", "acca")),
    # GitHub tokens (classic and fine-grained)
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"), ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}\b"), ("github_pat_",)),
    # Slack, Google API, Hugging Face tokens
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"), ("xox",)),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), ("aiza",)),
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"), ("hf_",)),
    # JSON web tokens
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), ("eyj",)),
    # PEM private keys
    (
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
        ("private key-----",),
    ),
]
# Replace only a group, keeping the words around the secret readable.
_SECRET_GROUPS = [
    (re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/=\-]{8,})"), ("bearer",)),
    (re.compile(r"(?i)(\bauthorization\s*[:=]\s*basic\s+)(\S+)"), ("basic",)),
    # user:password@ in a URL
    (re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@]+:)([^\s@/]+)(?=@)"), ("://",)),
    # password=..., api_key: ..., aws_secret_access_key = ... in text, code and query strings
    (
        re.compile(
            r"(?i)((?<![A-Za-z])(?:password|passwd|secret|api[_\-]?key|access[_\-]?key|"
            r"secret[_\-]?access[_\-]?key|auth[_\-]?token|access[_\-]?token|token)"
            r"[\"']?\s*[:=]\s*[\"']?)([^\s\"'&,;]{3,})"
        ),
        ("pass", "secret", "key", "token"),
    ),
]
_TRIGGER = re.compile(
    "|".join(re.escape(t) for _, ts in (*_SECRET_TEXT, *_SECRET_GROUPS) for t in ts), re.I
)

_SECRET_ENV_NAMES: set[str] = set()
_SECRET_LITERALS: set[str] = set()


def redact(*secrets: str, env: Iterable[str] = ()) -> None:
    """Hide these strings, and the values of these environment variables, in every
    trace and span from now on (names that look secret, ``*_API_KEY``, ``*_TOKEN``,
    ``*PASSWORD*`` ..., are hidden without this)."""
    _SECRET_LITERALS.update(s for s in secrets if s)
    _SECRET_ENV_NAMES.update(env)


def _keep_prefix(match: re.Match[str]) -> str:
    return match.group(1) + REDACTED


@functools.lru_cache(maxsize=4096)
def secret_key(key: str) -> bool:
    """True when a mapping key names a secret (``api_key``, ``Authorization``,
    ``auth_token``), and not for counts or ids (``input_tokens``, ``token_id``)."""
    words = [w.lower() for w in _WORD.findall(key)]
    if not words or words[-1] in ("id", "ids", "count", "counts", "type", "name"):
        return False
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words))


class Redactor:
    """Removes secrets from JSON-ready data: string values under secret-looking keys,
    known key and token shapes in any text, and the values of secret-looking (or
    named) environment variables. Numbers and booleans are never touched, so token
    counts, durations and ids survive.

    Args:
        extra_secrets: Literal strings to remove wherever they appear.
        env: Names of further environment variables whose values are secrets.
    """

    def __init__(self, extra_secrets: Iterable[str] = (), env: Iterable[str] = ()):
        named = set(env) | _SECRET_ENV_NAMES
        values = [
            v
            for k, v in os.environ.items()
            if (k in named or secret_key(k)) and len(v) >= 8 and not v.isdigit()
        ]
        values += [s for s in (*extra_secrets, *_SECRET_LITERALS) if s]
        self._literals = sorted(set(values), key=len, reverse=True)

    def text(self, value: str) -> str:
        """``value`` with every secret replaced."""
        for secret in self._literals:
            if secret in value:
                value = value.replace(secret, REDACTED)
        if len(value) < 6 or not _TRIGGER.search(value):
            return value  # the common case: one scan, nothing that looks like a secret
        low = value.lower()
        for pattern, triggers in _SECRET_TEXT:
            if any(t in low for t in triggers):
                value = pattern.sub(REDACTED, value)
        for pattern, triggers in _SECRET_GROUPS:
            if any(t in low for t in triggers):
                value = pattern.sub(_keep_prefix, value)
        return value

    def data(self, value: Any, *, hide: bool = False) -> Any:
        """A copy of JSON-ready ``value`` with secrets replaced (``hide``: every
        string in it, as under a secret key)."""
        if isinstance(value, str):
            if not hide:
                return self.text(value)
            if len(value) >= 6 and value not in self._literals:
                # a secret given as an argument is hidden wherever it shows up later
                self._literals = sorted([*self._literals, value], key=len, reverse=True)
            return REDACTED if value else value
        if isinstance(value, dict):
            return {
                k: self.data(v, hide=hide or (isinstance(k, str) and secret_key(k)))
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.data(v, hide=hide) for v in value]
        return value


class Observer(Protocol):
    """Something that watches a run's events: the JSONL trace, OpenTelemetry spans."""

    def write(self, event: Event) -> None:
        """Take one event, as it happens."""

    def close(self) -> None:
        """The run is over (also after a crash or cancellation)."""


class JsonlTracer:
    """Appends redacted events to a JSONL file, one ``write`` per event."""

    def __init__(self, path: str | Path, redactor: Redactor | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.redactor = redactor or Redactor()
        # O_APPEND and one os.write per line: lines of concurrent runs never interleave,
        # and nothing waits in a userspace buffer when the process dies.
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, event: Event) -> None:
        """Record one event."""
        if self._fd is None:
            raise ValueError(f"the trace {self.path} is closed")
        data = event_to_dict(event)
        data["ts"] = round(time.time(), 6)  # when it happened: the viewer's timeline
        if isinstance(event, TurnFinished):
            data["cost_usd"] = turn_cost(event.model, event.usage)
        elif isinstance(event, RunFinished) and event.result is not None:
            data["cost_usd"] = cost_of(event.result.usage_by_model).usd
        line = json.dumps(self.redactor.data(data), ensure_ascii=False) + "\n"
        os.write(self._fd, line.encode("utf-8"))

    def close(self) -> None:
        """Close the file (every line is already in it)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


class TraceError(ValueError):
    """A trace file has a line that is not a JSON event (other than a torn last line)."""


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """The events of a JSONL trace, as dictionaries. A last line cut off by a killed
    process is left out; any other unreadable line raises ``TraceError``."""
    with Path(path).open(encoding="utf-8") as f:
        lines = f.read().split("\n")
    events: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError as exc:
            if number == len(lines):  # no newline after it: the writer died mid-line
                break
            raise TraceError(f"{path}:{number}: not a JSON event ({exc})") from None
        if not isinstance(event, dict) or "event" not in event:
            raise TraceError(f'{path}:{number}: not an event (no "event" key)')
        events.append(event)
    return events


class _Observers:
    """Several observers as one (the OpenTelemetry one never raises; a trace file
    that cannot be written does, as the user asked for it)."""

    def __init__(self, observers: list[Observer]):
        self.observers = observers

    def write(self, event: Event) -> None:
        for observer in self.observers:
            observer.write(event)

    def close(self) -> None:
        for observer in self.observers:
            observer.close()


def observe_run(agent: Agent, cfg: RunConfig) -> Observer | None:
    """The observers of one run: the agent's JSONL trace, and OpenTelemetry spans and
    metrics when a provider is configured. ``None`` when nobody watches."""
    found: list[Observer] = []
    if agent.trace is not None:
        found.append(JsonlTracer(agent.trace))
    from .otel import GenAIObserver

    spans = GenAIObserver.for_run(agent, cfg)
    if spans is not None:
        found.append(spans)
    if not found:
        return None
    return found[0] if len(found) == 1 else _Observers(found)
