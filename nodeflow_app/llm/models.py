"""A node's model: the `model` parameter (inline `provider:model`, or a wired Model Selector) as an Agno model."""

from __future__ import annotations

from typing import Any

from nodeflow_app.llm.providers import ModelConfigError, ModelRef, build_model, check_model_url, parse_ref
from nodeflow_app.value_helpers import to_number
from nodeflow_app.contract import FlowContext

REASONING_EFFORTS = ("none", "low", "medium", "high")


async def model_ref(data: dict[str, Any], ctx: FlowContext, parameter: str = "model") -> ModelRef:
    """The reference a wired link provides (wire > inline value), else the inline `provider:model`; a base URL
    written in the graph or stored by the workspace has passed the SSRF guard."""
    linked = await ctx.runtime.resolve_links(ctx.node_id, parameter)
    if len(linked) > 1:
        raise ModelConfigError(f"'{parameter}' takes one model, but {len(linked)} are wired")
    value = linked[0] if linked else data.get(parameter)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ModelConfigError(f"choose a model (provider:model, e.g. openai:gpt-4o-mini) or wire a Model Selector "
                               f"into '{parameter}'")
    ref = parse_ref(value)
    await check_model_url(ref)  # before any request: a clear error naming the URL and why
    return ref


def optional_number(data: dict[str, Any], key: str, low: float, high: float | None, *,
                    whole: bool = False) -> float | int | None:
    """An optional numeric setting: empty is None, anything else must be a number in [low, high]."""
    raw = data.get(key)
    if raw is None or raw == "":
        return None
    number = to_number(raw)
    in_range = number is not None and number >= low and (high is None or number <= high)
    if not in_range or (whole and number != int(number)):
        span = f"from {low:g} to {high:g}" if high is not None else f"of at least {low:g}"
        kind = "a whole number" if whole else "a number"
        raise ModelConfigError(f"{key} must be {kind} {span}, got {raw!r}")
    return int(number) if whole else number


def node_model(ref: ModelRef, data: dict[str, Any]) -> Any:
    """The Agno model for a node's settings: temperature, max_tokens and reasoning_effort when set."""
    effort = data.get("reasoning_effort") or "none"
    if effort not in REASONING_EFFORTS:
        raise ModelConfigError(f"reasoning_effort must be one of {', '.join(REASONING_EFFORTS)}, got {effort!r}")
    return build_model(
        ref,
        temperature=optional_number(data, "temperature", 0, 2),
        max_tokens=optional_number(data, "max_tokens", 1, None, whole=True),
        reasoning_effort=None if effort == "none" else effort,
    )
