from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="limit",
    name="Limit",
    description=(
        "Keep only the first or the last N items of a list. The list is the value at List field, or the "
        "input itself when List field is empty; the output is the shortened list."
    ),
    category="data",
    icon="list-end",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="field", label="List field", default="", placeholder="orders",
                  description="Path to the list inside the input (a.b[0].c); empty: the input is the list."),
        Parameter(id="count", label="Max items", type="int", mode="hybrid", default=10, min=0, step=1),
        Parameter(id="keep", label="Keep", type="select", default="first", options=(
            Option(value="first", label="First items"),
            Option(value="last", label="Last items"),
        )),
    ),
    outputs=(Socket(id="output", label="Output", side="right", description="at most Max items items"),),
)
