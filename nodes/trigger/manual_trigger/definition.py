from nodeflow_app.contract import NodeDefinition, Parameter, Socket

definition = NodeDefinition(
    id="manual-trigger",
    name="Manual Trigger",
    description="Start a run by hand with a JSON payload you type.",
    category="trigger",
    icon="play",
    trigger=True,
    started_by=("graph",),  # the trigger a calling graph (Execute Graph) starts, when a graph has several
    parameters=(
        Parameter(id="payload", label="Test payload", type="json", default={},
                  description="Used when the run is started without a payload of its own."),
    ),
    outputs=(Socket(id="output", label="Output"),),
)
