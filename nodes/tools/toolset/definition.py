from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

# The values are the keys of executor.CATALOG (a test keeps the two in step). The parameter is
# `tool_names`: `tools` is the output socket.
TOOL_OPTIONS = (
    Option(value="calculator", label="Calculator (arithmetic)"),
    Option(value="current_datetime", label="Current date and time"),
    Option(value="http_get", label="HTTP GET (public addresses only)"),
    Option(value="agno-calculator", label="Agno Calculator toolkit"),
    Option(value="agno-reasoning", label="Agno Reasoning toolkit (think, analyze)"),
)

definition = NodeDefinition(
    id="toolset",
    name="Toolset",
    description="Ready-made tools for an agent: wire Tools into an Agent's Tools.",
    category="tools",
    icon="wrench",
    parameters=(
        Parameter(id="tool_names", label="Tools", type="list", default=["calculator", "current_datetime"],
                  options=TOOL_OPTIONS, description="The tools this set gives the agent."),
    ),
    outputs=(
        Socket(id="tools", label="Tools", type="tools", channel="link", side="right",
               description="Wire into an Agent's Tools."),
    ),
)
