from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="mcp-server",
    name="MCP Server",
    description="The tools of a Model Context Protocol server (a local command or a URL), for agents.",
    category="tools",
    icon="plug",
    parameters=(
        Parameter(id="transport", label="Transport", type="select", default="stdio", options=(
            Option(value="stdio", label="Local command (stdio)"),
            Option(value="streamable-http", label="URL (streamable HTTP)"),
        ), description="Start the server as a local process, or connect to one that is running."),
        Parameter(id="command", label="Command", default="", placeholder="npx",
                  description="stdio: the program to start (no shell: put each argument in Arguments)."),
        Parameter(id="args", label="Arguments", type="list", default=[],
                  fields=(Parameter(id="value", label="Argument", default="", placeholder="-y"),),
                  description="stdio: the command's arguments, one per row."),
        Parameter(id="env", label="Environment", type="key_value", default=[],
                  description="stdio: extra environment variables (the server gets only HOME, PATH, SHELL "
                              "and TERM otherwise)."),
        Parameter(id="url", label="URL", default="", placeholder="http://localhost:8000/mcp",
                  description="streamable-http: the server's endpoint."),
        Parameter(id="headers", label="Headers", type="key_value", default=[],
                  description="streamable-http: HTTP headers, e.g. Authorization."),
        Parameter(id="tool_filter", label="Only these tools", default="", placeholder="search, fetch",
                  description="Comma-separated tool names to offer; empty offers every tool of the server."),
    ),
    outputs=(
        Socket(id="tools", label="Tools", type="tools", channel="link", side="right",
               description="Wire into an agent's Tools."),
    ),
)
