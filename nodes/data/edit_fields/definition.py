from nodeflow_app.contract import NodeDefinition, Parameter, Socket

definition = NodeDefinition(
    id="edit-fields",
    name="Edit Fields",
    description="Set or add fields on the data, keeping the input's other fields or starting from scratch.",
    category="data",
    icon="pencil",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="fields", label="Fields", type="key_value", default=[],
                  description="Name and value per row; a dotted name (user.name) creates nested objects."),
        Parameter(id="include_input", label="Include input fields", type="boolean", default=True,
                  description="Start from the input object's fields; off outputs only the fields set here."),
    ),
    outputs=(Socket(id="output", label="Output", side="right"),),
)
