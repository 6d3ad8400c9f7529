from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="model-selector",
    name="Model Selector",
    description="Choose an LLM provider and model once and wire it into agents and LLM nodes.",
    category="utility",
    icon="cpu",
    parameters=(
        Parameter(id="provider", label="Provider", type="select", default="openai", options=(
            Option(value="openai", label="OpenAI"),
            Option(value="anthropic", label="Anthropic"),
            Option(value="google", label="Google"),
            Option(value="groq", label="Groq"),
            Option(value="ollama", label="Ollama"),
            Option(value="openrouter", label="OpenRouter"),
            Option(value="openai-compatible", label="OpenAI-compatible URL"),
        )),
        # Not `model`: parameter and socket ids share one namespace, and the output is `model`.
        Parameter(id="model_id", label="Model", default="gpt-4o-mini", placeholder="gpt-4o-mini",
                  description="The provider's model name."),
        Parameter(id="base_url", label="Base URL", default="", placeholder="http://localhost:11434/v1",
                  description="Needed for an OpenAI-compatible server; optional for Ollama."),
        Parameter(id="temperature", label="Temperature", type="float", default=None, min=0, max=2, step=0.1,
                  description="Empty uses the provider's default."),
    ),
    outputs=(Socket(id="model", label="Model", type="model", channel="link", side="right"),),
)
