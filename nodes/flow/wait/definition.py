from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

MAX_SECONDS = 30 * 86400  # 30 days: n8n and Dify have no bound; a month covers reminders and follow-ups
IN_MEMORY_S = 60  # up to here the run sleeps in memory; longer, it pauses on record (n8n: 65 s)
PER_UNIT = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400}
RESUME = "resume now"  # the answer a timed pause offers (any answer goes on); the timer gives it when due

definition = NodeDefinition(
    id="wait",
    name="Wait",
    description=(
        "Pause this branch for a while, at most 30 days, then pass the input on unchanged. Up to a minute the run "
        "waits in memory; longer, it pauses on record and goes on by itself when the time comes, even after a "
        "restart (its card in the chat or the run's page has 'resume now' to go on earlier). Inside a For Each or a "
        "Loop it always waits in memory."
    ),
    category="flow",
    icon="timer",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="amount", label="Amount", type="float", default=1.0, min=0, step=0.5,
                  max_by={"unit": {unit: MAX_SECONDS / seconds for unit, seconds in PER_UNIT.items()}},
                  description="At most 30 days (720 hours). Over a minute the run pauses on record until then."),
        Parameter(id="unit", label="Unit", type="select", default="seconds", options=(
            Option(value="seconds", label="Seconds"),
            Option(value="minutes", label="Minutes"),
            Option(value="hours", label="Hours"),
            Option(value="days", label="Days"),
        )),
    ),
    outputs=(Socket(id="output", label="Output", side="right"),),
)
