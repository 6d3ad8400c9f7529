"""Text Split: text into parts (separator, time-limited regex, lines, sentences), or a list joined into text."""

import re
from typing import Any

from nodes._helpers import MISSING, get_path, in_regex_thread, primary_text, to_text, unescape
from nodes.data._timed_regex import compile_pattern
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError

# Sentence ends: . ! ? … (a whole run of them), closing quotes or brackets, then whitespace. Linear: the
# possessive repeats never backtrack, and the lookbehind starts a match only at the run's first mark.
_SENTENCE_END = re.compile(r"""(?<![.!?…])[.!?…]++["'”’)\]]*+(?=\s)""")
_NEXT_CHARACTER = re.compile(r"\s*+(\S)")
_ABBREVIATIONS = frozenset({"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "e.g", "i.e", "cf", "no", "fig"})
_LONGEST_ABBREVIATION = max(map(len, _ABBREVIATIONS))


class TextSplitExecutor:
    node_type = "text-split"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        value, field = inputs.get("input"), data.get("field") or ""
        found = get_path(value, field) if field else value
        if found is MISSING:
            raise NodeError(f"nothing at field {field!r}")
        operation = data.get("operation") or "split"
        separator = unescape(to_text(data.get("separator")))
        if operation == "join":
            return ExecutionResult(outputs={"output": join(found, separator, field)})
        if operation != "split":
            raise NodeError(f"operation must be 'split' or 'join', got {operation!r}")
        text = _text(found, field)
        split_by, pattern = data.get("split_by") or "separator", to_text(data.get("pattern"))
        if split_by == "regex":  # a search may take its whole time limit: off the event loop, so other runs go on
            parts = await in_regex_thread(lambda _stopped: split(text, split_by, separator, pattern))
        else:
            parts = split(text, split_by, separator, pattern)
        if data.get("trim", True):
            parts = [part.strip() for part in parts]
        if data.get("remove_empty", True):
            parts = [part for part in parts if part]
        return ExecutionResult(outputs={"output": parts})


def split(text: str, split_by: str, separator: str, pattern: str) -> list[str]:
    if split_by == "separator":
        if not separator:
            raise NodeError("separator is empty; give the text that separates the parts")
        return text.split(separator)
    if split_by == "regex":
        if not pattern:
            raise NodeError("pattern is empty; give the regular expression that separates the parts")
        return _cut(text, compile_pattern(pattern).finditer(text))
    if split_by == "lines":
        return text.splitlines()
    if split_by == "sentences":
        return sentences(text)
    raise NodeError(f"split by must be separator, regex, lines or sentences, got {split_by!r}")


def sentences(text: str) -> list[str]:
    """Cut after . ! ? (with closing quotes) before whitespace, unless an abbreviation or lowercase follows.
    Each cut looks only near itself, so a book-sized text splits in linear time."""
    parts: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        word = _word_before(text, start, match.start())
        if word.casefold() in _ABBREVIATIONS or (len(word) == 1 and word.isupper()):
            continue  # "Dr. Who", "J. Smith"
        following = _NEXT_CHARACTER.match(text, end)
        if following and following.group(1).islower():
            continue  # "approx. three"
        parts.append(text[start:end])
        start = end
    parts.append(text[start:])
    return parts


def _cut(text: str, separators: list[Any]) -> list[str]:
    """The text between the separators' matches (a group in the pattern does not add its match as a part)."""
    parts, start = [], 0
    for separator in separators:
        parts.append(text[start:separator.start()])
        start = separator.end()
    parts.append(text[start:])
    return parts


def _word_before(text: str, start: int, stop: int) -> str:
    """The word that ends at `stop` (not before `start`); "" when it is longer than any abbreviation."""
    low = max(start, stop - _LONGEST_ABBREVIATION - 1)
    words = text[low:stop].rsplit(None, 1)
    if not words or (low > start and len(words[-1]) == stop - low):
        return ""
    return words[-1]


def join(found: Any, separator: str, field: str) -> str:
    if not isinstance(found, list):
        where = f"field {field!r}" if field else "the input (Field is empty)"
        raise NodeError(f"to join, {where} must be a list, not {type(found).__name__} {to_text(found)[:80]!r}")
    return separator.join(to_text(item) for item in found)


def _text(found: Any, field: str) -> str:
    if isinstance(found, str):
        return found
    if isinstance(found, dict) and not field:
        return primary_text(found)
    where = f"field {field!r}" if field else "the input (Field is empty)"
    raise NodeError(f"to split, {where} must be text, not {type(found).__name__} {to_text(found)[:80]!r}")


executor = TextSplitExecutor()
