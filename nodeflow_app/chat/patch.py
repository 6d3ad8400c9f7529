"""A message's block list that records its own changes as patch operations, and the function that applies them.

Streamed text is kept as pending parts and joined into its block only when someone looks, so appending
a token costs O(1). `flush()` returns what changed since the previous flush:
- `{"op": "set", "path": [i] | [i, j], "block": {...}}`: a new or changed block; `i` indexes the message's
  blocks, `j` a member_run's nested `blocks`; an index equal to the list's length appends;
- `{"op": "append", "path": [...], "text": "..."}`: text appended to a text or reasoning block.
Applying every flush in order to an empty list gives the message (`apply_patch`).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from nodeflow_app.store.encoding import shown_surrogates

Path = tuple[int, ...]


class BlockList:
    """Blocks as plain dicts; every change goes through `add`, `set` or `append_text` so it can be flushed."""

    def __init__(self, blocks: list[dict[str, Any]] | None = None):
        self.blocks: list[dict[str, Any]] = copy.deepcopy(blocks or [])
        self._unfolded: dict[Path, list[str]] = {}  # text not yet joined into its block
        self._appended: dict[Path, list[str]] = {}  # text appended since the last flush
        self._changed: dict[Path, None] = {}        # blocks added or changed since the last flush (ordered)

    @property
    def dirty(self) -> bool:
        return bool(self._changed or self._appended)

    def at(self, path: Path) -> dict[str, Any]:
        block = self.blocks[path[0]]
        return block if len(path) == 1 else block["blocks"][path[1]]

    def add(self, container: Path, block: dict[str, Any]) -> Path:
        """Append `block` to the message (container `()`) or to the member_run at `container`; its path."""
        target = self.blocks if not container else self.at(container)["blocks"]
        target.append(shown_surrogates(block))  # the page's websocket carries only UTF-8
        path = container + (len(target) - 1,)
        self._changed[path] = None
        return path

    def set(self, path: Path, **fields: Any) -> None:
        self.at(path).update(shown_surrogates(fields))
        self._changed[path] = None

    def append_text(self, path: Path, text: str) -> None:
        text = shown_surrogates(text)
        for pending in (self._unfolded, self._appended):
            parts = pending.get(path)
            if parts is None:
                pending[path] = [text]
            else:
                parts.append(text)

    def snapshot(self) -> list[dict[str, Any]]:
        """The whole list as plain dicts (a copy)."""
        self._fold()
        return copy.deepcopy(self.blocks)

    def to_json(self) -> str:
        self._fold()
        return json.dumps(self.blocks, default=str, ensure_ascii=False)

    def flush(self) -> list[dict[str, Any]]:
        """Patch operations for everything that changed since the previous flush."""
        self._fold()
        ops: list[dict[str, Any]] = []
        sent: set[Path] = set()
        for path in sorted(self._changed):  # parents before their nested blocks, indexes in order
            if len(path) > 1 and path[:1] in sent:  # inside a member_run sent whole
                continue
            sent.add(path)
            ops.append({"op": "set", "path": list(path), "block": copy.deepcopy(self.at(path))})
        for path, parts in self._appended.items():
            if path not in sent and path[:1] not in sent:
                ops.append({"op": "append", "path": list(path), "text": "".join(parts)})
        self._changed.clear()
        self._appended.clear()
        return ops

    def _fold(self) -> None:
        for path, parts in self._unfolded.items():
            self.at(path)["text"] += "".join(parts)
        self._unfolded.clear()


def apply_patch(blocks: list[dict[str, Any]], ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`blocks` (changed in place and returned) with `ops` from `BlockList.flush` applied."""
    for op in ops:
        *parents, index = op["path"]
        target = blocks if not parents else blocks[parents[0]]["blocks"]
        if op["op"] == "append":
            target[index]["text"] += op["text"]
        elif index == len(target):
            target.append(copy.deepcopy(op["block"]))
        else:
            target[index] = copy.deepcopy(op["block"])
    return blocks


def wire_ops(ops: list[dict[str, Any]]) -> list[list[Any]]:
    """The ops as the browser gets them: `[path, text]` appends, `[path, block]` sets (a third of the bytes
    of a small batch is the op's keys otherwise)."""
    return [[op["path"], op["text"] if op["op"] == "append" else op["block"]] for op in ops]


def step_statuses(ops: list[dict[str, Any]]) -> dict[str, str]:
    """Node id -> status for the flow_step cards in `ops`: what the canvas's live run view needs."""
    return {block["node_id"]: block["status"] for block in _steps(ops)}


def step_ports(ops: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Node id -> the output ports that got a value, for the flow_step cards in `ops` (the edges data took)."""
    return {block["node_id"]: block.get("ports") or [] for block in _steps(ops)}


def step_errors(ops: list[dict[str, Any]]) -> dict[str, str]:
    """Node id -> the error of each failed flow_step card in `ops` (its `detail`): the canvas shows it on the node."""
    return {block["node_id"]: block.get("detail") or "failed" for block in _steps(ops) if block["status"] == "failed"}


def _steps(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [op["block"] for op in ops if op["op"] == "set" and op["block"].get("type") == "flow_step"]
