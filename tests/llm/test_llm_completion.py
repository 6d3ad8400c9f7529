"""nodes/ai/llm_completion through real Agno and real HTTP against the fake OpenAI server.

    Chat Start --> LLM Completion      (Model Selector ==model==> LLM Completion, in one test)
"""

from __future__ import annotations

import pytest

from tests.llm.fake_openai import http_error, text
from tests.llm.graphs import MODEL, graph, of, run_graph


def completion_graph(**data) -> dict:
    return graph([("chat", "chat-start", {}), ("llm", "llm-completion", {"model": MODEL, **data})],
                 ["chat.output -> llm.input"])


async def test_streams_tokens_and_outputs_text_and_usage(fake_llm):
    fake_llm.script(text(["The", " answer", "", " is", " 42"]))
    run, events = await run_graph(completion_graph(system_prompt="Be brief."), payload="What is it?")
    assert run.status == "completed", run.error
    assert [e.data["text"] for e in of(events, "llm", "token")] == ["The", " answer", " is", " 42"]
    output = run.outputs_by_name()["LLM"]["output"]
    assert output["text"] == "The answer is 42"
    assert output["usage"]["output_tokens"] == 5 and output["usage"]["total_tokens"] > 5
    request = fake_llm.requests[0]
    assert request["model"] == "fake-model" and request["stream"] is True
    assert request["messages"] == [{"role": "system", "content": "Be brief."},
                                   {"role": "user", "content": "What is it?"}]


async def test_prompt_parameter_with_an_expression_and_settings(fake_llm):
    run, _ = await run_graph(completion_graph(prompt="Translate: {{ $json.message }}", temperature=0.3,
                                              max_tokens=20), payload="bonjour")
    assert run.outputs_by_name()["LLM"]["output"]["text"] == "echo: Translate: bonjour"
    request = fake_llm.requests[0]
    assert (request["temperature"], request["max_tokens"]) == (0.3, 20)
    assert [m["role"] for m in request["messages"]] == ["user"]


async def test_a_wired_model_selector_wins_over_the_inline_model(fake_llm):
    raw = graph([("chat", "chat-start", {}),
                 ("sel", "model-selector", {"provider": "openai-compatible", "model_id": "selected",
                                            "base_url": fake_llm.base_url, "temperature": 1.5}),
                 ("llm", "llm-completion", {"model": "openai:never-used"})],
                ["chat.output -> llm.input", "sel.model => llm.model"])
    run, _ = await run_graph(raw, payload="hi")
    assert run.status == "completed", run.error
    assert (fake_llm.requests[0]["model"], fake_llm.requests[0]["temperature"]) == ("selected", 1.5)


async def test_provider_http_500_names_provider_model_and_status(fake_llm):
    fake_llm.script(http_error(500, "the GPU caught fire"))
    run, events = await run_graph(completion_graph(), payload="hi")
    assert run.status == "failed"
    [error] = of(events, "llm", "error")
    assert error.data["error"] == "model openai-compatible:fake-model failed (HTTP 500): the GPU caught fire"
    assert len(fake_llm.requests) == 1  # max_retries=0: one request, no retry storm


@pytest.mark.parametrize("data, message", [
    ({"model": "gpt-4o"}, "a model is written provider:model"),
    ({"model": ""}, "choose a model (provider:model"),
    ({"temperature": 3}, "above the maximum"),
])
async def test_bad_settings_are_clear_errors(fake_llm, data, message):
    from nodeflow_app.runtime.graph import GraphInvalid

    try:
        run, events = await run_graph(completion_graph(**data), payload="hi")
    except GraphInvalid as invalid:  # the normalizer refuses some values before the run
        assert message in str(invalid)
        return
    assert run.status == "failed" and message in of(events, "llm", "error")[0].data["error"]
    assert fake_llm.requests == []


async def test_empty_prompt_and_input_is_an_error(fake_llm):
    run, events = await run_graph(completion_graph(), payload="")
    assert "nothing to ask" in of(events, "llm", "error")[0].data["error"]
