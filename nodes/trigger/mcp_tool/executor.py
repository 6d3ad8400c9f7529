"""MCP Tool: the run's payload is the tool call's arguments, checked against the node's input schema.

This folder owns the tool's contract: its name, description and JSON Schema (the MCP endpoint lists them,
see nodeflow_app/api/mcp.py) and the arguments' shape (an object that the schema accepts).

The schema is the graph's, the arguments are any MCP client's: a `$ref` resolves inside the schema only
(jsonschema would fetch any other URL or file, past the SSRF guard), and the schema's regular expressions
run with a time limit, the whole check in a regex worker thread that stops when the node is cancelled
(Python's `re` would hold the event loop for as long as a backtracking pattern takes).
"""

import re
import threading
from functools import partial
from typing import Any, Iterator

import jsonschema
import referencing
import referencing.exceptions
from jsonschema import ValidationError

from nodes._helpers import in_regex_thread, regex_search
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
NO_OTHER_DOCUMENTS = referencing.Registry()  # nothing to retrieve: a $ref outside the schema is unresolvable


def tool_name(data: dict[str, Any]) -> str:
    """The node's tool name; NodeError when it cannot be an MCP tool name."""
    name = str(data.get("tool_name") or "").strip()
    if not TOOL_NAME.match(name):
        raise NodeError(f"tool name {name!r} must be 1-64 letters, digits, _ or -")
    return name


def input_schema(data: dict[str, Any]) -> dict[str, Any]:
    """The node's JSON Schema of the arguments; NodeError when it is not a valid object schema."""
    schema = data.get("input_schema") or {"type": "object"}
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise NodeError("the input schema must be a JSON Schema of an object ({\"type\": \"object\", ...})")
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as error:
        raise NodeError(f"the input schema is not valid JSON Schema: {error.message}") from None
    keywords = dict(_keywords(schema))
    for reference in (keywords.get("$ref", []) + keywords.get("$dynamicRef", [])):
        if isinstance(reference, str) and not reference.startswith("#"):  # (a property may be named "$ref")
            raise NodeError(f"the input schema's $ref {reference[:80]!r} points outside the schema; refer to its own "
                            "parts only (\"#/$defs/name\")")
    if "patternProperties" in keywords and "unevaluatedProperties" in keywords:  # jsonschema reads those with re
        raise NodeError("the input schema uses both patternProperties and unevaluatedProperties; keep one "
                        "(use additionalProperties with patternProperties)")
    return {"type": "object", **schema}


def _keywords(schema: Any) -> Iterator[tuple[str, list[Any]]]:
    """(keyword, [its values]) for every keyword used at any depth of the schema (a value may repeat)."""
    found: dict[str, list[Any]] = {}
    stack = [schema]
    while stack:
        part = stack.pop()
        if isinstance(part, dict):
            for key, value in part.items():
                found.setdefault(key, []).append(value)
                stack.append(value)
        elif isinstance(part, list):
            stack.extend(part)
    yield from found.items()


_check = threading.local()  # `stopped`: the Event of the node's check running in this thread


def _search(pattern: str, text: str) -> bool:
    stopped = getattr(_check, "stopped", None)
    if stopped is not None and stopped.is_set():  # the node was cancelled: no more searches for it
        raise NodeError("stopped")
    return regex_search(pattern, text) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "object"):
        for pattern, subschema in patterns.items():
            for key, value in instance.items():
                if _search(pattern, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    named, patterns = schema.get("properties", {}), list(schema.get("patternProperties", {}))
    extras = [key for key in instance if key not in named and not any(_search(pattern, key) for pattern in patterns)]
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        yield ValidationError(f"unexpected properties: {', '.join(map(repr, sorted(extras)))}")


# Draft 2020-12 with the three keywords that search regular expressions doing it with a time limit.
Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {
    "pattern": _pattern, "patternProperties": _pattern_properties, "additionalProperties": _additional_properties})


def check_arguments(schema: dict[str, Any], arguments: Any, stopped: threading.Event | None = None) -> dict[str, Any]:
    """The arguments when the schema accepts them; NodeError naming the first problem and where. `stopped` set
    (the node was cancelled while this ran in a thread): gives up at the next regular expression."""
    arguments = {} if arguments is None else arguments
    _check.stopped = stopped
    try:
        error = jsonschema.exceptions.best_match(Validator(schema, registry=NO_OTHER_DOCUMENTS).iter_errors(arguments))
    except referencing.exceptions.Unresolvable as unresolved:
        reference = getattr(unresolved, "ref", "")
        raise NodeError(f"the input schema's $ref {reference!r} points to nothing in the schema") from None
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "arguments"
        raise NodeError(f"tool arguments do not fit the input schema at {where}: {error.message}")
    return arguments


class McpToolExecutor:
    node_type = "mcp-tool"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        check = partial(check_arguments, input_schema(data), ctx.payload)
        return ExecutionResult(outputs={"output": await in_regex_thread(check)})


executor = McpToolExecutor()
