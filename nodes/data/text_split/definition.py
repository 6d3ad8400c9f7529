from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="text-split",
    name="Text Split",
    description=(
        "Split text into a list of parts (by a separator, a regular expression, lines or sentences), or join "
        "a list into one text with a separator. The text (or list) is the value at Field, or the input itself "
        "when Field is empty; an object input without a Field gives its message, response or text field."
    ),
    category="data",
    icon="scissors",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="operation", label="Operation", type="select", default="split", options=(
            Option(value="split", label="Split text into a list"),
            Option(value="join", label="Join a list into text"),
        )),
        Parameter(id="field", label="Field", default="", placeholder="body",
                  description="Path to the text (or, to join, the list) inside the input; empty: the input."),
        Parameter(id="split_by", label="Split by", type="select", default="separator", options=(
            Option(value="separator", label="Separator"),
            Option(value="regex", label="Regular expression"),
            Option(value="lines", label="Lines"),
            Option(value="sentences", label="Sentences"),
        )),
        Parameter(id="separator", label="Separator", default=",",
                  description=r"Splits or joins; \n is a new line, \t a tab."),
        Parameter(id="pattern", label="Pattern", default="", placeholder=r"\s*[;,]\s*", expressions=False,
                  description="For a regular expression split: where to cut (time-limited to 1 s)."),
        Parameter(id="trim", label="Trim parts", type="boolean", default=True,
                  description="Remove spaces around each part."),
        Parameter(id="remove_empty", label="Remove empty parts", type="boolean", default=True),
    ),
    outputs=(Socket(id="output", label="Output", side="right", description="a list of texts, or the joined text"),),
)
