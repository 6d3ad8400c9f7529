from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="merge",
    name="Merge",
    description="Join the values of several branches into one: as a list, by a shared key, or the first to arrive.",
    category="flow",
    icon="merge",
    inputs=(Socket(id="input", label="Inputs", side="left", multiple=True),),
    parameters=(
        Parameter(id="mode", label="Mode", type="select", default="append", options=(
            Option(value="append", label="Append into one list"),
            Option(value="combine_by_key", label="Combine objects by key"),
            Option(value="first_arrival", label="Keep the first to arrive"),
        )),
        Parameter(id="key", label="Key", default="", placeholder="id",
                  description="For Combine by key: the field (a path such as user.id) that identifies an object."),
    ),
    outputs=(Socket(id="output", label="Output", side="right"),),
)
