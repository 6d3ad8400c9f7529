from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="aggregate",
    name="Aggregate",
    description=(
        "Combine the items of a list into one object: all items under one field, or per field a sum, count, "
        "min, max, average, concatenation or list of the values. The list is the value at List field, or the "
        "input itself when List field is empty. Missing and null values are left out of each calculation."
    ),
    category="data",
    icon="sigma",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="field", label="List field", default="", placeholder="results",
                  description="Path to the list inside the input (a.b[0].c); empty: the input is the list."),
        Parameter(id="mode", label="Aggregate", type="select", default="all_items", options=(
            Option(value="all_items", label="All items into one list"),
            Option(value="fields", label="Individual fields"),
        )),
        Parameter(id="destination", label="Destination field", default="items",
                  description="For all items: the output field that holds the list."),
        Parameter(
            id="aggregations", label="Fields", type="list",
            default=[{"field": "", "operation": "count", "name": ""}],
            description="For individual fields: one output field per row.",
            fields=(
                Parameter(id="field", label="Field", default="", placeholder="price",
                          description="Path into each item; empty uses the whole item."),
                Parameter(id="operation", label="Operation", type="select", default="sum", options=(
                    Option(value="sum", label="Sum"),
                    Option(value="count", label="Count"),
                    Option(value="min", label="Minimum"),
                    Option(value="max", label="Maximum"),
                    Option(value="average", label="Average"),
                    Option(value="concatenate", label="Concatenate as text"),
                    Option(value="list", label="List of values"),
                )),
                Parameter(id="name", label="Output field", default="", placeholder="total",
                          description="Empty: operation_field, e.g. sum_price."),
            ),
        ),
        Parameter(id="separator", label="Separator", default=", ",
                  description="Between the values that Concatenate joins."),
    ),
    outputs=(Socket(id="output", label="Output", side="right", description="one object"),),
)
