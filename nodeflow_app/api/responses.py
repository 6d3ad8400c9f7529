"""JSON answers any bytes can carry. Run values come from outside and may hold a lone surrogate ("\\ud800" is
valid JSON, but UTF-8 cannot encode it); written as UTF-8 it made the answer a 500, so the API writes JSON
escaped to ASCII, where it reads back as the very value that was sent.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import JSONResponse

_encode = json.JSONEncoder(ensure_ascii=True, allow_nan=False, default=str).encode


class AsciiJSONResponse(JSONResponse):
    """The API's response class (every route's default): JSON escaped to ASCII."""

    def render(self, content: Any) -> bytes:
        return _encode(content).encode("ascii")


def event_data(value: Any) -> str:
    """`value` as one line of a server-sent event's `data:`, escaped to ASCII like every API answer."""
    return _encode(value)

