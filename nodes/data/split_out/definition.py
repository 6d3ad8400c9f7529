from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="split-out",
    name="Split Out",
    description=(
        "Turn a list field into items: the output is a list with one item per element, ready for Filter, "
        "Sort or For Each. An object element is the item itself; any other element becomes "
        "{<Destination field>: element}. When the input is a list, each of its items is split and the "
        "results follow one another."
    ),
    category="data",
    icon="ungroup",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="field", label="Field to split out", default="", placeholder="order.lines",
                  description="Path to the list inside the input (a.b[0].c); empty: the input is the list."),
        Parameter(id="include", label="Include", type="select", default="none", options=(
            Option(value="none", label="Only the elements"),
            Option(value="other_fields", label="The input's other fields too"),
        ), description="Other fields: each item also gets the input's fields, except the split list."),
        Parameter(id="destination", label="Destination field", default="", placeholder="value",
                  description="Where a non-object element goes; empty: the split field's last name (or value)."),
    ),
    outputs=(Socket(id="output", label="Items", side="right", description="one item per element"),),
)
