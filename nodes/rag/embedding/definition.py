from nodeflow_app.contract import NodeDefinition, Parameter, Socket

definition = NodeDefinition(
    id="embedding",
    name="Embedding",
    description=("Add a `vector` to each document or chunk with a provider's embedding model (OpenAI, "
                 "OpenAI-compatible, Ollama), in batches; vectors are cached by content, so unchanged chunks "
                 "cost no request."),
    category="rag",
    icon="binary",
    inputs=(Socket(id="input", label="Chunks", side="left"),),
    parameters=(
        Parameter(id="model", label="Embedding model", default="openai:text-embedding-3-small",
                  placeholder="provider:model", description="provider:model of an embedding model."),
        Parameter(id="batch_size", label="Batch size", type="int", default=64, min=1, max=2048, step=1,
                  description="Texts per request."),
    ),
    outputs=(Socket(id="output", label="Embedded", side="right", description="[{text, metadata, vector, embedding_model}]"),),
)
