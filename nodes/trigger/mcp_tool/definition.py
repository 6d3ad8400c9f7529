from nodeflow_app.contract import NodeDefinition, Parameter, Socket

definition = NodeDefinition(
    id="mcp-tool",
    name="MCP Tool",
    description="Serve this graph as a tool of the workspace's MCP endpoint (/api/mcp/<workspace>): "
                "each call runs the graph with the tool's arguments.",
    category="trigger",
    icon="plug-zap",
    trigger=True,
    started_by=("mcp", "api"),  # the run API's input is the tool's arguments
    example_payload={"city": "Paris"},
    parameters=(
        Parameter(id="tool_name", label="Tool name", type="string", default="", required=True,
                  placeholder="get_weather",
                  description="The name MCP clients call (letters, digits, _ and -; at most 64 characters)."),
        Parameter(id="description", label="Description", type="text", default="",
                  description="What the tool does and when to use it: the calling model reads this."),
        Parameter(id="input_schema", label="Input schema", type="json",
                  default={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                  description="A JSON Schema of the tool's arguments (an object)."),
    ),
    outputs=(Socket(id="output", label="Arguments", side="right", description="The tool call's arguments"),),
)
