from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="knowledge",
    name="Knowledge",
    description=("Give an agent a search tool over a knowledge collection: wire Tools into an Agent's Tools. "
                 "The agent decides when to search; the chat's tool card shows the chunks it got, with sources."),
    category="rag",
    icon="library",
    parameters=(
        Parameter(id="collection", label="Collection", default="docs", required=True),
        Parameter(id="description", label="What it holds", type="text", default="",
                  placeholder="Our refund and shipping policies",
                  description="Tells the agent when to search (part of the tool's description)."),
        Parameter(id="top_k", label="Results", type="int", default=4, min=1, max=50, step=1),
        Parameter(id="mode", label="Search", type="select", default="hybrid",
                  options=(Option(value="hybrid", label="Hybrid (vectors + full text)"),
                           Option(value="vector", label="Vectors only"),
                           Option(value="text", label="Full text only"))),
    ),
    outputs=(Socket(id="tools", label="Tools", type="tools", channel="link", side="right",
                    description="Wire into an Agent's Tools."),),
)
