"""Structured Output: one model call constrained by a JSON schema; the answer is decoded, checked, and output."""

import json
from typing import Any

from nodeflow_app.llm.node_model import ask_structured
from nodes._helpers import MISSING, primary_text, to_text
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError

from .json_schema import schema_problem, value_problem

SHOWN_ANSWER = 200  # characters of a rejected answer quoted in the error


class StructuredOutputExecutor:
    node_type = "structured-output"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        schema = _schema(data.get("schema"))
        prompt = to_text(data.get("prompt")).strip() or primary_text(inputs.get("input"))
        if not prompt.strip():
            raise NodeError("nothing to ask: the prompt is empty and the input has no text")
        answer = await ask_structured(data, ctx, prompt, schema,
                                      instructions=to_text(data.get("instructions")).strip() or None)
        if answer.value is MISSING:
            raise NodeError(f"{answer.ref.ref} did not answer with JSON; its answer starts: {_start(answer.text)}")
        if problem := value_problem(answer.value, schema):
            raise NodeError(f"{answer.ref.ref}'s answer does not match the schema: {problem}; "
                            f"its answer starts: {_start(answer.text)}")
        return ExecutionResult(outputs={"output": answer.value})


def _schema(raw: Any) -> dict[str, Any]:
    """The `schema` parameter as a checked dict (a JSON string is accepted); NodeError naming the parameter."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as error:
            raise NodeError(f"parameter 'schema' is not valid JSON: {error}") from None
        except RecursionError:
            raise NodeError("parameter 'schema' is nested too deeply to read") from None
    if problem := schema_problem(raw):
        raise NodeError(f"parameter 'schema' is not a usable JSON Schema: {problem}")
    if raw.get("type") != "object":
        raise NodeError("parameter 'schema' must describe an object at its root ({\"type\": \"object\", ...}): "
                        "providers answer with objects; put a list or a single value in a property")
    return raw


def _start(text: str) -> str:
    text = text.strip()
    return json.dumps(text[:SHOWN_ANSWER] + ("…" if len(text) > SHOWN_ANSWER else ""), ensure_ascii=False)


executor = StructuredOutputExecutor()
