"""One structured call to a node's model: a JSON schema in, the model's JSON answer out (one request, no tokens).

Agno 3.1 sends a pydantic `output_schema` to every provider in its own format (OpenAI's strict json_schema,
Anthropic's output_format, Ollama's format, a JSON prompt for models without native support), but a dict
schema only to OpenAI-style models and verbatim. So the node's JSON schema travels inside a pydantic
class whose `model_json_schema()` returns it as written; the answer comes back as a plain value and the
node checks it against the schema itself.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from nodeflow_app.llm.events import usage_of
from nodeflow_app.llm.models import model_ref, node_model
from nodeflow_app.llm.providers import ModelRef, describe_failure, track_http_errors
from nodeflow_app.value_helpers import MISSING
from nodeflow_app.contract import FlowContext, NodeError


@dataclass
class StructuredAnswer:
    """The model's answer: `value` is the decoded JSON (MISSING when it was not JSON), `text` the answer as sent."""

    value: Any
    text: str
    ref: ModelRef
    usage: dict[str, int] = field(default_factory=dict)


def schema_class(schema: dict[str, Any], name: str = "StructuredOutput") -> type:
    """A pydantic class that carries `schema` verbatim and accepts any object (the node validates later)."""
    from pydantic import BaseModel, ConfigDict

    carried = copy.deepcopy(schema)

    class Carrier(BaseModel):
        model_config = ConfigDict(extra="allow")

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return copy.deepcopy(carried)  # providers normalize their copy in place

    Carrier.__name__ = Carrier.__qualname__ = name  # OpenAI sends it as the schema's name
    return Carrier


async def ask_structured(data: dict[str, Any], ctx: FlowContext, message: str, schema: dict[str, Any], *,
                         instructions: str | None = None, name: str = "StructuredOutput") -> StructuredAnswer:
    """Ask the node's model (its `model` link or inline `provider:model`, with its settings) for JSON matching
    `schema`. A failed call is a NodeError naming provider, model and HTTP status."""
    from agno.agent import Agent  # the SDK loads when a node runs, never with the palette
    from agno.run.base import RunStatus
    from pydantic import BaseModel

    ref = await model_ref(data, ctx)
    agent = Agent(model=node_model(ref, data), instructions=instructions or None,
                  output_schema=schema_class(schema, name), telemetry=False)
    failures = track_http_errors()
    result = await agent.arun(message)
    if result.status == RunStatus.error:
        raise NodeError(describe_failure(ref, str(result.content or ""), failures))
    if result.status != RunStatus.completed:
        raise NodeError(f"the call to {ref.ref} ended as {result.status.value}")
    content, usage = result.content, usage_of(getattr(result, "metrics", None))
    if isinstance(content, BaseModel):  # Agno parsed the answer into the carrier class
        value = content.model_dump()
        return StructuredAnswer(value, json.dumps(value, ensure_ascii=False), ref, usage)
    text = content if isinstance(content, str) else ("" if content is None else str(content))
    return StructuredAnswer(_decode(text), text, ref, usage)


def _decode(text: str) -> Any:
    """The JSON value in `text`, tolerating a Markdown code fence around it; MISSING if there is none."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        return json.loads(body)
    except ValueError:
        return MISSING
