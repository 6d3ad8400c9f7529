from nodeflow_app.contract import MODEL_PARAMETER, NodeDefinition, Parameter, Socket, TEMPERATURE_PARAMETER

definition = NodeDefinition(
    id="llm-completion",
    name="LLM Completion",
    description="One call to a language model: a prompt in, the streamed answer out.",
    category="ai",
    icon="sparkles",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="prompt", label="Prompt", type="text", mode="hybrid", default="",
                  placeholder="Empty: the input's message (or response, or text)",
                  description="What to ask. Empty uses the primary text of the input."),
        Parameter(id="system_prompt", label="System prompt", type="text", default="",
                  placeholder="You are a concise assistant."),
        MODEL_PARAMETER,
        TEMPERATURE_PARAMETER,
        Parameter(id="max_tokens", label="Max tokens", type="int", default=None, min=1,
                  description="Empty: no limit beyond the model's own."),
    ),
    outputs=(Socket(id="output", label="Output", side="right", description="{text, usage}"),),
)
