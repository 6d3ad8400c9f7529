"""Regular expressions with a time limit (SPEC 12), on the `regex` package: a runaway pattern fails its node.

Text Split and JSON Transform (JSONata's regex literals) compile through here. Stopgap until
nodes/_helpers.py offers the shared time-limited regex; then this module should go.
"""

from __future__ import annotations

from typing import Any, Callable

import regex

from nodeflow_app.contract import NodeError

TIME_LIMIT_S = 1.0


class TimedPattern:
    """A compiled pattern whose every search gives up after TIME_LIMIT_S (the interface JSONata's engines use)."""

    def __init__(self, source: str, compiled: regex.Pattern[str]) -> None:
        self.source = source
        self._compiled = compiled

    def search(self, text: str) -> Any:
        return self._timed(self._compiled.search, text)

    def finditer(self, text: str) -> list[Any]:
        return self._timed(lambda *args, **kw: list(self._compiled.finditer(*args, **kw)), text)

    def sub(self, replacement: Any, text: str, count: int = 0) -> str:
        return self._timed(self._compiled.sub, replacement, text, count)

    def split(self, text: str, maxsplit: int = 0) -> list[str]:
        return self._timed(self._compiled.split, text, maxsplit)

    def _timed(self, method: Callable[..., Any], *args: Any) -> Any:
        try:
            return method(*args, timeout=TIME_LIMIT_S)
        except TimeoutError:
            raise NodeError(f"regular expression {self.source!r} ran longer than {TIME_LIMIT_S:g} s "
                            "(it backtracks too much for this text); simplify it") from None


def compile_pattern(pattern: str, *, ignore_case: bool = False, multiline: bool = False) -> TimedPattern:
    """Compile `pattern`; a syntax error names the pattern and the position."""
    flags = (regex.IGNORECASE if ignore_case else 0) | (regex.MULTILINE if multiline else 0)
    try:
        return TimedPattern(pattern, regex.compile(pattern, flags | regex.VERSION0))
    except regex.error as error:
        raise NodeError(f"invalid regular expression {pattern!r}: {error}") from None
