"""Reactive re-runs: only stale nodes execute; the rest reuse cached outputs; pins win."""

from __future__ import annotations

from nodeflow_app.runtime.cache import OutputCache
from nodeflow_app.runtime.engine import run_to, start_run
from nodeflow_app.runtime.run import RunHooks
from nodeflow_app.contract import NodeDefinition

from tests.runtime import toys


def executed(run):
    return sorted(n for n, r in run.records.items() if r.status == "completed" and not r.cached)


def chain(label_b="b"):
    #  S --> A --> B --> C
    #         \--> D
    return toys.graph([("s", "start"), ("a", "pass"), ("b", "pass", {"label": label_b}), ("c", "pass"), ("d", "pass")],
                      ["s.out -> a.in", "a.out -> b.in", "b.out -> c.in", "a.out -> d.in"])


async def test_rerun_after_an_edit_executes_only_the_edited_node_and_downstream():
    cache, registry = OutputCache(), toys.registry()
    first = await start_run(chain(), registry, payload=1, hooks=RunHooks(cache=cache)).run()
    assert executed(first) == ["a", "b", "c", "d", "s"]
    plan = first.plan
    assert cache.stale_nodes(plan, "s", 1) == set()
    edited = start_run(chain(label_b="changed"), registry, payload=1, hooks=RunHooks(cache=cache))
    assert cache.stale_nodes(edited.plan, "s", 1) == {"b", "c"}
    await edited.run()
    assert executed(edited) == ["b", "c"]
    assert edited.records["d"].cached and edited.outputs_by_name()["C"] == {"out": 1}


async def test_a_different_payload_makes_everything_stale():
    cache, registry = OutputCache(), toys.registry()
    await start_run(chain(), registry, payload=1, hooks=RunHooks(cache=cache)).run()
    again = await start_run(chain(), registry, payload=2, hooks=RunHooks(cache=cache)).run()
    assert executed(again) == ["a", "b", "c", "d", "s"]


async def test_run_to_runs_only_the_ancestors_of_the_target():
    cache, registry = OutputCache(), toys.registry()
    run = await run_to(chain(), registry, "B", cache, payload=1).run()
    assert sorted(run.records) == ["a", "b", "s"] and run.status == "completed"
    rest = await start_run(chain(), registry, payload=1, hooks=RunHooks(cache=cache)).run()
    assert executed(rest) == ["c", "d"]


async def test_pinned_output_replaces_execution_and_feeds_downstream():
    cache, registry = OutputCache(), toys.registry()
    cache.pin("a", {"out": {"pinned": True}})
    run = await start_run(chain(), registry, payload=1, hooks=RunHooks(cache=cache)).run()
    assert run.records["a"].cached
    assert run.outputs_by_name()["C"] == {"out": {"pinned": True}}
    cache.unpin("a")
    assert "a" in cache.stale_nodes(run.plan, "s", 1)


async def test_side_effect_nodes_always_run_and_downstream_reuses_when_output_is_the_same():
    counter = {"n": 0}

    async def effect(data, inputs, ctx):
        counter["n"] += 1
        return {"out": data.get("label")}

    definition = NodeDefinition(id="toy-effect", name="E", description="d", category="t", side_effects=True,
                                inputs=(toys.DATA_IN,), outputs=(toys.DATA_OUT,),
                                parameters=(toys.definitions()["pass"][0].parameters[0],))
    registry = toys.registry((definition, toys.Toy("toy-effect", effect)))
    #  S --> E --> A
    graph = toys.graph([("s", "start"), ("e", "effect", {"label": "same"}), ("a", "pass")], ["s.out -> e.in", "e.out -> a.in"])
    cache = OutputCache()
    await start_run(graph, registry, payload=1, hooks=RunHooks(cache=cache)).run()
    second = await start_run(graph, registry, payload=1, hooks=RunHooks(cache=cache)).run()
    assert counter["n"] == 2 and executed(second) == ["e"]
    assert "e" in cache.stale_nodes(second.plan, "s", 1)


async def test_a_recording_run_executes_everything_and_later_runs_reuse_what_it_recorded():
    cache, registry = OutputCache(), toys.registry()
    await start_run(chain(), registry, payload=1, hooks=RunHooks(cache=cache)).run()
    cache.pin("a", {"out": "pinned"})
    recorded = await start_run(chain(), registry, payload=2, hooks=RunHooks(cache=cache.recorder())).run()
    assert executed(recorded) == ["a", "b", "c", "d", "s"]  # neither the cache nor the pin was used
    assert recorded.outputs_by_name()["C"] == {"out": 2}
    cache.unpin("a")
    reused = await start_run(chain(), registry, payload=2, hooks=RunHooks(cache=cache)).run()
    assert executed(reused) == []


async def test_max_entries_forgets_the_oldest_outputs():
    cache, registry = OutputCache(max_entries=5), toys.registry()
    await start_run(chain(), registry, payload=1, hooks=RunHooks(cache=cache)).run()
    await start_run(chain(), registry, payload=2, hooks=RunHooks(cache=cache)).run()
    again = await start_run(chain(), registry, payload=1, hooks=RunHooks(cache=cache)).run()
    assert executed(again) == ["a", "b", "c", "d", "s"]


async def test_run_to_keeps_the_other_hooks():
    seen = []
    hooks = RunHooks(on_run=lambda run: seen.append(run.status))
    run = await run_to(chain(), toys.registry(), "B", OutputCache(), payload=1, hooks=hooks).run()
    assert seen == ["running", "completed"] and run.hooks.cache is not None and hooks.cache is None
