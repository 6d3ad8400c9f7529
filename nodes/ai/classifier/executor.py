"""Classifier: one model call picks a category name (a JSON enum of the names plus "none"); the input leaves
on that category's port with a `classification` key, or on `else` when the answer names no category."""

from typing import Any

from nodeflow_app.llm.node_model import ask_structured
from nodes._helpers import MISSING, get_path, primary_text, to_text
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError

NONE = "none"


class ClassifierExecutor:
    node_type = "classifier"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        names, menu = _categories(data.get("categories"))
        value = inputs.get("input")
        text = _text_to_classify(value, to_text(data.get("field")).strip())
        instructions = "\n\n".join(part for part in (
            to_text(data.get("instructions")).strip(),
            "Classify the user's message into exactly one of these categories:\n" + menu,
            f'Answer with the category\'s name, or "{NONE}" if no category fits.') if part)
        schema = {"type": "object", "required": ["category"], "properties": {
            "category": {"type": "string", "enum": names + ([NONE] if NONE not in names else [])}}}
        answer = await ask_structured(data, ctx, text, schema, instructions=instructions, name="Classification")
        chosen = _chosen(answer.value, answer.text)
        index = _match(chosen, names)
        if index is None:
            return ExecutionResult(outputs={"else": _tagged(value, {"category": None, "index": None,
                                                                    "answer": chosen})})
        return ExecutionResult(outputs={f"category-{index}": _tagged(value, {"category": names[index],
                                                                             "index": index})})


def _categories(raw: Any) -> tuple[list[str], str]:
    """The category names and the list the model reads ("- name: description"); NodeError naming the parameter."""
    if not isinstance(raw, list) or not raw:
        raise NodeError("parameter 'categories' needs at least one category with a name")
    names: list[str] = []
    lines: list[str] = []
    for index, item in enumerate(raw):
        name = to_text(item.get("name")).strip() if isinstance(item, dict) else ""
        if not name:
            raise NodeError(f"parameter 'categories': category {index} has no name")
        if name in names:
            raise NodeError(f"parameter 'categories': the name {name!r} is used twice (categories {names.index(name)} "
                            f"and {index})")
        names.append(name)
        description = to_text(item.get("description")).strip()
        lines.append(f"- {name}: {description}" if description else f"- {name}")
    return names, "\n".join(lines)


def _text_to_classify(value: Any, field: str) -> str:
    if field:
        found = get_path(value, field)
        if found is MISSING:
            raise NodeError(f"nothing to classify: the input has no field {field!r}")
        text = to_text(found)
    else:
        text = primary_text(value)
    if not text.strip():
        raise NodeError(f"nothing to classify: {'field ' + repr(field) if field else 'the input'} is empty")
    return text


def _chosen(value: Any, text: str) -> str:
    """The name the model answered: `{"category": name}`, a bare JSON string, or its plain text."""
    if isinstance(value, dict):
        value = value.get("category")
    if value is MISSING:
        value = text
    return to_text(value).strip().strip("\"'").strip()


def _match(chosen: str, names: list[str]) -> int | None:
    if chosen in names:
        return names.index(chosen)
    folded = [name.casefold() for name in names]
    return folded.index(chosen.casefold()) if chosen.casefold() in folded else None


def _tagged(value: Any, classification: dict[str, Any]) -> dict[str, Any]:
    """The input dict with a `classification` key; any other input is wrapped as `{input, classification}`."""
    if isinstance(value, dict):
        return {**value, "classification": classification}
    return {"input": value, "classification": classification}


executor = ClassifierExecutor()
