"""Prompt Template: replace `{name}` / `{a.b[0]}` placeholders with variables, then input fields.

Only placeholders shaped like a path are replaced, so other braces (JSON examples) stay as they are.
Double braces belong to the kernel's expressions, which are resolved before this node runs.
"""

import re
from typing import Any

from nodes._helpers import MISSING, get_path, key_value_pairs, to_text
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError

PLACEHOLDER = re.compile(r"\{\s*([A-Za-z_]\w*(?:\.\w+|\[-?\d+\])*)\s*\}")
# The longest prompt it makes: each placeholder copies its value, so a short template repeating one over a large
# input asked for gigabytes (the server's memory, every run's).
MAX_TEXT_CHARS = 16 * 1024 * 1024


class PromptTemplateExecutor:
    node_type = "prompt-template"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        source = inputs.get("input")
        scope = dict(source) if isinstance(source, dict) else {}
        scope.update(key_value_pairs(data.get("variables"), "variables"))
        text = render(to_text(data.get("template")), scope)
        return ExecutionResult(outputs={"output": {"text": text}, "prompt": text})


def render(template: str, scope: dict[str, Any]) -> str:
    """`template` with every placeholder replaced; an unknown one is a NodeError listing what exists."""

    added = [0]  # characters the placeholders added so far

    def substitute(match: re.Match[str]) -> str:
        value = get_path(scope, match.group(1))
        if value is MISSING:
            available = ", ".join(sorted(scope)) or "none (add variables or connect an object input)"
            raise NodeError(f"unknown variable {{{match.group(1)}}}; available: {available}")
        text = to_text(value)
        added[0] += len(text)
        if len(template) + added[0] > MAX_TEXT_CHARS:
            raise NodeError(f"the prompt would be over {MAX_TEXT_CHARS:,} characters (at {{{match.group(1)}}}); "
                            "use each large value once")
        return text

    return PLACEHOLDER.sub(substitute, template)


executor = PromptTemplateExecutor()
