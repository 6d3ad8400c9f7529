from nodeflow_app.contract import NodeDefinition, Parameter, Socket

definition = NodeDefinition(
    id="manual-trigger",
    name="Manual Trigger",
    description="Start a run by hand with a JSON payload you type.",
    category="trigger",
    icon="play",
    trigger=True,
    # The trigger a calling graph (Execute Graph) starts when a graph has several; the run API starts it too.
    started_by=("graph", "api"),
    parameters=(
        Parameter(id="payload", label="Test payload", type="json", default={},
                  description="Used when the run is started without a payload of its own."),
    ),
    outputs=(Socket(id="output", label="Output"),),
)
