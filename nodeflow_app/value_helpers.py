"""Small value helpers that node folders and the LLM helpers share (nodes._helpers re-exports them)."""

from __future__ import annotations

import math
from typing import Any


class _Missing:
    """The type of `MISSING`: a path that leads nowhere (distinct from a present `None`)."""

    _instance: "_Missing | None" = None

    def __new__(cls) -> "_Missing":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def to_number(value: Any) -> float | None:
    """A finite-or-infinite number from an int, float or numeric string; None otherwise (booleans too)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:  # past ~1.8e308: compares as the infinity of its sign
            return math.inf if value > 0 else -math.inf
    if isinstance(value, str):
        text = value.strip()
        # Text that cannot start a float() is refused without raising: a failed float() costs an
        # exception, and list nodes test every item ("open" == "closed" tries both as numbers).
        if not text or (text[0] not in _NUMBER_START and not text[0].isdigit()):
            return None
        try:
            number = float(text)
        except ValueError:
            return None
        return None if math.isnan(number) else number
    return None


_NUMBER_START = frozenset("+-.iInN")  # besides digits (any script): sign, point, inf / infinity, nan
