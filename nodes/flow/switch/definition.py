from nodeflow_app.contract import NodeDefinition, Parameter, Socket
from nodes.flow.conditional.definition import OPERATOR_OPTIONS

definition = NodeDefinition(
    id="switch",
    name="Switch",
    description="Send the input to the output of the first condition it meets, or to Else if none match.",
    category="flow",
    icon="split",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(
            id="conditions", label="Conditions", type="list",
            default=[{"field": "", "operator": "equals", "value": ""}],
            description="Tested in order; the first match wins. Each condition gets its own output.",
            fields=(
                Parameter(id="field", label="Field", default="", placeholder="user.age",
                          description="Path into the input; empty tests the whole input."),
                Parameter(id="operator", label="Operator", type="select", default="equals",
                          options=OPERATOR_OPTIONS),
                Parameter(id="value", label="Value", default=""),
            ),
        ),
        Parameter(id="case_sensitive", label="Case sensitive", type="boolean", default=False),
    ),
    outputs=(
        Socket(id="condition-{index}", label="Condition", side="right", repeat="conditions"),
        Socket(id="else", label="Else", side="right"),
    ),
)
