"""A self-contained HTML page for a JSONL trace: ``agentsdk trace view run.jsonl``.

One file, no network: styles and a few lines of script are inline, and the images
the tools produced are embedded as data URLs (read from the paths in the trace's
``ImageProduced`` lines; a missing file is shown as missing). Each run of the trace
gets a timeline of its turns: the model request, the tool calls with their
durations, arguments and results, tokens and cost per turn, errors in red.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from ..tracing import read_trace

__all__ = ["render_html", "write_html"]

MAX_IMAGE_BYTES = 8_000_000
"""Images larger than this are linked by path instead of embedded."""


@dataclass
class _Call:
    call_id: str
    name: str
    arguments: Any
    start: float | None
    duration: float | None = None
    is_error: bool = False
    preview: str = ""
    images: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Turn:
    number: int
    model: str
    tier: str | None
    start: float | None
    answered: float | None = None
    text: str = ""
    calls: list[_Call] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    cost: float | None = None
    finish_reason: str | None = None


@dataclass
class _Run:
    run_id: str
    started: dict[str, Any] = field(default_factory=dict)
    turns: list[_Turn] = field(default_factory=list)
    end: dict[str, Any] | None = None
    late: list[dict[str, Any]] = field(default_factory=list)
    first_ts: float | None = None
    last_ts: float | None = None


def _runs(events: list[dict[str, Any]]) -> list[_Run]:
    """Group events by run (a trace file may hold many), in order of appearance."""
    runs: dict[str, _Run] = {}
    for e in events:
        run = runs.setdefault(str(e.get("run_id", "?")), _Run(str(e.get("run_id", "?"))))
        ts = e.get("ts") if isinstance(e.get("ts"), int | float) else None
        if ts is not None:
            run.first_ts = ts if run.first_ts is None else min(run.first_ts, ts)
            run.last_ts = ts if run.last_ts is None else max(run.last_ts, ts)
        kind = e.get("event")
        turn = run.turns[-1] if run.turns else None
        if turn is not None and turn.answered is None and kind not in ("TextDelta",):
            if kind != "ModelRequestStarted":
                turn.answered = ts
        if kind == "RunStarted":
            if run.started:  # a resumed run appends to the same id: keep the first prompt
                run.started.setdefault("resumed_at", ts)
            else:
                run.started = e
        elif kind == "ModelRequestStarted":
            run.turns.append(
                _Turn(int(e.get("turn", 0)), str(e.get("model", "")), e.get("tier"), ts)
            )
        elif kind == "TextDelta" and turn is not None:
            turn.text += str(e.get("text", ""))
        elif kind == "ToolCallStarted":
            if turn is None:  # a resumed run continuing a turn begun before
                turn = _Turn(int(e.get("turn", 0)), "(resumed)", None, ts)
                run.turns.append(turn)
            turn.calls.append(
                _Call(str(e.get("call_id")), str(e.get("name")), e.get("arguments"), ts)
            )
        elif kind in ("ToolCallFinished", "ImageProduced"):
            found = _find_call(run, str(e.get("call_id")))
            if found is None:
                continue
            if kind == "ImageProduced":
                found.images.append(e)
            else:
                found.duration = float(e.get("duration") or 0.0)
                found.is_error = bool(e.get("is_error"))
                found.preview = str(e.get("text") or e.get("preview", ""))  # text: all of it
        elif kind == "TurnFinished" and turn is not None:
            turn.usage = e.get("usage") or {}
            turn.cost = e.get("cost_usd")
            turn.finish_reason = e.get("finish_reason")
            turn.model = str(e.get("model") or turn.model)
        elif kind in ("RunFinished", "RunFailed", "RunPaused"):
            run.end = e
        elif kind == "ToolFinishedLate":
            run.late.append(e)
    return list(runs.values())


def _find_call(run: _Run, call_id: str) -> _Call | None:
    for turn in reversed(run.turns):
        for call in turn.calls:
            if call.call_id == call_id:
                return call
    return None


def _image(event: dict[str, Any], base: Path) -> str:
    path = Path(str(event.get("path", "")))
    if not path.is_absolute():
        path = base / path
    media = str(event.get("media_type") or "image/png")
    try:
        size = path.stat().st_size
        if size > MAX_IMAGE_BYTES:
            return f'<p class="missing">image too large to embed ({size:,} bytes): {escape(str(path))}</p>'
        data = base64.b64encode(path.read_bytes()).decode("ascii")
    except OSError:
        return f'<p class="missing">image not found: {escape(str(path))}</p>'
    return (
        f'<figure><img class="tool-image" alt="{escape(path.name)}" '
        f'src="data:{escape(media)};base64,{data}"><figcaption>{escape(path.name)}</figcaption></figure>'
    )


def _seconds(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def _bar(start: float | None, length: float | None, run: _Run, error: bool = False) -> str:
    """A bar on the run's timeline, placed by its start and length."""
    if start is None or run.first_ts is None or run.last_ts is None:
        return ""
    span = max(run.last_ts - run.first_ts, 1e-6)
    left = max(0.0, min(100.0, (start - run.first_ts) / span * 100))
    width = max(0.4, min(100.0 - left, (length or 0.0) / span * 100))
    cls = "bar error" if error else "bar"
    return f'<div class="track"><div class="{cls}" style="left:{left:.2f}%;width:{width:.2f}%"></div></div>'


def _json(value: Any) -> str:
    return escape(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def _result_text(call: _Call) -> str:
    if call.preview:
        return call.preview
    if call.images:
        return f"({len(call.images)} image{'s' if len(call.images) > 1 else ''}, below)"
    return "(no text)" if call.duration is not None else "(no result: the call did not finish)"


def _money(value: Any) -> str:
    return f"${value:.4f}" if isinstance(value, int | float) else "no price"


def _render_run(run: _Run, base: Path) -> str:
    s = run.started
    out = [f'<section class="run" data-run="{escape(run.run_id)}">']
    out.append(
        f"<h2>run {escape(run.run_id)}</h2><p class='meta'>agent <b>{escape(str(s.get('agent', '?')))}</b>"
        f" · model <b>{escape(str(s.get('model', '?')))}</b>"
        f" · tools {escape(', '.join(map(str, s.get('tools') or [])) or 'none')}</p>"
    )
    if s.get("prompt"):
        out.append(f'<div class="prompt"><b>prompt</b><pre>{escape(str(s["prompt"]))}</pre></div>')
    total_tokens = 0
    for turn in run.turns:
        request = (turn.answered - turn.start) if turn.answered and turn.start else None
        u = turn.usage
        total_tokens += int(u.get("input_tokens", 0) or 0) + int(u.get("output_tokens", 0) or 0)
        tier = f" ({escape(turn.tier)})" if turn.tier else ""
        out.append(f'<div class="turn" data-turn="{turn.number}">')
        out.append(
            f'<div class="row model"><span class="label">turn {turn.number} · model {escape(turn.model)}{tier}</span>'
            f'<span class="num">{_seconds(request)}</span>'
            f'<span class="num">in {u.get("input_tokens", "?")} · out {u.get("output_tokens", "?")} tokens</span>'
            f'<span class="num cost">{_money(turn.cost)}</span>{_bar(turn.start, request, run)}</div>'
        )
        if turn.text:
            out.append(f'<pre class="model-text">{escape(turn.text)}</pre>')
        for call in turn.calls:
            cls = "row call error" if call.is_error else "row call"
            status = (
                "error"
                if call.is_error
                else ("running / no result" if call.duration is None else "ok")
            )
            out.append(
                f'<details class="{cls}" data-call="{escape(call.call_id)}" open>'
                f'<summary><span class="label">{escape(call.name)}</span>'
                f'<span class="num">{_seconds(call.duration)}</span><span class="status">{status}</span>'
                f'<span class="id">{escape(call.call_id)}</span>{_bar(call.start, call.duration, run, call.is_error)}</summary>'
                f'<div class="io"><div><b>arguments</b><pre>{_json(call.arguments)}</pre></div>'
                f"<div><b>result</b><pre>{escape(_result_text(call))}</pre></div></div>"
            )
            out.extend(_image(img, base) for img in call.images)
            out.append("</details>")
        out.append("</div>")
    end = run.end
    if end is None:
        out.append(
            '<div class="end error">the trace stops here: the run did not finish (killed or still running)</div>'
        )
    elif end["event"] == "RunFailed":
        out.append(
            f'<div class="end error"><b>{escape(str(end.get("error_type")))}</b>: '
            f"<pre>{escape(str(end.get('message')))}</pre></div>"
        )
    elif end["event"] == "RunPaused":
        out.append('<div class="end paused">paused: waiting for approval</div>')
    else:
        output = end.get("output")
        shown = output if isinstance(output, str) else json.dumps(output, indent=2, default=str)
        usage = end.get("usage") or {}
        out.append(
            f'<div class="end ok"><b>answer</b> after {end.get("turns")} turns · '
            f"{usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out tokens · "
            f'<span class="cost">{_money(end.get("cost_usd"))}</span><pre>{escape(str(shown))}</pre></div>'
        )
    for late in run.late:
        out.append(
            f'<div class="end late">{escape(str(late.get("name")))} ({escape(str(late.get("call_id")))}) '
            f"returned {late.get('late_by', 0):.1f} s after its timeout</div>"
        )
    out.append("</section>")
    return "".join(out)


def render_html(trace: str | Path | list[dict[str, Any]], *, base: Path | None = None) -> str:
    """The viewer page for a trace file (or its events, from ``read_trace``).
    Relative image paths are read from ``base`` (default: the trace's folder)."""
    if isinstance(trace, list):
        events, title, where = trace, "trace", base or Path.cwd()
    else:
        path = Path(trace)
        events, title, where = read_trace(path), path.name, base or path.parent
    runs = _runs(events)
    calls = sum(len(t.calls) for r in runs for t in r.turns)
    errors = sum(c.is_error for r in runs for t in r.turns for c in t.calls)
    errors += sum(1 for r in runs if r.end is not None and r.end["event"] == "RunFailed")
    page = resources.files(__package__).joinpath("page.html").read_text(encoding="utf-8")
    summary = (
        f"{len(runs)} run(s) · {sum(len(r.turns) for r in runs)} turns · {calls} tool calls · "
        f'<span class="{"error" if errors else ""}">{errors} error(s)</span>'
    )
    body = "".join(_render_run(r, where) for r in runs) or "<p>this trace has no events</p>"
    return (
        page.replace("{{title}}", escape(title))
        .replace("{{summary}}", summary)
        .replace("{{body}}", body)
    )


def write_html(trace: str | Path, out: str | Path | None = None) -> Path:
    """Write the viewer page for ``trace``; returns its path (default: next to the
    trace, with ``.html`` for its suffix)."""
    src = Path(trace)
    if not src.is_file():
        raise FileNotFoundError(f"no trace file at {src}")
    target = Path(out) if out is not None else src.with_suffix(".html")
    target.write_text(render_html(src), encoding="utf-8")
    return target
