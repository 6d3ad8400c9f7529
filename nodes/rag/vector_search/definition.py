from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

SEARCH_MODES = (
    Option(value="hybrid", label="Hybrid (vectors + full text)"),
    Option(value="vector", label="Vectors only"),
    Option(value="text", label="Full text only"),
)

definition = NodeDefinition(
    id="vector-search",
    name="Vector Search",
    description=("Find the chunks of a knowledge collection closest to a query: hybrid (vectors and full "
                 "text), vectors or full text, with metadata filters. Output {query, documents, text}: "
                 "`text` joins the chunks with their sources, ready for a prompt."),
    category="rag",
    icon="search",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="collection", label="Collection", mode="hybrid", default="docs", required=True),
        Parameter(id="query", label="Query", type="text", mode="hybrid", default="",
                  description="Empty: the input's primary text (message, response or text)."),
        Parameter(id="top_k", label="Results", type="int", default=4, min=1, max=100, step=1),
        Parameter(id="mode", label="Search", type="select", default="hybrid", options=SEARCH_MODES),
        Parameter(id="threshold", label="Minimum score", type="float", default=None,
                  description="Drop results scoring lower; scores depend on the search mode."),
        Parameter(id="filters", label="Filters", type="key_value", default=[],
                  description="Metadata that must match exactly (source, title, page, or any metadata key)."),
    ),
    outputs=(Socket(id="output", label="Results", side="right",
                    description="{query, documents: [{text, metadata, score}], text}"),),
)
