"""The fake OpenAI server itself, through the real openai SDK: streaming, tool calls, usage, errors, echo."""

from __future__ import annotations

import json

import openai
import pytest

from tests.llm.fake_openai import http_error, text, tool_call


def client(fake) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=fake.base_url, api_key="test", max_retries=0)


async def test_streams_tokens_reasoning_and_usage(fake_llm):
    fake_llm.script(text(["Hel", "lo", "!"], reasoning=["think", "ing"]))
    stream = await client(fake_llm).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi there"}], stream=True,
        stream_options={"include_usage": True})
    content, reasoning, usage = [], [], None
    async for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            if choice.delta.content:
                content.append(choice.delta.content)
            if getattr(choice.delta, "reasoning_content", None):
                reasoning.append(choice.delta.reasoning_content)
    assert content == ["Hel", "lo", "!"]
    assert reasoning == ["think", "ing"]
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (2, 3, 5)
    assert fake_llm.requests[0]["messages"] == [{"role": "user", "content": "hi there"}]
    assert fake_llm.streams[0].finished and not fake_llm.streams[0].abandoned


async def test_tool_call_arguments_arrive_in_fragments(fake_llm):
    fake_llm.script(tool_call("add", {"a": 12345, "b": "some longer text"}))
    stream = await client(fake_llm).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "add"}], stream=True)
    fragments, names, finish = [], [], None
    async for chunk in stream:
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or []:
                if call.function.name:
                    names.append(call.function.name)
                if call.function.arguments:
                    fragments.append(call.function.arguments)
    assert names == ["add"] and len(fragments) > 1 and finish == "tool_calls"
    assert json.loads("".join(fragments)) == {"a": 12345, "b": "some longer text"}


async def test_non_stream_and_default_echo(fake_llm):
    fake_llm.script(tool_call("f", {"x": 1}))
    called = await client(fake_llm).chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
    assert called.choices[0].message.tool_calls[0].function.name == "f"
    echoed = await client(fake_llm).chat.completions.create(model="m", messages=[{"role": "user", "content": "ping"}])
    assert echoed.choices[0].message.content == "echo: ping"
    assert len(fake_llm.requests) == 2


async def test_http_error(fake_llm):
    fake_llm.script(http_error(500, "boom"))
    with pytest.raises(openai.InternalServerError) as raised:
        await client(fake_llm).chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
    assert raised.value.status_code == 500 and "boom" in str(raised.value)


async def test_match_picks_the_reply_for_a_request(fake_llm):
    fake_llm.script(text("for b", match=lambda body: body["model"] == "b"), text("for a"))
    a = await client(fake_llm).chat.completions.create(model="a", messages=[{"role": "user", "content": "q"}])
    b = await client(fake_llm).chat.completions.create(model="b", messages=[{"role": "user", "content": "q"}])
    assert (a.choices[0].message.content, b.choices[0].message.content) == ("for a", "for b")
