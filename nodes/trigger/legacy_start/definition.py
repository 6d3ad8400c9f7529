from nodeflow_app.contract import NodeDefinition, Parameter, Socket

definition = NodeDefinition(
    id="legacy-start",
    name="Start",
    description="The Start node of graphs imported from the older runtime: starts a run with a text.",
    category="trigger",
    icon="play-circle",
    trigger=True,
    started_by=("api",),
    parameters=(
        Parameter(id="initial_input", label="Initial input", type="text", default="",
                  description="The text a run starts with when it is started without a payload of its own."),
    ),
    outputs=(Socket(id="output", label="Output", side="right", description="{text}"),),
)
