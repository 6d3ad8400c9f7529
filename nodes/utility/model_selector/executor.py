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
    """`{ref: "provider:model", provider, model, base_url, temperature, credential}`, validated."""
    provider = (data.get("provider") or "openai").strip()
    if provider not in PROVIDERS:
        raise NodeError(f"unknown provider {provider!r}; use one of: {', '.join(PROVIDERS)}")
    model = str(data.get("model_id") or "").strip()
    if not model:
        raise NodeError(f"choose a model for provider {provider!r} (for example gpt-4o-mini)")
    # No base URL: the install's own (NODEFLOW_OPENAI_COMPATIBLE_BASE_URL, Settings); the model says when there is none.
    base_url = str(data.get("base_url") or "").strip() or None
    credential = str(data.get("credential") or "").strip() or None
    if credential is not None and credential not in PROVIDERS:
        raise NodeError(f"unknown key {credential!r} for the base URL; use one of: {', '.join(PROVIDERS)}")
    temperature = data.get("temperature")
    if temperature is not None and temperature != "":
        number = to_number(temperature)
        if number is None or not 0 <= number <= 2:
            raise NodeError(f"temperature must be a number from 0 to 2, got {temperature!r}")
        temperature = number
    else:
        temperature = None
    return {"ref": f"{provider}:{model}", "provider": provider, "model": model,
            "base_url": base_url, "temperature": temperature, "credential": credential}


executor = ModelSelectorExecutor()
