from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="schedule-trigger",
    name="Schedule",
    description="Start a run at each due time of a cron expression (in a time zone) or every interval, "
                "while the graph is active.",
    category="trigger",
    icon="clock",
    trigger=True,
    started_by=("schedule",),
    example_payload={"scheduled_at": "2026-01-05T09:00:00+00:00", "timezone": "UTC"},
    parameters=(
        Parameter(id="mode", label="Repeat", type="select", default="cron", options=(
            Option(value="cron", label="Cron expression"), Option(value="interval", label="Every interval"))),
        Parameter(id="cron", label="Cron", default="0 9 * * 1-5", placeholder="minute hour day month weekday",
                  expressions=False, description="Five fields, e.g. `*/15 * * * *` (every 15 minutes).",
                  show_if={"mode": ("cron",)}),
        Parameter(id="timezone", label="Time zone", default="UTC", placeholder="Europe/Paris", expressions=False,
                  show_if={"mode": ("cron",)}),
        Parameter(id="every", label="Every", type="int", default=1, min=1, max=100000, show_if={"mode": ("interval",)}),
        Parameter(id="unit", label="Unit", type="select", default="hours", options=(
            Option(value="seconds", label="Seconds"), Option(value="minutes", label="Minutes"),
            Option(value="hours", label="Hours"), Option(value="days", label="Days")), show_if={"mode": ("interval",)}),
        Parameter(id="missed", label="Runs missed while stopped", type="select", default="skip", options=(
            Option(value="skip", label="Skip them"), Option(value="run_once", label="Run once"))),
    ),
    outputs=(Socket(id="output", label="Time", side="right", description="{scheduled_at, timezone}"),),
)
