"""NodeFlow's own agent tools. Agno describes each to the model from its signature and docstring.

A tool raises ValueError with a plain message when it cannot answer; the model sees that message.
"""

from __future__ import annotations

import ast
import operator
from datetime import datetime
from typing import Any, Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from nodeflow_app.net.guard import check_url, guarded_client

# 1. calculator ----------------------------------------------------------------------------------------

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
MAX_EXPRESSION = 1000
MAX_BITS = 13_000  # ~3,900 digits: 2**10**9 would hang the server; Python prints at most 4,300 digits


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression and return the result.

    Supports numbers, + - * / // % ** and parentheses, e.g. "(2 + 3) * 4 ** 2".

    Args:
        expression: the arithmetic expression to evaluate.
    """
    if len(expression) > MAX_EXPRESSION:
        raise ValueError(f"the expression is longer than {MAX_EXPRESSION} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ValueError(f"not an arithmetic expression: {expression[:80]!r}") from None
    try:
        value = _evaluate(tree.body)
        if isinstance(value, complex):
            raise ValueError("the result is not a real number")
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise OverflowError
            return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
        if value.bit_length() > MAX_BITS:
            raise OverflowError
        return str(value)
    except ZeroDivisionError:
        raise ValueError("division by zero") from None
    except OverflowError:
        raise ValueError("the result is too large") from None
    except RecursionError:
        raise ValueError("the expression is nested too deeply") from None


def _evaluate(node: ast.AST) -> int | float:
    # Whitelist: anything else (names, calls, attributes, strings) is refused, so nothing can run code.
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and isinstance(left, int) and isinstance(right, int) and (
                max(left.bit_length(), 1) * abs(right) > MAX_BITS):
            raise OverflowError
        return _BINARY[type(node.op)](left, right)
    raise ValueError("only numbers, + - * / // % ** and parentheses are allowed")


# 2. current_datetime ---------------------------------------------------------------------------------

def current_datetime(timezone: str = "UTC") -> str:
    """Return the current date and time (ISO 8601) and the weekday in a time zone.

    Args:
        timezone: an IANA time zone name such as "UTC", "Europe/Paris" or "America/New_York".
    """
    try:
        zone = ZoneInfo((timezone or "UTC").strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {timezone!r}; use an IANA name such as Europe/Paris") from None
    now = datetime.now(zone)
    return f"{now.isoformat(timespec='seconds')} ({now.strftime('%A')}, {zone.key})"


# 3. http_get -------------------------------------------------------------------------------------------

MAX_TEXT_BYTES = 32 * 1024
MAX_REDIRECTS = 5
TIMEOUT_SECONDS = 10.0
_TEXTUAL = ("text/", "json", "xml", "javascript", "yaml", "csv")


async def http_get(url: str) -> str:
    """Fetch a public web page or API with HTTP GET; returns the status and the first 32 KB of the text.

    Args:
        url: an http:// or https:// URL on the public internet.
    """
    import httpx

    # The client checks each address again when it connects (a name that resolves differently the second time).
    async with guarded_client(timeout=httpx.Timeout(TIMEOUT_SECONDS, connect=5.0), follow_redirects=False,
                              headers={"User-Agent": "NodeFlow-http_get/1"}) as client:
        for _ in range(MAX_REDIRECTS + 1):
            await check_url(url)  # every hop: a public page must not redirect to an internal one
            try:
                async with client.stream("GET", url) as response:
                    if response.is_redirect and "location" in response.headers:
                        url = str(response.url.join(response.headers["location"]))
                        continue
                    return await _describe(response)
            except httpx.HTTPError as error:
                raise ValueError(f"GET {url} failed: {error or type(error).__name__}") from None
    raise ValueError(f"more than {MAX_REDIRECTS} redirects")


async def _describe(response: Any) -> str:
    kind = response.headers.get("content-type", "")
    head = f"HTTP {response.status_code} {response.reason_phrase}\ncontent-type: {kind or 'unknown'}\n\n"
    if kind and not any(marker in kind.lower() for marker in _TEXTUAL):
        return head + f"[{kind} content not shown]"
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > MAX_TEXT_BYTES:
            break
    text = bytes(body[:MAX_TEXT_BYTES]).decode(response.encoding or "utf-8", errors="replace")
    return head + text + (f"\n[truncated at {MAX_TEXT_BYTES // 1024} KB]" if len(body) > MAX_TEXT_BYTES else "")
