from nodeflow_app.contract import NodeDefinition, Parameter, Socket

definition = NodeDefinition(
    id="approval",
    name="Approval",
    description=(
        "Pause this branch until a person approves or rejects. The input leaves on the chosen output "
        "with `approval: {decision, note, by, at}` added (a non-object input is wrapped as `{input, approval}`)."
    ),
    category="flow",
    icon="user-check",
    # A decision is a person's answer now: never replay a cached one.
    side_effects=True,
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="prompt", label="Prompt", type="text", default="Approve this step?",
                  placeholder="Send {{ $json.total }} EUR to {{ $json.payee }}?",
                  description="The question the person answers; expressions allowed."),
        Parameter(id="show_input", label="Show input", type="boolean", default=True,
                  description="Include the input in the request, so the person sees what they approve."),
    ),
    outputs=(
        Socket(id="approve", label="Approve", side="right"),
        Socket(id="reject", label="Reject", side="right"),
    ),
)
