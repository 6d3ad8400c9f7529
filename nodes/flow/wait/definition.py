from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="wait",
    name="Wait",
    description="Pause this branch for a while, then pass the input on unchanged.",
    category="flow",
    icon="timer",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="amount", label="Amount", type="float", default=1.0, min=0, step=0.5),
        Parameter(id="unit", label="Unit", type="select", default="seconds", options=(
            Option(value="seconds", label="Seconds"),
            Option(value="minutes", label="Minutes"),
            Option(value="hours", label="Hours"),
        )),
    ),
    outputs=(Socket(id="output", label="Output", side="right"),),
)
