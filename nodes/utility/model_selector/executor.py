"""Model Selector: materializes a model reference (pure data); the LLM layer turns it into a client."""

from typing import Any

from nodes._helpers import to_number
from nodeflow_app.contract import FlowContext, NodeError

PROVIDERS = ("openai", "anthropic", "google", "groq", "ollama", "openrouter", "openai-compatible")


class ModelSelectorExecutor:
    node_type = "model-selector"

    async def materialize(self, data: dict[str, Any], output_handle: str, ctx: FlowContext) -> dict[str, Any]:
        if output_handle != "model":
            raise NodeError(f"Model Selector has no output {output_handle!r} (it only provides 'model')")
        return model_reference(data)


def model_reference(data: dict[str, Any]) -> dict[str, Any]:
    """`{ref: "provider:model", provider, model, base_url, temperature}`, validated."""
    provider = (data.get("provider") or "openai").strip()
    if provider not in PROVIDERS:
        raise NodeError(f"unknown provider {provider!r}; use one of: {', '.join(PROVIDERS)}")
    model = str(data.get("model_id") or "").strip()
    if not model:
        raise NodeError(f"choose a model for provider {provider!r} (for example gpt-4o-mini)")
    base_url = str(data.get("base_url") or "").strip() or None
    if provider == "openai-compatible" and base_url is None:
        raise NodeError("an OpenAI-compatible provider needs a base URL (for example http://localhost:8000/v1)")
    temperature = data.get("temperature")
    if temperature is not None and temperature != "":
        number = to_number(temperature)
        if number is None or not 0 <= number <= 2:
            raise NodeError(f"temperature must be a number from 0 to 2, got {temperature!r}")
        temperature = number
    else:
        temperature = None
    return {"ref": f"{provider}:{model}", "provider": provider, "model": model,
            "base_url": base_url, "temperature": temperature}


executor = ModelSelectorExecutor()
