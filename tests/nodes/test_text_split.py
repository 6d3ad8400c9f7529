"""nodes/data/text_split: split by separator, time-limited regex, lines or sentences; join with a separator."""

import time

import pytest

from nodeflow_app.contract import FlowContext, NodeError
from nodes.data.text_split.definition import definition
from nodes.data.text_split.executor import executor, sentences
from tests.nodes.loop_ticks import loop_ticks


async def run(input, **data):
    ctx = FlowContext(node_id="ts-1", node_type="text-split", run_id="run-1", runtime=None)
    return (await executor.execute({**definition.defaults(), **data}, {"input": input}, ctx)).outputs["output"]


async def test_separator_trims_and_drops_empty_parts_by_default():
    assert await run("a, b,,c ,") == ["a", "b", "c"]
    assert await run("a, b,,c ,", trim=False, remove_empty=False) == ["a", " b", "", "c ", ""]
    assert await run("a::b", separator="::") == ["a", "b"]
    assert await run("a\tb", separator=r"\t") == ["a", "b"]


async def test_regex():
    assert await run("one; two ,three", split_by="regex", pattern=r"\s*[;,]\s*") == ["one", "two", "three"]
    with pytest.raises(NodeError, match=r"invalid regular expression '\[a-': unterminated character set at position 3"):
        await run("x", split_by="regex", pattern="[a-")
    with pytest.raises(NodeError, match=r"regular expression '\(a\|aa\)\+\$' ran longer than 1 s"):
        await run("a" * 60 + "b", split_by="regex", pattern="(a|aa)+$")


async def test_a_slow_regex_is_searched_off_the_event_loop():
    """A search stops at its 1 s limit, but on the event loop it held every other run for that second (a For Each
    of such texts: one second per item)."""
    async with loop_ticks() as ticks:
        with pytest.raises(NodeError, match="ran longer than 1 s"):
            await run("a" * 60 + "b", split_by="regex", pattern="(a|aa)+$")
    assert ticks[0] >= 20, ticks  # the event loop kept running (blocked, it would not have ticked at all)


async def test_a_group_in_the_pattern_does_not_make_the_separators_parts():
    assert await run("a, b; c", split_by="regex", pattern=r"\s*(;|,)\s*") == ["a", "b", "c"]
    assert await run("oneTwoThree", split_by="regex", pattern="(?=[A-Z])") == ["one", "Two", "Three"]


async def test_lines():
    assert await run("first\r\nsecond\n\n third \n", split_by="lines") == ["first", "second", "third"]


async def test_sentences_keep_abbreviations_initials_and_lowercase_continuations():
    text = 'Dr. Who met J. Smith. "Run!" he said. Is it approx. three? Yes... Then they left'
    assert await run(text, split_by="sentences") == [
        "Dr. Who met J. Smith.", '"Run!" he said.', "Is it approx. three?", "Yes...", "Then they left"]


def test_sentences_take_linear_time_on_a_book_sized_text():
    """Each cut used to copy the rest of the text (quadratic: 2 MB of prose took 83 s, 40,000 periods 29 s)."""
    sentence = "Dr. Who met J. Smith at approx. ten. They left... " + "." * 40 + " next! "

    def seconds(copies: int) -> float:
        text = sentence * copies
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            assert len(sentences(text)) == 3 * copies + 1
            best = min(best, time.perf_counter() - started)
        return best

    small, large = seconds(2_000), seconds(16_000)
    assert large < 20 * small, f"8x the text took {large / small:.0f}x the time"  # quadratic: ~64x


async def test_field_and_primary_text():
    assert await run({"mail": {"body": "x y"}}, field="mail.body", separator=" ") == ["x", "y"]
    assert await run({"message": "a,b", "other": 1}) == ["a", "b"]


async def test_join():
    assert await run(["a", 1, {"b": 2}, None], operation="join", separator=r"\n") == 'a\n1\n{"b":2}\n'
    assert await run({"tags": ["x", "y"]}, operation="join", field="tags", separator=" | ") == "x | y"


async def test_errors_name_the_field():
    with pytest.raises(NodeError, match=r"to split, field 'n' must be text, not int '3'"):
        await run({"n": 3}, field="n")
    with pytest.raises(NodeError, match=r"to join, the input \(Field is empty\) must be a list, not str 'ab'"):
        await run("ab", operation="join")
    with pytest.raises(NodeError, match=r"nothing at field 'body'"):
        await run({"text": "x"}, field="body")
    with pytest.raises(NodeError, match="separator is empty"):
        await run("ab", separator="")
    with pytest.raises(NodeError, match="pattern is empty"):
        await run("ab", split_by="regex")
