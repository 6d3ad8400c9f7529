from nodeflow_app.contract import MODEL_PARAMETER, NodeDefinition, Parameter, Socket, TEMPERATURE_PARAMETER

definition = NodeDefinition(
    id="classifier",
    name="Classifier",
    description="A model picks one of your categories for the input, which leaves on that category's output "
                "(or on Else).",
    category="ai",
    icon="tags",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(
            id="categories", label="Categories", type="list",
            default=[{"name": "question", "description": "The user asks for information."},
                     {"name": "complaint", "description": "The user reports a problem or is unhappy."}],
            description="Each category gets its own output; the model sees names and descriptions.",
            fields=(
                Parameter(id="name", label="Name", default="", placeholder="billing"),
                Parameter(id="description", label="Description", type="text", default="",
                          placeholder="Questions about invoices and payments."),
            ),
        ),
        Parameter(id="instructions", label="Instructions", type="text", default="",
                  placeholder="Messages come from our support inbox.",
                  description="Optional context for the model, before the list of categories."),
        Parameter(id="field", label="Field to classify", default="", placeholder="email.body",
                  description="Path into the input; empty uses its message (or response, or text)."),
        MODEL_PARAMETER,
        TEMPERATURE_PARAMETER,
    ),
    outputs=(
        Socket(id="category-{index}", label="{index}", side="right", repeat="categories",
               description="The input plus classification {category, index}"),
        Socket(id="else", label="Else", side="right",
               description="No category fits: the input plus classification {category: null, index: null, answer}"),
    ),
)
