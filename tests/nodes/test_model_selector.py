"""nodes/utility/model_selector: materializes a model reference (pure data) on its `model` link output."""

import pytest

from nodeflow_app.contract import FlowContext, NodeError
from nodes.utility.model_selector.definition import definition
from nodes.utility.model_selector.executor import executor


def ctx() -> FlowContext:
    return FlowContext(node_id="model-1", node_type="model-selector", run_id="run-1", runtime=None)


async def materialize(handle="model", **data):
    return await executor.materialize({**definition.defaults(), **data}, handle, ctx())


def test_model_is_a_link_output_and_there_is_no_execute():
    socket = definition.output_sockets()["model"]
    assert (socket.type, socket.channel, socket.side) == ("model", "link", "right")
    assert not hasattr(executor, "execute")


async def test_defaults():
    assert await materialize() == {"ref": "openai:gpt-4o-mini", "provider": "openai", "model": "gpt-4o-mini",
                                   "base_url": None, "temperature": None, "credential": None}


@pytest.mark.parametrize("provider", [o.value for o in definition.parameter("provider").options])
async def test_every_provider(provider):
    reference = await materialize(provider=provider, model_id="m-1", base_url="http://llm.local/v1")
    assert reference["ref"] == f"{provider}:m-1"
    assert reference["base_url"] == "http://llm.local/v1"


async def test_openai_compatible_with_base_url_and_temperature():
    reference = await materialize(provider="openai-compatible", model_id=" qwen2.5 ", base_url=" http://x:8000/v1 ",
                                  temperature=0.3)
    assert reference == {"ref": "openai-compatible:qwen2.5", "provider": "openai-compatible", "model": "qwen2.5",
                         "base_url": "http://x:8000/v1", "temperature": 0.3, "credential": None}


@pytest.mark.parametrize("temperature, expected", [(0, 0.0), (2, 2.0), ("0.7", 0.7), ("", None), (None, None)])
async def test_temperature(temperature, expected):
    assert (await materialize(temperature=temperature))["temperature"] == expected


@pytest.mark.parametrize("data, message", [
    ({"provider": "mistral"}, "unknown provider 'mistral'; use one of: openai, anthropic"),
    ({"model_id": "  "}, "choose a model for provider 'openai'"),
    ({"credential": "vault"}, "unknown key 'vault' for the base URL"),
    ({"temperature": 2.5}, "temperature must be a number from 0 to 2, got 2.5"),
    ({"temperature": "hot"}, "temperature must be a number from 0 to 2, got 'hot'"),
])
async def test_bad_settings(data, message):
    with pytest.raises(NodeError, match=message):
        await materialize(**data)


async def test_unknown_output_handle():
    with pytest.raises(NodeError, match="Model Selector has no output 'tools'"):
        await materialize("tools")


async def test_openai_compatible_without_a_base_url_uses_the_installs(monkeypatch):
    """Issue 11: refused with "needs a base URL" although NODEFLOW_OPENAI_COMPATIBLE_BASE_URL was set."""
    from nodeflow_app.llm.providers import COMPATIBLE_BASE_URL_ENV, build_model

    monkeypatch.setenv(COMPATIBLE_BASE_URL_ENV, "http://llm.install:8000/v1")
    reference = await materialize(provider="openai-compatible", model_id="qwen", base_url="")
    assert reference["base_url"] is None
    assert build_model(reference).base_url == "http://llm.install:8000/v1"


async def test_a_credential_is_chosen_for_a_base_url():
    reference = await materialize(provider="openai-compatible", base_url="https://llm.example/v1",
                                  credential="openai-compatible")
    assert reference["credential"] == "openai-compatible"
