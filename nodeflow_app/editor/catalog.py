"""The catalog the canvas draws nodes from: every definition's sockets and parameters, socket styles, coercions.

Compiled into the page once (a literal prop), so node bodies are generated from definitions in the
browser without a state var, and the canvas can light up compatible handles while a wire is dragged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nodeflow_app.contract.conversions import CONVERSIONS
from nodeflow_app.contract import ERROR_HANDLE, NodeDefinition, Parameter, Socket

# Header colors per category (Radix step-9 tones that read well on the dark canvas).
CATEGORY_COLORS: dict[str, str] = {
    "trigger": "#30a46c", "ai": "#8e4ec6", "tools": "#f59e0b", "flow": "#3e63dd",
    "data": "#0d74ce", "utility": "#6f6e77", "integration": "#e54666", "rag": "#12a594",
    "core": "#6e56cf",
}
DEFAULT_COLOR = "#6f6e77"


@dataclass(frozen=True, slots=True)
class SocketStyle:
    color: str
    shape: str  # circle | square | diamond
    dashed: bool = False


SOCKET_STYLES: dict[str, SocketStyle] = {
    "data": SocketStyle("#94a3b8", "circle"),
    "tools": SocketStyle("#f59e0b", "square"),
    "model": SocketStyle("#06b6d4", "circle"),
    "string": SocketStyle("#3b82f6", "circle"),
    "text": SocketStyle("#06b6d4", "circle"),
    "float": SocketStyle("#a1a1aa", "circle"),
    "int": SocketStyle("#71717a", "circle"),
    "boolean": SocketStyle("#10b981", "diamond"),
    "json": SocketStyle("#f97316", "circle"),
    "messages": SocketStyle("#a855f7", "circle"),
    "array": SocketStyle("#8b5cf6", "square"),
    "document": SocketStyle("#84cc16", "square"),
    "vector": SocketStyle("#14b8a6", "diamond"),
    "binary": SocketStyle("#ec4899", "square"),
    "any": SocketStyle("#6b7280", "circle", dashed=True),
}


def _socket(socket: Socket) -> dict[str, Any]:
    return {"id": socket.id, "label": socket.label or socket.id, "type": socket.type, "channel": socket.channel,
            "side": socket.side, "multiple": socket.multiple, "repeat": socket.repeat}


def _parameter(parameter: Parameter) -> dict[str, Any]:
    socket = parameter.socket() if parameter.has_socket else None
    return {
        "id": parameter.id, "label": parameter.label, "type": parameter.type, "mode": parameter.mode,
        "default": parameter.default, "placeholder": parameter.placeholder,
        "options": [{"value": o.value, "label": o.label or str(o.value)} for o in parameter.options],
        "min": parameter.min, "max": parameter.max, "step": parameter.step,
        "socket": {"type": socket.type, "channel": socket.channel} if socket else None,
        "show_if": {key: list(values) for key, values in parameter.show_if.items()},
    }


def node_type_entry(definition: NodeDefinition) -> dict[str, Any]:
    return {
        "name": definition.name, "description": definition.description, "category": definition.category,
        "icon": definition.icon, "color": CATEGORY_COLORS.get(definition.category, DEFAULT_COLOR),
        "version": definition.version, "trigger": definition.trigger, "container": definition.container,
        "inputs": [_socket(s) for s in definition.inputs],
        "outputs": [_socket(s) for s in definition.outputs],
        "parameters": [_parameter(p) for p in definition.parameters],
    }


def catalog(definitions: list[NodeDefinition]) -> dict[str, Any]:
    """Everything the canvas needs to draw any node and judge any wire (see docs/editor.md)."""
    return {
        "types": {d.id: node_type_entry(d) for d in definitions},
        "sockets": {name: {"color": s.color, "shape": s.shape, "dashed": s.dashed} for name, s in SOCKET_STYLES.items()},
        "coercions": sorted([source, target] for source, target in CONVERSIONS),
        "error_handle": ERROR_HANDLE,
    }
