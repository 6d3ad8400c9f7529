from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="sort",
    name="Sort",
    description=(
        "Sort a list by one or more fields, each ascending or descending, in natural or numeric order. "
        "The list is the value at List field, or the input itself when List field is empty; the output is "
        "the sorted list. Items without the field (or with null) go last; equal items keep their order."
    ),
    category="data",
    icon="arrow-down-wide-narrow",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="field", label="List field", default="", placeholder="orders",
                  description="Path to the list inside the input (a.b[0].c); empty: the input is the list."),
        Parameter(
            id="keys", label="Sort by", type="list",
            default=[{"field": "", "order": "ascending", "compare": "natural"}],
            description="The first row decides; later rows break its ties.",
            fields=(
                Parameter(id="field", label="Field", default="", placeholder="price",
                          description="Path into the item; empty sorts by the whole item."),
                Parameter(id="order", label="Order", type="select", default="ascending", options=(
                    Option(value="ascending", label="Ascending"),
                    Option(value="descending", label="Descending"),
                )),
                Parameter(id="compare", label="Compare", type="select", default="natural", options=(
                    Option(value="natural", label="Natural (numbers by value, then text: item2 < item10)"),
                    Option(value="numeric", label="Numeric (every value must be a number)"),
                )),
            ),
        ),
    ),
    outputs=(Socket(id="output", label="Output", side="right", description="the sorted list"),),
)
