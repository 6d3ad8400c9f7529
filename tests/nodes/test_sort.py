"""nodes/data/sort: stable multi-key sort, ascending / descending, natural or numeric; missing values last."""

import pytest

from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError
from nodes.data.sort.definition import definition
from nodes.data.sort.executor import executor


def ctx() -> FlowContext:
    return FlowContext(node_id="sort-1", node_type="sort", run_id="run-1", runtime=None)


async def run(input, *keys, **data) -> list:
    rows = [{"field": f, "order": o, "compare": c} for f, o, c in keys]
    result: ExecutionResult = await executor.execute(
        {**definition.defaults(), **({"keys": rows} if rows else {}), **data}, {"input": input}, ctx())
    return result.outputs["output"]


FILES = [{"name": "file10.txt"}, {"name": "File2.txt"}, {"name": "file1.txt"}, {"name": "a"}, {"size": 3}]


async def test_natural_order_reads_digit_runs_as_numbers_and_ignores_case():
    names = [f.get("name") for f in await run(FILES, ("name", "ascending", "natural"))]
    assert names == ["a", "file1.txt", "File2.txt", "file10.txt", None]  # the item without a name goes last


async def test_natural_order_compares_digit_runs_longer_than_python_reads():
    long = ["v" + "9" * 5_000, "v" + "1" * 5_001, "v" + "0" * 3 + "8" * 5_000, "v10"]
    assert await run(long, ("", "ascending", "natural")) == [long[3], long[2], long[0], long[1]]
    arabic = ["v\u0661\u0660", "v\u0660\u0667", "v\u0669"]  # 10, 07, 9 in Arabic-Indic digits
    assert await run(arabic, ("", "ascending", "natural")) == [arabic[1], arabic[2], arabic[0]]


async def test_descending_keeps_missing_values_last():
    names = [f.get("name") for f in await run(FILES, ("name", "descending", "natural"))]
    assert names == ["file10.txt", "File2.txt", "file1.txt", "a", None]


async def test_numbers_and_numeric_text_sort_by_value_before_text():
    assert await run([10, "9", 2.5, "b", "a", None, True], ("", "ascending", "natural")) == \
        [2.5, "9", 10, "a", "b", True, None]


async def test_numeric_order_and_its_error_names_the_item():
    assert await run(["10", 9, "-1.5"], ("", "descending", "numeric")) == ["10", 9, "-1.5"]
    with pytest.raises(NodeError, match=r"item 1, sort by row 0 \(field 'price'\): numeric order needs numbers, "
                                        r"but 'cheap' is not a number"):
        await run([{"price": 1}, {"price": "cheap"}], ("price", "ascending", "numeric"))


async def test_later_keys_break_ties_and_equal_items_keep_their_order():
    people = [{"n": "a", "team": "x", "age": 30}, {"n": "b", "team": "y", "age": 30},
              {"n": "c", "team": "x", "age": 25}, {"n": "d", "team": "x", "age": 30}]
    ordered = await run(people, ("team", "ascending", "natural"), ("age", "descending", "numeric"))
    assert [p["n"] for p in ordered] == ["a", "d", "c", "b"]
    assert [p["n"] for p in await run(people, ("age", "ascending", "numeric"))] == ["c", "a", "b", "d"]


async def test_list_field_and_the_input_stays_unchanged():
    source = {"cart": {"lines": [{"sku": "b"}, {"sku": "a"}]}}
    assert await run(source, ("sku", "ascending", "natural"), field="cart.lines") == [{"sku": "a"}, {"sku": "b"}]
    assert source == {"cart": {"lines": [{"sku": "b"}, {"sku": "a"}]}}


async def test_bad_rows_are_named():
    with pytest.raises(NodeError, match="sort by must be a list of at least one"):
        await run([1], keys=[])
    with pytest.raises(NodeError, match=r"sort by row 1: order must be 'ascending' or 'descending', got 'up'"):
        await run([1], ("", "ascending", "natural"), ("", "up", "natural"))
    with pytest.raises(NodeError, match=r"sort by row 0: compare must be 'natural' or 'numeric'"):
        await run([1], ("", "ascending", "alpha"))
    with pytest.raises(NodeError, match=r"the input \(List field is empty\) holds str"):
        await run("abc", ("", "ascending", "natural"))


async def test_a_field_an_expression_made_a_number_is_read_as_its_text():
    assert await run([{"3": 2}, {"3": 1}], (3, "ascending", "natural")) == [{"3": 1}, {"3": 2}]
