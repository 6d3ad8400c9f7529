from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="json-transform",
    name="JSON Transform",
    description=(
        "Reshape data with a JSONata expression (jsonata.org): pick, rename, compute and regroup fields. "
        "On the whole input, `$` is the input; on each item, the expression runs once per item of the list "
        "at List field (or of the input itself when List field is empty), `$` is the item and `$index` its "
        "position, and the output is the list of results. It runs in a separate process with 1 GB of memory "
        "and 10 s per call; the result may be at most 64 MB of JSON."
    ),
    category="data",
    icon="braces",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="expression", label="Expression", type="code", default="$", expressions=False,
                  placeholder='{"customer": name, "total": $sum(lines.(price * qty))}',
                  description="A JSONata expression; `$` is the input (or the item)."),
        Parameter(id="apply_to", label="Apply to", type="select", default="input", options=(
            Option(value="input", label="The whole input"),
            Option(value="each_item", label="Each item of a list"),
        )),
        Parameter(id="field", label="List field", default="", placeholder="orders",
                  description="For each item: the path to the list inside the input; empty: the input is the list."),
    ),
    outputs=(Socket(id="output", label="Output", side="right"),),
)
