from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket
from nodes.flow.conditional.definition import OPERATOR_OPTIONS

definition = NodeDefinition(
    id="loop",
    name="Loop",
    description=(
        "Run the steps placed inside this node again and again: a number of times, or until a condition on "
        "the last pass's result holds (with a maximum). The first pass gets the Loop's input; each later pass "
        "gets the previous pass's result (or the Loop's input again, when Feed back is off). The output is "
        "`{results, count, last, stopped}`: every pass's result in order, the last one, and why it stopped "
        "(`times`, `condition` or `max`)."
    ),
    category="flow",
    icon="refresh-cw",
    container=True,
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="mode", label="Repeat", type="select", default="times",
                  options=(Option(value="times", label="a number of times"),
                           Option(value="until", label="until a condition holds"))),
        Parameter(id="times", label="Times", type="int", default=3, min=1, max=10000, step=1,
                  description="How many passes (Repeat: a number of times)."),
        Parameter(id="field", label="Until: field", default="", placeholder="done",
                  description="Path into the last pass's result (a.b[0].c); empty tests the whole result."),
        Parameter(id="operator", label="Until: operator", type="select", default="equals",
                  options=OPERATOR_OPTIONS),
        Parameter(id="value", label="Until: value", mode="hybrid", default="",
                  description="What the field is compared with (unused by is empty / is not empty)."),
        Parameter(id="case_sensitive", label="Case sensitive", type="boolean", default=False),
        Parameter(id="max_iterations", label="Maximum passes", type="int", default=100, min=1, max=10000, step=1,
                  description="Repeat until: the most passes before giving up."),
        Parameter(id="fail_at_max", label="Fail at the maximum", type="boolean", default=True,
                  description="Fail when the maximum is reached before the condition holds; off: stop there "
                              "and output what was collected (`stopped: max`)."),
        Parameter(id="feed_back", label="Feed back", type="boolean", default=True,
                  description="Each pass after the first gets the previous pass's result as its input; "
                              "off: every pass gets the Loop's input."),
    ),
    outputs=(Socket(id="output", label="Output", side="right",
                    description="{results: [...], count, last, stopped}"),),
)
