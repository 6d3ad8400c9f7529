"""Database values as JSON, and JSON values as bind parameters.

Out: dates and times as ISO 8601 text, decimals as numbers when exact (else text), bytes as base64 text,
UUIDs as text, intervals as seconds, NaN and infinities as text. In: objects and lists as JSON text.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import math
import uuid
from typing import Any

from nodeflow_app.contract import NodeError


def to_json(value: Any) -> Any:
    """A value read from the database as a JSON-safe value."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, decimal.Decimal):
        return _decimal(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict):
        return {str(key): to_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json(item) for item in value]
    return str(value)


def _decimal(value: decimal.Decimal) -> int | float | str:
    if not value.is_finite():
        return str(value)
    if value == value.to_integral_value():
        return int(value)
    number = float(value)
    return number if decimal.Decimal(repr(number)) == value else str(value)  # never round silently


def to_bind(name: str, value: Any) -> Any:
    """A parameter's value as the driver takes it; objects and lists become JSON text."""
    if isinstance(value, (dict, list)):
        try:
            return json.dumps(value, ensure_ascii=False, allow_nan=False)
        except ValueError as error:
            raise NodeError(f"parameter {name!r} cannot be bound as JSON: {error}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise NodeError(f"parameter {name!r} is {value}, which no database column takes as a number")
    return value
