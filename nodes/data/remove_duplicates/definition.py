from nodeflow_app.contract import NodeDefinition, Parameter, Socket

definition = NodeDefinition(
    id="remove-duplicates",
    name="Remove Duplicates",
    description=(
        "Drop the items of a list that repeat an earlier one, compared on the given fields or, with no fields, "
        "as whole items. The list is the value at List field, or the input itself when List field is empty; "
        "the output is the list of first occurrences, in order."
    ),
    category="data",
    icon="copy-minus",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="field", label="List field", default="", placeholder="contacts",
                  description="Path to the list inside the input (a.b[0].c); empty: the input is the list."),
        Parameter(
            id="fields", label="Compare fields", type="list", default=[],
            description="Items are duplicates when all these fields are equal; no rows compares whole items.",
            fields=(Parameter(id="field", label="Field", default="", placeholder="email",
                              description="Path into the item."),),
        ),
    ),
    outputs=(Socket(id="output", label="Output", side="right", description="the list without repeats"),),
)
