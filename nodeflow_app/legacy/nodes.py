"""Old node -> NodeFlow node data, one function per old type; every old data key is used or reported.

Each converter gets the old node, the field that holds its input's text (`text` after a Start,
`response` after an Agent) and the report, and returns (new type, new data, summary of the mapping).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from nodes.trigger.legacy_start.definition import definition as START_TRIGGER

from .report import MigrationReport
from .source import OldNode

# The older runtime's defaults when a field was empty (its engine filled these in at run time).
OLD_SYSTEM_PROMPT = "You are a helpful assistant."
OLD_MODEL = "gpt-5"
OLD_REASONING = "low"
REASONING = ("low", "medium", "high")
PREVIOUS_OUTPUT = re.compile(r"\{\{\s*PREVIOUS_OUTPUT\s*\}\}")
# A Switch condition that never matches: the older runtime never matched an empty condition value.
NEVER = "(?!)"


@dataclass
class Converted:
    type: str
    data: dict[str, Any]
    summary: str


@dataclass
class Context:
    node: OldNode
    where: str
    text_field: str  # the field of the direct input that holds the old "previous output"
    provider: str
    report: MigrationReport

    def unmapped(self, key: str, why: str) -> None:
        value = self.node.data.get(key)
        self.report.add("unmapped", self.where, f"data.{key} = {_short(value)}: {why}")

    def warn(self, text: str) -> None:
        self.report.add("warning", self.where, text)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


# start ------------------------------------------------------------------------------------------

def start(ctx: Context) -> Converted:
    initial = ctx.node.data.get("initialInput")
    if initial is not None and not isinstance(initial, str):
        ctx.warn(f"initialInput {_short(initial)} is not text; kept as its JSON text")
        initial = json.dumps(initial, ensure_ascii=False)
    return Converted(START_TRIGGER.id, {"initial_input": initial or ""},
                     f"initial input {_short(initial or '')} (payload {{text}})")


# agent ------------------------------------------------------------------------------------------

def agent(ctx: Context) -> Converted:
    data = ctx.node.data
    for key in ("systemPrompt", "model"):
        if data.get(key) is not None and not isinstance(data[key], str):
            ctx.unmapped(key, "not text; the older runtime's default is used")
    system = _text(data.get("systemPrompt"))
    model = _model(_text(data.get("model")).strip() or OLD_MODEL, ctx.provider)
    new = {
        "instructions": system if system.strip() else OLD_SYSTEM_PROMPT,
        "prompt": _prompt(ctx),
        "model": model,
        "reasoning_effort": _reasoning(ctx),
        "history": False,  # the older runtime sent each run on its own, without earlier turns
    }
    _tools(ctx)
    prompt = f'message "{new["prompt"]}"' if new["prompt"] else "message: the previous output"
    return Converted("agent", new, f"model {model}, reasoning {new['reasoning_effort']}, {prompt}")


def _model(name: str, provider: str) -> str:
    """Old graphs named OpenAI models bare ("gpt-5"); a name with a provider prefix stays as it is."""
    return name if ":" in name else f"{provider}:{name}"


def _prompt(ctx: Context) -> str:
    """userPrompt with {{PREVIOUS_OUTPUT}} as an expression on the direct input; empty stays empty (= input)."""
    prompt = _text(ctx.node.data.get("userPrompt"))
    if "userPrompt" in ctx.node.data and not isinstance(ctx.node.data["userPrompt"], str):
        ctx.unmapped("userPrompt", "not text; the agent gets the previous output instead, as before")
    if not prompt.strip():
        return ""
    converted = PREVIOUS_OUTPUT.sub(lambda _: f"{{{{ $json.{ctx.text_field} }}}}", prompt)
    if "{{" in PREVIOUS_OUTPUT.sub("", prompt):
        ctx.warn("userPrompt holds '{{' besides {{PREVIOUS_OUTPUT}}: the older runtime sent it as written, "
                 "NodeFlow reads it as an expression")
    return converted


def _reasoning(ctx: Context) -> str:
    effort = ctx.node.data.get("reasoningEffort")
    if effort in (None, ""):
        return OLD_REASONING
    if effort in REASONING:
        return effort
    ctx.warn(f"reasoningEffort {_short(effort)} has no equivalent; 'low' is used (the nearest)")
    return OLD_REASONING


def _tools(ctx: Context) -> None:
    tools = ctx.node.data.get("tools")
    if tools in (None, {}):
        return
    if not isinstance(tools, dict):
        ctx.unmapped("tools", "not an object of tool flags")
        return
    if tools.get("web_search"):
        ctx.report.add("unmapped", ctx.where, "tools.web_search = true: NodeFlow has no built-in web search; "
                       "the agent runs without it (wire a search MCP server or toolset into its Tools)")
    for key in sorted(set(tools) - {"web_search", "subagents"}):
        if tools[key]:
            ctx.report.add("unmapped", ctx.where, f"tools.{key} = {_short(tools[key])}: unknown tool, no equivalent")


# if ---------------------------------------------------------------------------------------------

def if_node(ctx: Context) -> Converted:
    rows = []
    for index, (operator, value) in enumerate(old_conditions(ctx)):
        rows.append(_switch_condition(ctx, index, operator, value))
    shown = "; ".join(f"{i}: {r['operator']} {r['value']!r}" for i, r in enumerate(rows))
    return Converted("switch", {"conditions": rows, "case_sensitive": False},
                     f"field {ctx.text_field!r}, conditions [{shown}], else = old false")


def old_conditions(ctx: Context) -> list[tuple[str, str]]:
    """(operator, value) as the older runtime read them: `conditions` if non-empty, else `condition` (contains)."""
    data = ctx.node.data
    listed = data.get("conditions")
    if isinstance(listed, list) and listed:
        if isinstance(data.get("condition"), str) and data["condition"].strip():
            ctx.unmapped("condition", "ignored by the older runtime too: `conditions` takes precedence")
        return [_old_condition(ctx, index, item) for index, item in enumerate(listed)]
    if "conditions" in data and listed not in (None, []):
        ctx.unmapped("conditions", "not a list; the single `condition` is used, as before")
    condition = data.get("condition")
    if condition is not None and not isinstance(condition, str):
        ctx.unmapped("condition", "not text; the older runtime read it as empty")
    return [("contains", _text(condition))]


def _old_condition(ctx: Context, index: int, item: Any) -> tuple[str, str]:
    if not isinstance(item, dict):
        ctx.warn(f"condition {index} {_short(item)} is not an object; the older runtime read it as 'equal' "
                 "with an empty value (never matches)")
        return "equal", ""
    operator = item.get("operator")
    if operator not in ("equal", "contains"):
        ctx.warn(f"condition {index}: operator {_short(operator)} is unknown; the older runtime used 'equal'")
    value = item.get("value")
    if value is not None and not isinstance(value, str):
        ctx.warn(f"condition {index}: value {_short(value)} is not text; the older runtime read it as empty "
                 "(never matches)")
    extra = sorted(set(item) - {"operator", "value", "id"})
    if extra:
        ctx.report.add("unmapped", ctx.where, f"condition {index} keys {extra}: no equivalent")
    return ("contains" if operator == "contains" else "equal"), _text(value)


def _switch_condition(ctx: Context, index: int, operator: str, value: str) -> dict[str, str]:
    """The older runtime compared the trimmed, lower-cased value; an empty one never matched."""
    expected = value.strip().lower()
    if not expected:
        ctx.warn(f"condition {index} has an empty value: it never matched; kept as a never-matching "
                 f"regex {NEVER!r} so the other outputs keep their numbers")
        return {"field": ctx.text_field, "operator": "regex", "value": NEVER}
    if operator == "equal" and _numeric(expected):
        # Switch compares numeric text as numbers ("1.0" equals "1"); the older runtime compared text.
        return {"field": ctx.text_field, "operator": "regex", "value": rf"\A{re.escape(expected)}\Z"}
    return {"field": ctx.text_field, "operator": "equals" if operator == "equal" else "contains",
            "value": expected}


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# input / approval -------------------------------------------------------------------------------

def approval(ctx: Context) -> Converted:
    prompt = ctx.node.data.get("prompt")
    data: dict[str, Any] = {"prompt": prompt if isinstance(prompt, str) and prompt.strip() else "Approve this step?"}
    ctx.warn("resume answers must be {\"decision\": \"approve\" | \"reject\", \"note\"?}; the older runtime also "
             "took free text (containing 'reject' = reject, anything else = approve)")
    return Converted("approval", data, f"prompt {data['prompt']!r}; outputs approve / reject"
                     + (" (type 'input' is the older name of approval)" if ctx.node.type == "input" else ""))


CONVERTERS: dict[str, Callable[[Context], Converted]] = {
    "start": start, "agent": agent, "if": if_node, "input": approval, "approval": approval,
}
# The data keys each converter reads; any other key gets an "unmapped" line.
USED_KEYS: dict[str, frozenset[str]] = {
    "start": frozenset({"initialInput", "label"}),
    "agent": frozenset({"agentName", "systemPrompt", "userPrompt", "model", "reasoningEffort", "tools", "label"}),
    "if": frozenset({"condition", "conditions", "label"}),
    "input": frozenset({"prompt", "label"}),
    "approval": frozenset({"prompt", "label"}),
}
