"""Stored runs shaped for the run history panel: short display strings only (no reflex; small state vars)."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from nodeflow_app.chat.adapter import approved_text
from nodeflow_app.store.encoding import storable_json

JSON_CHARS = 20_000  # per pretty JSON text in the panel; the database keeps the whole value


def run_row(run: dict[str, Any], now: float | None = None) -> dict[str, str]:
    """One line of the run list."""
    return {
        "id": run["id"],
        "trigger": run.get("trigger_name") or _trigger_name(run),
        "status": run["status"],
        "duration": duration_text(run.get("duration_ms")),
        "version": f"v{run.get('graph_version', 1)}",
        "started": ago(run["started_at"], now),
        "source": " · ".join(part for part in (run.get("started_by"), run.get("started_by_user")) if part),
        "error": run.get("error") or "",
    }


def approval_cards(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The paused nodes of a whole run (get_run) as approval cards: node_id, name, prompt, detail, options, and
    text: what is approved as text (a draft answer), as the chat's approval card shows it."""
    cards = []
    for node in run.get("nodes", ()):
        wait = node.get("wait")
        if node["status"] != "paused" or not wait:
            continue
        detail = wait.get("detail")
        cards.append({"node_id": node["node_id"], "name": node["node_name"], "prompt": str(wait.get("prompt") or ""),
                      "detail": detail if isinstance(detail, str) else pretty(detail) if detail else "",
                      "text": approved_text(detail),
                      "options": [str(o) for o in wait.get("options") or ["approve", "reject"]]})
    return cards


def _trigger_name(run: dict[str, Any]) -> str:
    """From a whole run (get_run): its trigger node's name."""
    return next((n["node_name"] for n in run.get("nodes", ()) if n["node_id"] == run.get("trigger_id")), "—")


def node_rows(run: dict[str, Any], pinned: set[str] | dict[str, Any]) -> list[dict[str, str]]:
    """The run's nodes in the order they ran, with inputs, outputs and error as pretty JSON."""
    return [{
        "node_id": node["node_id"],
        "name": node["node_name"],
        "type": node["node_type"],
        "status": node["status"],
        "duration": duration_text(node.get("duration_ms")),
        "cached": "cached" if node.get("cached") else "",
        "pinned": "pinned" if node["node_id"] in pinned else "",
        "inputs": pretty(node.get("inputs")),
        "outputs": pretty(node.get("outputs")),
        "error": node.get("error") or "",
    } for node in run["nodes"]]


def result_row(node: dict[str, Any], run: dict[str, Any], limit: int, now: float | None = None) -> dict[str, str]:
    """A node's record in a run as the inspector's "Output of the last run" shows it: status, when, how long, its
    output as JSON cut at `limit` characters (`cut` "yes" then; a lone `output` port shows just its value), and
    its whole error."""
    ports = {port: value for port, value in (node.get("outputs") or {}).items() if value is not None}
    value = ports["output"] if list(ports) == ["output"] else ports or None
    whole = pretty(value, limit=sys.maxsize)
    return {
        "run_id": run["id"],
        "status": node["status"],
        "started": ago(run["started_at"], now),
        "duration": duration_text(node.get("duration_ms")),
        "output": _cut(whole, limit),
        "cut": "yes" if len(whole) > limit else "",
        "error": (node.get("error") or "")[:JSON_CHARS],
    }


def canvas_steps(run: dict[str, Any]) -> list[dict[str, Any]]:
    """What RunViewState._show_nodes needs of a stored run: statuses, which ports got a value (no values), errors."""
    return [{"node_id": n["node_id"], "status": n["status"],
             "outputs": {port: 1 for port, value in (n.get("outputs") or {}).items() if value is not None},
             "error": n.get("error") or ""}
            for n in run["nodes"]]


def pretty(value: Any, limit: int = JSON_CHARS) -> str:
    if value is None:
        return ""
    # A lone surrogate (a payload's "\ud800") stays escaped: the page's websocket carries only UTF-8.
    text = storable_json(json.dumps(value, indent=2, ensure_ascii=False, default=str))
    return _cut(text, limit)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit:,} more characters)"


def duration_text(ms: float | None) -> str:
    if ms is None:
        return "—"
    if ms < 1:
        return "<1 ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(round(ms / 1000), 60)
    return f"{minutes} min {seconds} s"


def ago(timestamp: float, now: float | None = None) -> str:
    seconds = max(0.0, (now if now is not None else time.time()) - timestamp)
    if seconds < 10:
        return "just now"
    if seconds < 60:
        return f"{seconds:.0f} s ago"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min ago"
    if seconds < 86_400:
        return f"{seconds // 3600:.0f} h ago"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))
