from nodeflow_app.contract import MODEL_PARAMETER, NodeDefinition, Parameter, Socket, TEMPERATURE_PARAMETER

EXAMPLE_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}

definition = NodeDefinition(
    id="structured-output",
    name="Structured Output",
    description="Ask a model for JSON that matches a schema; the answer is checked and comes out as an object.",
    category="ai",
    icon="braces",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="prompt", label="Prompt", type="text", mode="hybrid", default="",
                  placeholder="Empty: the input's message (or response, or text)",
                  description="What to ask. Empty uses the primary text of the input."),
        Parameter(id="instructions", label="Instructions", type="text", default="",
                  placeholder="Extract the customer's name and order number.",
                  description="The system prompt: what to extract or decide."),
        Parameter(id="schema", label="Schema", type="json", default=EXAMPLE_SCHEMA,
                  description="A JSON Schema whose root is an object. Checked: type, properties, required, "
                              "additionalProperties, items, enum, const."),
        MODEL_PARAMETER,
        TEMPERATURE_PARAMETER,
    ),
    outputs=(Socket(id="output", label="Output", side="right", description="The answer, parsed and checked"),),
)
