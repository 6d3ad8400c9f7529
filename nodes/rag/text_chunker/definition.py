from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="text-chunker",
    name="Text Chunker",
    description=("Split documents into chunks for retrieval: recursively at paragraphs, lines, sentences and "
                 "words, with a size and an overlap in characters; the Markdown mode cuts at headings first. "
                 "Each chunk keeps its document's metadata and gets its index (`chunk`)."),
    category="rag",
    icon="scissors",
    inputs=(Socket(id="input", label="Documents", side="left"),),
    parameters=(
        Parameter(id="chunk_size", label="Chunk size", type="int", default=1000, min=50, max=100_000, step=50,
                  description="Most characters in a chunk."),
        Parameter(id="overlap", label="Overlap", type="int", default=200, min=0, max=50_000, step=10,
                  description="Characters a chunk shares with the one before it."),
        Parameter(id="mode", label="Mode", type="select", default="recursive",
                  options=(Option(value="recursive", label="Recursive (any text)"),
                           Option(value="markdown", label="Markdown (cut at headings first)")),
                  description="Markdown records the heading path of each chunk in `metadata.heading`."),
    ),
    outputs=(Socket(id="output", label="Chunks", side="right", description="[{text, metadata: {..., chunk}}]"),),
)
