from nodeflow_app.contract import NodeDefinition, Parameter, Socket

definition = NodeDefinition(
    id="prompt-template",
    name="Prompt Template",
    description="Fill {placeholders} in a text with variables or fields of the input to build a prompt.",
    category="ai",
    icon="file-text",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="template", label="Template", type="text", default="Answer the question: {message}",
                  placeholder="Summarise {text} in {language}.",
                  description="{name} or {a.b[0]} is replaced by a variable, else by a field of the input."),
        Parameter(id="variables", label="Variables", type="key_value", default=[],
                  description="Named values for the placeholders; they take precedence over input fields."),
    ),
    outputs=(
        Socket(id="output", label="Output", side="right"),
        Socket(id="prompt", label="Prompt", type="text", side="right"),
    ),
)
