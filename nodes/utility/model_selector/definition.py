from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

PROVIDER_LABELS = (
    ("openai", "OpenAI"), ("anthropic", "Anthropic"), ("google", "Google"), ("groq", "Groq"),
    ("ollama", "Ollama"), ("openrouter", "OpenRouter"), ("openai-compatible", "OpenAI-compatible URL"),
)

definition = NodeDefinition(
    id="model-selector",
    name="Model Selector",
    description="Choose an LLM provider and model once and wire it into agents and LLM nodes.",
    category="utility",
    icon="cpu",
    parameters=(
        Parameter(id="provider", label="Provider", type="select", default="openai",
                  options=tuple(Option(value=value, label=label) for value, label in PROVIDER_LABELS)),
        # Not `model`: parameter and socket ids share one namespace, and the output is `model`.
        Parameter(id="model_id", label="Model", default="gpt-4o-mini", placeholder="gpt-4o-mini",
                  description="The provider's model name."),
        Parameter(id="base_url", label="Base URL", default="", placeholder="http://localhost:11434/v1",
                  description="Empty uses the install's URL for the provider (Settings, or "
                              "NODEFLOW_OPENAI_COMPATIBLE_BASE_URL). Another URL gets no key unless Key for "
                              "this URL names one, and must be a public address unless NODEFLOW_HTTP_ALLOWLIST "
                              "lists it."),
        Parameter(id="credential", label="Key for this URL", type="select", default="", options=(
            Option(value="", label="No key"),
            *(Option(value=value, label=f"The {label} key") for value, label in PROVIDER_LABELS),
        ), description="Only for a Base URL written here: the workspace key stored with this same URL "
                       "(Settings) that may be sent to it; any other key is refused."),
        Parameter(id="temperature", label="Temperature", type="float", default=None, min=0, max=2, step=0.1,
                  description="Empty uses the provider's default."),
    ),
    outputs=(Socket(id="model", label="Model", type="model", channel="link", side="right"),),
)
