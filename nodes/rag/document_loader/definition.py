from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

definition = NodeDefinition(
    id="document-loader",
    name="Document Loader",
    description=("Read documents {text, metadata} from the input, a file or folder uploaded to NodeFlow, or a "
                 "URL: text, Markdown, HTML (main text), PDF (a document per page), DOCX, CSV (a document per "
                 "row) and JSON (a document per list item)."),
    category="rag",
    icon="file-text",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="source", label="Source", type="select", default="input",
                  options=(Option(value="input", label="The input (text, {text, metadata} or a list)"),
                           Option(value="upload", label="An uploaded file or folder"),
                           Option(value="url", label="A URL")),
                  description="Where the documents come from."),
        Parameter(id="path", label="Upload path", default="", placeholder="handbook.pdf or policies/",
                  description="A file or folder of the workspace's uploads (Knowledge page uploads: "
                              "<collection>/<file>), in the data folder's uploads/<workspace>/."),
        Parameter(id="url", label="URL", mode="hybrid", default="", placeholder="https://example.com/page",
                  description="Fetched with GET; private and local addresses are refused."),
        Parameter(id="format", label="Format", type="select", default="auto",
                  options=(Option(value="auto", label="From the name or content type"),
                           *(Option(value=f, label=f) for f in
                             ("text", "markdown", "html", "pdf", "docx", "csv", "json"))),
                  description="How to read the file; auto guesses from the suffix or content type."),
    ),
    outputs=(Socket(id="output", label="Documents", side="right",
                    description="[{text, metadata: {source, page?, title?}}]"),),
)
