from nodeflow_app.contract import NodeDefinition, Parameter, Socket

definition = NodeDefinition(
    id="for-each",
    name="For Each",
    description=(
        "Run the steps placed inside this node once per item of a list. Each item enters the inner "
        "steps as their input: an object as is, anything else as `{value, index}`. The output is "
        "`{results, count}`, one result per item in item order: the value of the inner step that ends "
        "the chain, or an object by step name when several steps end it."
    ),
    category="flow",
    icon="repeat",
    container=True,
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="field", label="List field", default="", placeholder="items",
                  description="Path to the list inside the input (a.b[0].c); empty: the input is the list."),
        Parameter(id="concurrency", label="Concurrency", type="int", default=1, min=1, max=32, step=1,
                  description="How many items run at once; results keep item order either way."),
        Parameter(id="continue_on_item_error", label="Continue on item error", type="boolean", default=False,
                  description="Record a failing item as `{error}` and go on, instead of failing the node."),
    ),
    outputs=(Socket(id="output", label="Output", side="right", description="{results: [...], count}"),),
)
