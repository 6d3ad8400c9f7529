from nodeflow_app.contract import NodeDefinition, Parameter, Socket

definition = NodeDefinition(
    id="execute-graph",
    name="Execute Graph",
    description=(
        "Run another stored graph of this workspace as one step: its trigger gets this node's input, and the "
        "value of its last step (an object by step name when several steps end it) comes back as the output. "
        "A graph that calls itself, directly or through others, is refused."
    ),
    category="flow",
    icon="workflow",
    side_effects=True,
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="graph", label="Graph id", default="", required=True, placeholder="a1b2c3d4e5f6",
                  description="The id of the stored graph to run (in its editor's address: /graph/<id>)."),
    ),
    outputs=(Socket(id="output", label="Output", side="right", description="The called graph's final value."),),
)
