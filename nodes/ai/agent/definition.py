from nodeflow_app.contract import MODEL_PARAMETER, NodeDefinition, Option, Parameter, Socket, TEMPERATURE_PARAMETER

definition = NodeDefinition(
    id="agent",
    name="Agent",
    description="An LLM agent with tools and memory of the chat; wire other agents into Tools to make a team.",
    category="ai",
    icon="bot",
    # Tools act on the world and history changes with every run: never reuse a cached answer.
    side_effects=True,
    inputs=(
        Socket(id="input", label="Input", side="left"),
        Socket(id="tools", label="Tools", type="tools", channel="link", side="left", multiple=True,
               description="Toolsets, MCP servers, or other agents (their Tools out) as team members."),
    ),
    parameters=(
        Parameter(id="instructions", label="Instructions", type="text", mode="hybrid", default="",
                  placeholder="You are a helpful assistant.",
                  description="What the agent is for and how it should answer."),
        Parameter(id="prompt", label="Message", type="text", default="",
                  placeholder="Summarize: {{ $json.response }}",
                  description="What the agent is asked; empty sends the input's primary text "
                              "(message, response or text)."),
        MODEL_PARAMETER,
        TEMPERATURE_PARAMETER,
        Parameter(id="reasoning_effort", label="Reasoning effort", type="select", default="none", options=(
            Option(value="none", label="Default"), Option(value="low", label="Low"),
            Option(value="medium", label="Medium"), Option(value="high", label="High"),
        ), description="For reasoning models that support it."),
        Parameter(id="tool_call_limit", label="Tool call limit", type="int", default=None, min=1,
                  description="Most tool calls in one run; empty: no limit."),
        Parameter(id="markdown", label="Markdown", type="boolean", default=False,
                  description="Ask for answers formatted as Markdown."),
        Parameter(id="history", label="Remember the chat", type="boolean", default=True,
                  description="Keep this agent's conversation across messages of the same chat."),
    ),
    outputs=(
        Socket(id="output", label="Output", side="right", description="{response, model, tokens_used}"),
        Socket(id="tools-out", label="As tool", type="tools", channel="link", side="right",
               description="Wire into another agent's Tools to make this agent its team member."),
    ),
)
