"""The Type Converter's conversions: pure functions `(value, options) -> value` raising NodeError with the reason."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Decimal, InvalidOperation
from typing import Any, Callable

from nodes._helpers import to_text
from nodeflow_app.contract import NodeError

_TRUE = frozenset({"true", "yes", "y", "on", "1"})
_FALSE = frozenset({"false", "no", "n", "off", "0"})
MAX_DIGITS = 4_300  # Python's own limit for turning a whole number into text and back


@dataclass(frozen=True, slots=True)
class Options:
    date_format: str = ""
    separator: str = ","
    pretty: bool = False


def to_integer(value: Any, options: Options) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not value.is_integer():
            raise NodeError(f"{_shown(value)} is not a whole number")
        return int(value)
    return _whole_number(value)


def _whole_number(value: Any) -> int:
    """Text as an exact whole number: through Decimal, not float, so "1790000000000000001" keeps its last digit."""
    text = _require_text(value, "an integer").strip().replace("_", "")
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise NodeError(f"cannot convert {_shown(value)} to an integer") from None
    if not number.is_finite() or number != number.to_integral_value():
        raise NodeError(f"{_shown(value)} is not a whole number")
    if number.adjusted() >= MAX_DIGITS:
        raise NodeError(f"{_shown(value)} has more than {MAX_DIGITS:,} digits")
    return int(number)


def to_float(value: Any, options: Options) -> float:
    if isinstance(value, bool):
        return float(value)
    try:
        number = float(value) if isinstance(value, (int, float)) else _parse_number(value, "a number")
    except OverflowError:  # a whole number past ~1.8e308
        number = math.inf
    if not math.isfinite(number):
        raise NodeError(f"{_shown(value)} is not a finite number")
    return number


def to_boolean(value: Any, options: Options) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    word = value.strip().casefold() if isinstance(value, str) else None
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise NodeError(f"cannot convert {_shown(value)} to a boolean: use true/false, yes/no, on/off or 1/0")


def parse_json(value: Any, options: Options) -> Any:
    text = _require_text(value, "JSON")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise NodeError(f"invalid JSON at line {error.lineno} column {error.colno} (position {error.pos}): "
                        f"{error.msg}") from None
    except RecursionError:
        raise NodeError("the JSON is nested too deeply to read") from None
    except ValueError:  # what JSONDecodeError leaves: a whole number Python refuses to read
        raise NodeError(f"cannot read the JSON: a number in it has more than {MAX_DIGITS:,} digits") from None


def to_json_text(value: Any, options: Options) -> str:
    try:
        if options.pretty:
            return json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise NodeError(f"cannot write {type(value).__name__} as JSON: {error}") from None


def join_list(value: Any, options: Options) -> str:
    if not isinstance(value, list):
        raise NodeError(f"cannot join {_shown(value)}: it is a {type(value).__name__}, not a list")
    return options.separator.join(to_text(item) for item in value)


def split_text(value: Any, options: Options) -> list[str]:
    text = _require_text(value, "a list")
    if not options.separator:
        raise NodeError("the separator is empty; give the text between the list items")
    return [] if not text.strip() else [part.strip() for part in text.split(options.separator)]


def parse_date(value: Any, options: Options) -> str:
    """Text read with the format (ISO 8601 without one) -> ISO 8601 text."""
    text = _require_text(value, "a date").strip()
    try:
        if options.date_format:
            return datetime.strptime(text, options.date_format).isoformat()
        return datetime.fromisoformat(text).isoformat()
    except ValueError as error:
        wanted = f"the format {options.date_format!r}" if options.date_format else "ISO 8601 (2024-05-31T14:30)"
        raise NodeError(f"cannot read {_shown(value)} as a date in {wanted}: {error}") from None


def format_date(value: Any, options: Options) -> str:
    """An ISO 8601 date text (or a Unix time in seconds) -> text in the format (ISO 8601 without one)."""
    moment = _moment(value)
    if not options.date_format:
        return moment.isoformat()
    try:
        return moment.strftime(options.date_format)
    except ValueError as error:
        raise NodeError(f"invalid date format {options.date_format!r}: {error}") from None


def _moment(value: Any) -> datetime | date:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            raise NodeError(f"{value} is out of range for a Unix time in seconds") from None
    text = _require_text(value, "a date").strip()
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise NodeError(f"{_shown(value)} is not an ISO 8601 date (2024-05-31 or 2024-05-31T14:30:00); "
                        "read other formats with 'Text to date' first") from None


def _parse_number(value: Any, wanted: str) -> float:
    text = _require_text(value, wanted).strip().replace("_", "")
    try:
        return float(text)
    except ValueError:
        raise NodeError(f"cannot convert {_shown(value)} to {wanted}") from None


def _require_text(value: Any, wanted: str) -> str:
    if isinstance(value, str):
        return value
    raise NodeError(f"cannot convert {_shown(value)} to {wanted}: it is a {_kind(value)}, not text")


def _kind(value: Any) -> str:
    return {bool: "boolean", int: "number", float: "number", list: "list", dict: "object",
            type(None): "null"}.get(type(value), type(value).__name__)


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else to_text(value)[:80] or "null"


CONVERSIONS: dict[str, Callable[[Any, Options], Any]] = {
    "to_integer": to_integer, "to_float": to_float, "to_boolean": to_boolean, "parse_json": parse_json,
    "to_json_text": to_json_text, "join_list": join_list, "split_text": split_text,
    "parse_date": parse_date, "format_date": format_date,
}
