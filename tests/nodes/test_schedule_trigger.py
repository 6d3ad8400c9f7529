"""nodes/trigger/schedule_trigger: the due time becomes `{scheduled_at, timezone}`; the example graph runs."""

import json
from pathlib import Path

from nodeflow_app.contract import FlowContext
from nodeflow_app.runs.launcher import RunLauncher
from nodes.trigger.schedule_trigger.definition import definition
from nodes.trigger.schedule_trigger.executor import executor

EXAMPLE = Path(__file__).parent.parent / "fixtures" / "graphs" / "examples" / "schedule.json"


async def output(payload, data=None):
    ctx = FlowContext(node_id="clock", node_type="schedule-trigger", run_id="r", runtime=None, context={}, payload=payload)
    return (await executor.execute({**definition.defaults(), **(data or {})}, {}, ctx)).outputs["output"]


def test_is_a_trigger_started_by_the_scheduler():
    assert definition.trigger and definition.started_by == ("schedule",)


async def test_the_due_time_passes_through():
    got = await output({"scheduled_at": "2026-01-05T09:00:00+01:00", "timezone": "Europe/Paris"})
    assert got == {"scheduled_at": "2026-01-05T09:00:00+01:00", "timezone": "Europe/Paris"}


async def test_without_a_payload_the_node_zone_is_named():
    assert await output(None, {"timezone": "Asia/Tokyo"}) == {"scheduled_at": None, "timezone": "Asia/Tokyo"}


async def test_the_example_graph_runs(tmp_path):
    launcher = RunLauncher(f"sqlite:///{tmp_path / 'db.sqlite'}")
    try:
        run = await launcher.start(json.loads(EXAMPLE.read_text()), started_by="schedule",
                                   payload=definition.example_payload).run()
        assert run.status == "completed"
        assert run.outputs_by_name()["Note"]["output"]["message"].startswith("Good morning (2026-01-05")
    finally:
        launcher.close()
