from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket
from nodes.flow.conditional.definition import OPERATOR_OPTIONS

definition = NodeDefinition(
    id="filter",
    name="Filter",
    description=(
        "Split a list in two: items that meet the conditions (all of them, or any) leave on Pass, the others "
        "on Reject, each in their original order. The list is the value at List field, or the input itself "
        "when List field is empty. A port no item goes to carries no value, so its branch does not run."
    ),
    category="data",
    icon="filter",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="field", label="List field", default="", placeholder="orders",
                  description="Path to the list inside the input (a.b[0].c); empty: the input is the list."),
        Parameter(
            id="conditions", label="Conditions", type="list",
            default=[{"field": "", "operator": "is_not_empty", "value": ""}],
            description=("Tests on each item, with the Conditional's operators. A value is the same for every "
                         "item: an expression in it reads the node's input, not the item."),
            fields=(
                Parameter(id="field", label="Field", default="", placeholder="status",
                          description="Path into the item; empty tests the whole item."),
                Parameter(id="operator", label="Operator", type="select", default="equals",
                          options=OPERATOR_OPTIONS),
                Parameter(id="value", label="Value", default=""),
            ),
        ),
        Parameter(id="combine", label="Combine", type="select", default="and", options=(
            Option(value="and", label="All conditions (AND)"),
            Option(value="or", label="Any condition (OR)"),
        )),
        Parameter(id="case_sensitive", label="Case sensitive", type="boolean", default=False),
    ),
    outputs=(
        Socket(id="pass", label="Pass", side="right", description="the items that meet the conditions"),
        Socket(id="reject", label="Reject", side="right", description="the other items"),
    ),
)
