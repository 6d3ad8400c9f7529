from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="webhook-trigger",
    name="Webhook",
    description="Start a run with each HTTP call to the node's address /api/hooks/<id> while the graph is active.",
    category="trigger",
    icon="webhook",
    trigger=True,
    started_by=("webhook",),
    example_payload={"body": {"hello": "world"}, "headers": {"content-type": "application/json"}, "query": {}},
    parameters=(
        Parameter(id="methods", label="Methods", default="POST", placeholder="POST, GET", expressions=False,
                  description="The HTTP methods that start a run, separated by commas (others get 405)."),
        Parameter(id="auth", label="Authentication", type="select", default="none", options=(
            Option(value="none", label="None"), Option(value="header", label="Header token"),
            Option(value="basic", label="Basic (user and password)"))),
        Parameter(id="auth_name", label="Header name or user", default="X-Webhook-Token", expressions=False,
                  description="The header that carries the token, or the Basic user name.", show_if={"auth": ("header", "basic")}),
        Parameter(id="auth_secret", label="Token or password", default="", secret=True, expressions=False,
                  description="Encrypted at rest and never shown again. Or name a connection below.", show_if={"auth": ("header", "basic")}),
        Parameter(id="auth_connection", label="Connection", default="", placeholder="connection name",
                  expressions=False,
                  description="A workspace connection holding the secret (http_header: header and value; "
                              "http_basic: username and password); used instead of the fields above.",
                  show_if={"auth": ("header", "basic")}),
        Parameter(id="max_body_kb", label="Payload limit (KB)", type="int", default=1024, min=1, max=102400,
                  description="Larger bodies are refused with 413."),
        Parameter(id="respond", label="Respond", type="select", default="at_once", options=(
            Option(value="at_once", label="At once (202 with the run id)"),
            Option(value="last_node", label="When the last node finishes (its output as JSON)"),
            Option(value="stream", label="Stream the run's events (server-sent events)"))),
        Parameter(id="status_code", label="Status code", type="int", default=200, min=100, max=599,
                  description="Sent with the last node's output (not a redirect, 3xx, nor 1xx, 204 or 205).",
                  show_if={"respond": ("last_node",)}),
        Parameter(id="error_details", label="Name a failed run's error", type="boolean", default=False,
                  description="Off: a failed run answers 500 with only its id and status, as its error may name "
                              "internal addresses, tables or connections; NodeFlow's run record says why.",
                  show_if={"respond": ("last_node",)}),
        Parameter(id="response_headers", label="Response headers", type="key_value", default=[],
                  expressions=False,
                  description="Sent with the last node's output; not Content-Type, Set-Cookie, Location or others "
                              "that would act for NodeFlow's site (docs/triggers.md).", show_if={"respond": ("last_node",)}),
    ),
    outputs=(Socket(id="output", label="Request", side="right", description="{body, headers, query}"),),
)
