from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

MAX_SECONDS = 3600  # Sim caps its Wait at 10 minutes; n8n moves waits over 65 s to its database, we do not

definition = NodeDefinition(
    id="wait",
    name="Wait",
    description=(
        "Pause this branch for a while, at most 1 hour, then pass the input on unchanged. The wait holds the run in "
        "memory (a restart begins it again); for longer delays start another graph with a Schedule Trigger."
    ),
    category="flow",
    icon="timer",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="amount", label="Amount", type="float", default=1.0, min=0, step=0.5,
                  max_by={"unit": {"seconds": MAX_SECONDS, "minutes": MAX_SECONDS / 60, "hours": MAX_SECONDS / 3600}},
                  description="At most 1 hour: 3600 seconds, 60 minutes or 1 hour."),
        Parameter(id="unit", label="Unit", type="select", default="seconds", options=(
            Option(value="seconds", label="Seconds"),
            Option(value="minutes", label="Minutes"),
            Option(value="hours", label="Hours"),
        )),
    ),
    outputs=(Socket(id="output", label="Output", side="right"),),
)
