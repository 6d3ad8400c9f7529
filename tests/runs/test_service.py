"""RunService: re-runs and run-to execute only stale nodes, pins are test data, chat runs never reuse outputs.

    Manual --> A --> B --> C
                \\--> D
"""

from __future__ import annotations

from contextlib import aclosing

import pytest

from nodeflow_app.chat.patch import step_ports, step_statuses
from nodeflow_app.chat.service import ChatService
from nodeflow_app.runs.live import step_batches
from nodeflow_app.runs.service import RunRefused, RunService
from nodes.trigger.chat_start.definition import definition as chat_start
from nodeflow_app.store.db import make_engine
from tests.llm.graphs import graph
from tests.store.postgres import POSTGRES_URL, private_schema


def fields(**values) -> dict:
    return {"fields": [{"name": k, "value": v} for k, v in values.items()]}


def chain(b_value: str = "one") -> dict:
    return graph([("manual", "manual-trigger", {"payload": {"n": 1}}), ("a", "edit-fields", fields(a=1)),
                  ("b", "edit-fields", fields(b=b_value)), ("c", "edit-fields", fields(c=3)),
                  ("d", "edit-fields", fields(d=4))],
                 ["manual.output -> a.input", "a.output -> b.input", "b.output -> c.input", "a.output -> d.input"])


def executed(run) -> list[str]:
    return sorted(n for n, r in run.records.items() if r.status == "completed" and not r.cached)


def cached(run) -> list[str]:
    return sorted(n for n, r in run.records.items() if r.cached)


@pytest.fixture
def sqlite_engine(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'nodeflow.db'}")
    yield engine
    engine.dispose()


@pytest.fixture
def postgresql_engine():
    with private_schema() as schema:
        engine = make_engine(POSTGRES_URL)
        yield engine.execution_options(schema_translate_map={None: schema})
        engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request):
    return request.getfixturevalue(f"{request.param}_engine")


@pytest.fixture
def service(engine):
    runs = RunService(engine)
    yield runs
    runs.close()


async def test_a_rerun_after_an_edit_executes_only_the_edited_node_and_downstream(service):
    graph_id = service.graphs.create("Chain", chain()).id
    first = await service.rerun(graph_id).run()
    assert executed(first) == ["a", "b", "c", "d", "manual"]
    assert service.stale(graph_id) == set()

    service.graphs.save(graph_id, chain(b_value="two"))
    assert service.stale(graph_id) == {"b", "c"}
    second = await service.rerun(graph_id).run()
    assert executed(second) == ["b", "c"] and cached(second) == ["a", "d", "manual"]
    assert second.outputs_by_name()["C"] == {"output": {"n": 1, "a": 1, "b": "two", "c": 3}}

    runs = service.list_runs(graph_id)
    assert [r["id"] for r in runs] == [second.run_id, first.run_id]
    assert [(r["trigger_name"], r["status"], r["graph_version"]) for r in runs] == [
        ("MANUAL", "completed", 2), ("MANUAL", "completed", 1)]
    stored = {n["node_id"]: n for n in service.get_run(second.run_id)["nodes"]}
    assert stored["a"]["cached"] and not stored["b"]["cached"]
    assert stored["b"]["inputs"] == {"input": {"n": 1, "a": 1}} and stored["b"]["outputs"]["output"]["b"] == "two"


async def test_run_to_runs_the_node_and_what_it_depends_on_only(service):
    graph_id = service.graphs.create("Chain", chain()).id
    run = await service.run_to(graph_id, "b").run()
    assert sorted(run.records) == ["a", "b", "manual"] and executed(run) == ["a", "b", "manual"]
    again = await service.run_to(graph_id, "c").run()
    assert executed(again) == ["c"] and cached(again) == ["a", "b", "manual"]
    with pytest.raises(RunRefused, match="no node 'nope'"):
        service.run_to(graph_id, "nope")


async def test_a_pin_replaces_the_node_in_test_runs_and_survives_a_new_process(service, engine):
    graph_id = service.graphs.create("Chain", chain()).id
    await service.rerun(graph_id).run()
    service.pin_text(graph_id, "b", '{"output": {"pinned": true}}')
    assert service.stale(graph_id) == {"c"}  # B uses its pin: only what follows it runs
    run = await service.rerun(graph_id).run()
    assert executed(run) == ["c"] and run.outputs_by_name()["C"] == {"output": {"pinned": True, "c": 3}}

    fresh = RunService(engine, caches=type(service.caches)())  # another process: empty caches, same database
    assert fresh.pinned(graph_id) == {"b": {"output": {"pinned": True}}}
    assert (await fresh.run_to(graph_id, "b").run()).outputs_by_name()["B"] == {"output": {"pinned": True}}
    fresh.unpin(graph_id, "b")
    assert fresh.pinned(graph_id) == {} and "b" in fresh.stale(graph_id)
    fresh.close()


def test_a_pin_that_does_not_fit_is_refused_saying_why(service):
    graph_id = service.graphs.create("Chain", chain()).id
    with pytest.raises(RunRefused, match=r"invalid JSON at line 2, column 1: Expecting value"):
        service.pin_text(graph_id, "b", '{"output":\n}')
    with pytest.raises(RunRefused, match=r"'result' is not an output of 'B' \(its outputs: output\)"):
        service.pin_text(graph_id, "b", '{"result": 1}')
    with pytest.raises(RunRefused, match="must be a JSON object of output ports"):
        service.pin_text(graph_id, "b", "[1]")
    assert service.pinned(graph_id) == {}


async def test_chat_runs_record_outputs_but_never_reuse_them_nor_pins(sqlite_engine):
    #  Chat Start --> A
    raw = graph([("chat", "chat-start", {}), ("a", "edit-fields", fields(a=1))], ["chat.output -> a.input"])
    chats, runs = ChatService(sqlite_engine, interval=0.01), RunService(sqlite_engine)
    graph_id = runs.graphs.create("Chat", raw).id
    chat = chats.create_chat(graph_id)
    runs.pin(graph_id, "a", {"output": {"pinned": True}})
    for _ in range(2):
        async with aclosing(chats.send(chat.id, "hi")) as updates:
            last = [u async for u in updates][-1]
        stored = {n["node_id"]: n for n in runs.get_run(last.run_id)["nodes"]}
        assert not stored["chat"]["cached"] and not stored["a"]["cached"]
        assert stored["a"]["outputs"]["output"]["a"] == 1  # the pin is not used either
    runs.unpin(graph_id, "a")
    rerun = await runs.rerun(graph_id).run()  # the last chat message's payload: what the chat computed is reused
    assert rerun.payload == "hi" and cached(rerun) == ["a", "chat"]  # the chat sends the text; Chat Start shapes it
    chats.close()
    runs.close()


def test_a_chat_start_gets_a_test_message_before_its_first_run(service):
    raw = graph([("chat", "chat-start", {}), ("a", "edit-fields", fields(a=1))], ["chat.output -> a.input"])
    graph_id = service.graphs.create("Chat", raw).id
    assert service.rerun(graph_id).payload == chat_start.example_payload


def test_a_graph_without_a_trigger_is_refused(service):
    graph_id = service.graphs.create("Empty", graph([("a", "edit-fields", {})], [])).id
    with pytest.raises(RunRefused, match="add a trigger"):
        service.rerun(graph_id)


async def test_step_batches_carry_every_status_and_the_ports_data_left_by(service):
    graph_id = service.graphs.create("Chain", chain()).id
    run = service.rerun(graph_id)
    statuses, ports = {}, {}
    async with aclosing(step_batches(run, interval=0.001)) as batches:
        async for ops in batches:
            statuses.update(step_statuses(ops))
            ports.update(step_ports(ops))
    assert statuses == {n: "completed" for n in ("manual", "a", "b", "c", "d")}
    assert ports["a"] == ["output"] and run.status == "completed"
