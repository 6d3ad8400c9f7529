"""Toolset: on its `tools` link, the chosen tools as a list (plain functions and Agno toolkits) for an Agent."""

from typing import Any, Callable

from nodeflow_app.contract import FlowContext, NodeError

from . import builtin


MAX_FACTORIAL = 1_500  # ~4,100 digits, under Python's 4,300-digit limit for int -> str (factorial(10**7): minutes)
MAX_PRIME_CHECK = 10**12  # trial division up to 10**6: tens of milliseconds at worst


def _agno_calculator() -> Any:
    """Agno's CalculatorTools with its two unbounded operations bounded: its tools run on the event loop, so a
    model asking for factorial(10**7) or is_prime(10**18) would stall every run of the server."""
    import json

    from agno.tools.calculator import CalculatorTools

    class BoundedCalculatorTools(CalculatorTools):
        def factorial(self, n: int) -> str:
            if n > MAX_FACTORIAL:
                return json.dumps({"operation": "factorial", "error": f"n must be at most {MAX_FACTORIAL:,}"})
            return super().factorial(n)

        def is_prime(self, n: int) -> str:
            if n > MAX_PRIME_CHECK:
                return json.dumps({"operation": "prime_check", "error": f"n must be at most {MAX_PRIME_CHECK:,}"})
            return super().is_prime(n)

    BoundedCalculatorTools.factorial.__doc__ = CalculatorTools.factorial.__doc__  # what the model is told
    BoundedCalculatorTools.is_prime.__doc__ = CalculatorTools.is_prime.__doc__
    return BoundedCalculatorTools()


def _agno_reasoning() -> Any:
    from agno.tools.reasoning import ReasoningTools

    return ReasoningTools()


# Each entry makes one tool (a function Agno describes from its signature and docstring) or toolkit.
# Only tools that run in-process without API keys or extra packages, and never block the event loop.
CATALOG: dict[str, Callable[[], Any]] = {
    "calculator": lambda: builtin.calculator,
    "current_datetime": lambda: builtin.current_datetime,
    "http_get": lambda: builtin.http_get,
    "agno-calculator": _agno_calculator,
    "agno-reasoning": _agno_reasoning,
}


class ToolsetExecutor:
    node_type = "toolset"

    async def materialize(self, data: dict[str, Any], output_handle: str, ctx: FlowContext) -> list[Any]:
        if output_handle != "tools":
            raise NodeError(f"Toolset has no link output {output_handle!r} (it provides 'tools')")
        chosen = data.get("tool_names")
        if isinstance(chosen, str):
            chosen = [chosen]
        if not isinstance(chosen, list) or not chosen:
            raise NodeError("choose at least one tool in the Toolset")
        unknown = [name for name in chosen if name not in CATALOG]
        if unknown:
            raise NodeError(f"unknown tool {', '.join(map(repr, unknown))}; choose from: {', '.join(CATALOG)}")
        return [CATALOG[name]() for name in dict.fromkeys(chosen)]


executor = ToolsetExecutor()
