"""MCP Tool: the run's payload is the tool call's arguments, checked against the node's input schema.

This folder owns the tool's contract: its name, description and JSON Schema (the MCP endpoint lists them,
see nodeflow_app/api/mcp.py) and the arguments' shape (an object that the schema accepts).
"""

import re
from typing import Any

from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def tool_name(data: dict[str, Any]) -> str:
    """The node's tool name; NodeError when it cannot be an MCP tool name."""
    name = str(data.get("tool_name") or "").strip()
    if not TOOL_NAME.match(name):
        raise NodeError(f"tool name {name!r} must be 1-64 letters, digits, _ or -")
    return name


def input_schema(data: dict[str, Any]) -> dict[str, Any]:
    """The node's JSON Schema of the arguments; NodeError when it is not a valid object schema."""
    import jsonschema

    schema = data.get("input_schema") or {"type": "object"}
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise NodeError("the input schema must be a JSON Schema of an object ({\"type\": \"object\", ...})")
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as error:
        raise NodeError(f"the input schema is not valid JSON Schema: {error.message}") from None
    return {"type": "object", **schema}


def check_arguments(schema: dict[str, Any], arguments: Any) -> dict[str, Any]:
    """The arguments when the schema accepts them; NodeError naming the first problem and where."""
    import jsonschema

    arguments = {} if arguments is None else arguments
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(arguments))
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "arguments"
        raise NodeError(f"tool arguments do not fit the input schema at {where}: {error.message}")
    return arguments


class McpToolExecutor:
    node_type = "mcp-tool"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        return ExecutionResult(outputs={"output": check_arguments(input_schema(data), ctx.payload)})


executor = McpToolExecutor()
