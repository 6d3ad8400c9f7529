"""Edit Fields: copy the input object (or start empty) and set each row's value at its (dotted) name."""

import copy
from typing import Any

from nodes._helpers import key_value_pairs, set_path
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError


class EditFieldsExecutor:
    node_type = "edit-fields"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        source = inputs.get("input")
        result: dict[str, Any] = {}
        if data.get("include_input", True) and source is not None:
            if not isinstance(source, dict):
                raise NodeError(f"the input is a {type(source).__name__}, not an object, so its fields cannot be "
                                "kept; turn off 'Include input fields' to build a new object")
            result = copy.deepcopy(source)  # upstream outputs are shared; never mutate them
        for name, value in key_value_pairs(data.get("fields"), "fields"):
            if not name.strip():
                raise NodeError(f"a field has a value ({value!r:.40}) but no name")
            set_path(result, name, value)
        return ExecutionResult(outputs={"output": result})


executor = EditFieldsExecutor()
