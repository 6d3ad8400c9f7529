"""Code: the user's Python on the input, in a throw-away worker process (sandbox.py), never in this one."""

from typing import Any

from nodes._helpers import to_number
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError

from .sandbox import Limits, SandboxError, pool

LOG_TAIL = 2000  # characters of stdout / stderr quoted in an error message


class CodeExecutor:
    node_type = "code"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        code = data.get("code")
        if not isinstance(code, str) or not code.strip():
            raise NodeError("parameter 'code' is empty; write the Python to run (`return` gives the output)")
        limits = Limits(timeout=_bounded(data, "time_limit", 5.0, 0.1, 300),
                        memory_mb=int(_bounded(data, "memory_mb", 256, 64, 8192)))
        try:
            outcome = await pool().run(code, inputs.get("input"), limits)
        except SandboxError as error:
            raise NodeError(str(error) + _logs_text(error.stdout, error.stderr)) from None
        except ValueError as error:  # the input itself cannot be sent as JSON (NaN, a non-JSON value)
            raise NodeError(f"the input cannot be given to the code as JSON: {error}") from None
        outputs: dict[str, Any] = {"output": outcome.value}
        if outcome.stdout or outcome.stderr:
            outputs["console"] = {"stdout": outcome.stdout, "stderr": outcome.stderr}
        return ExecutionResult(outputs=outputs)


def _bounded(data: dict[str, Any], name: str, default: float, low: float, high: float) -> float:
    raw = data.get(name)
    number = default if raw in (None, "") else to_number(raw)
    if number is None or not low <= number <= high:
        raise NodeError(f"parameter {name!r} must be a number from {low:g} to {high:g}, got {raw!r}")
    return number


def _logs_text(stdout: str, stderr: str) -> str:
    parts = [f"\n\n{name}:\n{text[-LOG_TAIL:]}" for name, text in (("stdout", stdout), ("stderr", stderr)) if text]
    return "".join(parts)


executor = CodeExecutor()
