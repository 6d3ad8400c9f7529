from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="vector-store",
    name="Vector Store",
    description=("Write chunks into a knowledge collection of the workspace (created on first use). Replace "
                 "swaps the old chunks of the same sources; Delete removes the input's sources. Chunks "
                 "without vectors are embedded with the collection's model, when it has one."),
    category="rag",
    icon="database",
    side_effects=True,
    inputs=(Socket(id="input", label="Chunks", side="left"),),
    parameters=(
        Parameter(id="collection", label="Collection", mode="hybrid", default="docs", required=True,
                  description="Letters, digits, '-' and '_'."),
        Parameter(id="mode", label="Mode", type="select", default="replace",
                  options=(Option(value="replace", label="Replace chunks of the same sources"),
                           Option(value="add", label="Add"),
                           Option(value="delete", label="Delete the input's sources")),
                  description="What to do with the chunks' sources already in the collection."),
        Parameter(id="embedding", label="Embedding model (new collection)", default="",
                  placeholder="openai:text-embedding-3-small",
                  description="Used when the collection is created here; empty: full-text search only."),
    ),
    outputs=(Socket(id="output", label="Result", side="right", description="{collection, written, deleted}"),),
)
