from nodeflow_app.contract import NodeDefinition, Option, Parameter, ParameterMigration, Socket

definition = NodeDefinition(
    id="mcp-server",
    version=2,
    name="MCP Server",
    description="The tools of a Model Context Protocol server (one the install declares, or a URL), for agents.",
    category="tools",
    icon="plug",
    parameters=(
        Parameter(id="transport", label="Transport", type="select", default="stdio", options=(
            Option(value="stdio", label="Declared server (stdio)"),
            Option(value="streamable-http", label="URL (streamable HTTP)"),
        ), description="Start a server the install declares, or connect to one that is running."),
        Parameter(id="server", label="Server", type="select", default="", choices="mcp_servers",
                  description="stdio: a server declared by whoever runs NodeFlow (NODEFLOW_MCP_SERVERS); a graph "
                              "never names a program to start."),
        Parameter(id="url", label="URL", default="", placeholder="https://mcp.example.com/mcp",
                  description="streamable-http: the server's endpoint (a public address unless "
                              "NODEFLOW_HTTP_ALLOWLIST lists it)."),
        Parameter(id="headers", label="Headers", type="key_value", default=[], secret=True, secret_for="url",
                  description="streamable-http: HTTP headers, e.g. Authorization. The values are secret: "
                              "encrypted, never shown again, not exported, sent only to the URL's origin "
                              "(set the URL first; another origin clears them)."),
        Parameter(id="tool_filter", label="Only these tools", default="", placeholder="search, fetch",
                  description="Comma-separated tool names to offer; empty offers every tool of the server."),
    ),
    outputs=(
        Socket(id="tools", label="Tools", type="tools", channel="link", side="right",
               description="Wire into an agent's Tools."),
    ),
    migrations=(
        # v1 wrote the command to start in the graph. Its command becomes the server name to look up, so the
        # run fails naming it until the install declares a server and the node picks it.
        ParameterMigration(from_version=1, rename={"command": "server"}, remove=("args", "env"),
                           note="stdio servers are declared by the install; graphs pick one by name"),
    ),
)
