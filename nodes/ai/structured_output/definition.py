from nodes._types import NodeDefinition, Parameter, Socket

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
        Parameter(id="model", label="Model", type="model", mode="hybrid", channel="link",
                  default="openai:gpt-4o-mini", placeholder="provider:model",
                  description="provider:model, or wire a Model Selector."),
        Parameter(id="temperature", label="Temperature", type="float", default=None, min=0, max=2, step=0.1,
                  description="Empty uses the model's default."),
    ),
    outputs=(Socket(id="output", label="Output", side="right", description="The answer, parsed and checked"),),
)
