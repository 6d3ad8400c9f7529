"""Reads a run's server-sent events (docs/api.md, "The event stream") as the tests of its two routes see them."""

from __future__ import annotations

import json


def sse(text: str) -> list[tuple[str, dict]]:
    """(event name, data) of each message, comments (keep-alive) left out."""
    messages = []
    for block in text.strip().split("\n\n"):
        if block.startswith(":"):
            continue
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        messages.append((lines["event"], json.loads(lines["data"])))
    return messages
