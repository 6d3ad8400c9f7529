from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="type-converter",
    name="Type Converter",
    description=(
        "Convert one value explicitly: text to an integer, number, boolean or parsed JSON; JSON to text; a list "
        "to text and back; a date to text and back with a format. The value is the one at Field (the output is "
        "then a copy of the input with it converted), or the whole input when Field is empty. On each item, the "
        "same is done in every item of the list at List field (empty: the input is the list)."
    ),
    category="data",
    icon="arrow-left-right",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="conversion", label="Convert", type="select", default="to_integer", options=(
            Option(value="to_integer", label="Text to integer"),
            Option(value="to_float", label="Text to number"),
            Option(value="to_boolean", label="Text to boolean"),
            Option(value="parse_json", label="Text to JSON (parse)"),
            Option(value="to_json_text", label="JSON to text"),
            Option(value="join_list", label="List to text"),
            Option(value="split_text", label="Text to list"),
            Option(value="parse_date", label="Text to date (ISO 8601)"),
            Option(value="format_date", label="Date to text"),
        )),
        Parameter(id="field", label="Field", default="", placeholder="price",
                  description="Path to the value (in the input, or in each item); empty: the whole input or item."),
        Parameter(id="apply_to", label="Apply to", type="select", default="input", options=(
            Option(value="input", label="The input"),
            Option(value="each_item", label="Each item of a list"),
        )),
        Parameter(id="list_field", label="List field", default="", placeholder="orders",
                  description="For each item: the path to the list inside the input; empty: the input is the list."),
        Parameter(id="format", label="Date format", default="", placeholder="%d/%m/%Y %H:%M",
                  description="strftime codes (%Y-%m-%d); empty: ISO 8601. Dates travel as ISO 8601 text."),
        Parameter(id="separator", label="Separator", default=",",
                  description=r"Between list items as text; \n is a new line, \t a tab."),
        Parameter(id="pretty", label="Pretty JSON", type="boolean", default=False,
                  description="JSON to text: indented over several lines instead of compact."),
    ),
    outputs=(Socket(id="output", label="Output", side="right"),),
)
