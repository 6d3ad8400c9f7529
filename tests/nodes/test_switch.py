"""nodes/flow/switch: conditions in order, first match wins, `else` otherwise; ports repeat per condition."""

import pytest

from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError
from nodes.flow.switch.definition import definition
from nodes.flow.switch.executor import executor

ORDER = {"status": "Shipped", "total": 120, "items": ["book", "pen"]}


def ctx() -> FlowContext:
    return FlowContext(node_id="switch-1", node_type="switch", run_id="run-1", runtime=None)


async def run(input, conditions, **data) -> ExecutionResult:
    return await executor.execute({**definition.defaults(), "conditions": conditions, **data}, {"input": input}, ctx())


def cond(field, operator, value=""):
    return {"field": field, "operator": operator, "value": value}


def test_ports_repeat_per_condition_plus_else():
    ports = definition.output_sockets({"conditions": [cond("a", "equals"), cond("b", "equals")]})
    assert list(ports) == ["condition-0", "condition-1", "else"]
    assert list(definition.output_sockets(definition.defaults())) == ["condition-0", "else"]


async def test_first_match_wins():
    conditions = [cond("status", "equals", "pending"), cond("total", "gt", "100"), cond("items", "contains", "pen")]
    result = await run(ORDER, conditions)
    assert result.outputs == {"condition-1": ORDER}
    assert result.outputs["condition-1"] is ORDER


async def test_no_match_goes_to_else():
    assert (await run(ORDER, [cond("status", "equals", "pending")])).outputs == {"else": ORDER}
    assert (await run(ORDER, [])).outputs == {"else": ORDER}


@pytest.mark.parametrize("condition", [
    cond("status", "equals", "shipped"), cond("status", "not_equals", "pending"), cond("status", "contains", "hip"),
    cond("status", "not_contains", "x"), cond("status", "starts_with", "ship"), cond("status", "ends_with", "PED"),
    cond("total", "gt", "119"), cond("total", "gte", "120"), cond("total", "lt", "121"), cond("total", "lte", "120"),
    cond("missing", "is_empty"), cond("items", "is_not_empty"), cond("status", "regex", "^sh.+d$"),
])
async def test_each_operator_can_match(condition):
    assert (await run(ORDER, [cond("status", "equals", "never"), condition])).outputs == {"condition-1": ORDER}


async def test_case_sensitive_applies_to_every_condition():
    conditions = [cond("status", "equals", "shipped"), cond("status", "equals", "Shipped")]
    assert (await run(ORDER, conditions, case_sensitive=True)).outputs == {"condition-1": ORDER}


async def test_condition_defaults_to_equals_on_the_whole_input():
    assert (await run("hi", [{"value": "HI"}])).outputs == {"condition-0": "hi"}


async def test_errors_name_the_condition():
    with pytest.raises(NodeError, match=r"condition 1 \(field 'status'\): operator 'gt' compares numbers, "
                                        r"but 'Shipped' is not a number"):
        await run(ORDER, [cond("total", "lt", "0"), cond("status", "gt", "1")])
    with pytest.raises(NodeError, match=r"condition 0: invalid regular expression '\*'"):
        await run(ORDER, [cond("", "regex", "*")])
    with pytest.raises(NodeError, match="condition 0 must be an object"):
        await run(ORDER, ["status == 1"])
    with pytest.raises(NodeError, match=r"condition 0 \(field 'total'\): unknown operator 'equal'"):
        await run(ORDER, [cond("total", "equal", "1")])


#   START ──> SW ─else─> B      (SW's conditions come from an expression: the graph gave it only `else`)
async def test_a_route_to_an_output_the_node_does_not_have_fails_naming_node_item_and_port():
    """A list from an expression may be longer than the one the ports were made from: the item went nowhere."""
    from nodeflow_app.runtime.engine import start_run
    from nodes._registry import BUILTIN_ROOT, load_folder
    from tests.runtime import toys

    reg = toys.registry()
    reg.add(load_folder(BUILTIN_ROOT / "flow" / "switch"))
    graph = toys.graph([("s", "start"), ("sw", "pass", {"conditions": "{{ $json.conds }}"}), ("b", "pass")],
                       ["s.out -> sw.input", "sw.else -> b.in"])
    graph["nodes"][1]["type"] = "switch"
    payload = {"n": 1, "conds": [cond("n", "equals", "2"), cond("n", "equals", "1")]}
    run = start_run(graph, reg, payload=payload)
    [event async for event in run.events()]
    assert run.status == "failed"
    assert run.error == ("node 'SW' failed: it sent {'n': 1, 'conds': [{'field': 'n', 'operator': 'equals', "
                         "'... to output 'condition-1', which it does not have (its outputs: else)")
