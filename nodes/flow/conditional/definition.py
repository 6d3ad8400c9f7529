from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

# Shared with the Switch node's condition rows (the evaluation lives in nodes._helpers.compare).
OPERATOR_OPTIONS = (
    Option(value="equals", label="equals"),
    Option(value="not_equals", label="does not equal"),
    Option(value="contains", label="contains"),
    Option(value="not_contains", label="does not contain"),
    Option(value="starts_with", label="starts with"),
    Option(value="ends_with", label="ends with"),
    Option(value="gt", label="is greater than"),
    Option(value="gte", label="is greater than or equal to"),
    Option(value="lt", label="is less than"),
    Option(value="lte", label="is less than or equal to"),
    Option(value="is_empty", label="is empty"),
    Option(value="is_not_empty", label="is not empty"),
    Option(value="regex", label="matches regex"),
)

definition = NodeDefinition(
    id="conditional",
    name="Conditional",
    description="Send the input to the True or False output depending on a test of one of its fields.",
    category="flow",
    icon="git-branch",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="field", label="Field", default="", placeholder="user.age",
                  description="Path into the input (a.b[0].c); empty tests the whole input."),
        Parameter(id="operator", label="Operator", type="select", default="equals", options=OPERATOR_OPTIONS),
        Parameter(id="value", label="Value", mode="hybrid", default="",
                  description="What the field is compared with (unused by is empty / is not empty)."),
        Parameter(id="case_sensitive", label="Case sensitive", type="boolean", default=False),
    ),
    outputs=(
        Socket(id="true", label="True", side="right"),
        Socket(id="false", label="False", side="right"),
    ),
)
