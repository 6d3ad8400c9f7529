from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")

definition = NodeDefinition(
    id="http-request",
    name="HTTP Request",
    description=(
        "Call an HTTP API or fetch a page: method, URL, query, headers, a JSON, form, text or multipart body, "
        "authentication from a named connection, redirects re-checked against private addresses, and "
        "pagination. Outputs {status, headers, body}; a file response is stored once and passed by reference."
    ),
    category="integration",
    icon="globe",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="method", label="Method", type="select", default="GET",
                  options=tuple(Option(value=m, label=m) for m in METHODS)),
        Parameter(id="url", label="URL", default="", required=True, placeholder="https://api.example.com/items",
                  description="http:// or https://; private addresses are refused unless allowlisted."),
        Parameter(id="query", label="Query", type="key_value", default=[],
                  description="Name and value per row, added to the URL's query."),
        Parameter(id="headers", label="Headers", type="key_value", default=[],
                  description="Shown to everyone who sees the graph and exported with it: put a token in "
                              "Secret headers or a connection."),
        Parameter(id="secret_headers", label="Secret headers", type="key_value", default=[], secret=True,
                  secret_for="url",
                  description="Headers whose values are secrets (an API key): encrypted, never shown again or "
                              "exported, and sent only to the URL's origin (never after a redirect elsewhere). "
                              "The URL must be written out, without {{ }}; for a URL from an expression use a "
                              "connection."),
        Parameter(id="connection", label="Authentication", default="", placeholder="connection name",
                  description="A stored HTTP connection (bearer, basic, API key in a header or the query); "
                              "empty sends none. It is sent only to the hosts the connection names, over "
                              "https unless its hosts say http://host. Secrets stay on the server."),
        Parameter(id="body_type", label="Body", type="select", default="none", options=(
            Option(value="none", label="None"), Option(value="json", label="JSON"),
            Option(value="form", label="Form (urlencoded)"), Option(value="multipart", label="Multipart form"),
            Option(value="text", label="Raw text"))),
        Parameter(id="json_body", label="JSON body", type="json", default=None,
                  description="Sent when Body is JSON.", show_if={"body_type": ("json",)}),
        Parameter(id="form", label="Form fields", type="key_value", default=[],
                  description="Sent when Body is a form or multipart.",
                  show_if={"body_type": ("form", "multipart")}),
        Parameter(id="text_body", label="Text body", type="text", default="",
                  description="Sent when Body is raw text.", show_if={"body_type": ("text",)}),
        Parameter(id="content_type", label="Text content type", default="text/plain",
                  description="The Content-Type of a raw text body.", show_if={"body_type": ("text",)}),
        Parameter(id="file", label="File", type="json", mode="hybrid", default=None,
                  description="A file reference {file_id, name, content_type, size} sent in a multipart body.",
                  show_if={"body_type": ("multipart",)}),
        Parameter(id="file_field", label="File field", default="file",
                  description="The multipart field name of the file.", show_if={"body_type": ("multipart",)}),
        Parameter(id="response_format", label="Response", type="select", default="auto", options=(
            Option(value="auto", label="Auto (by content type)"), Option(value="json", label="JSON"),
            Option(value="text", label="Text"), Option(value="file", label="File"))),
        Parameter(id="http_errors", label="Non-2xx status", type="select", default="error", options=(
            Option(value="error", label="Fail the node"), Option(value="output", label="Output the response"))),
        Parameter(id="timeout", label="Timeout (s)", type="float", default=30.0, min=0.1, max=600, step=1),
        Parameter(id="follow_redirects", label="Follow redirects", type="boolean", default=True),
        Parameter(id="max_redirects", label="Max redirects", type="int", default=5, min=0, max=20,
                  show_if={"follow_redirects": (True,)}),
        Parameter(id="pagination", label="Pagination", type="select", default="off", options=(
            Option(value="off", label="Off"), Option(value="next_url", label="Next URL from the response"),
            Option(value="page_number", label="Page number parameter"))),
        Parameter(id="next_url_path", label="Next URL path", default="body.next", expressions=False,
                  description="Where the next page's URL is in the last response {status, headers, body}; "
                              "pagination stops when it is empty.", show_if={"pagination": ("next_url",)}),
        Parameter(id="page_parameter", label="Page parameter", default="page",
                  description="The query parameter holding the page number.",
                  show_if={"pagination": ("page_number",)}),
        Parameter(id="first_page", label="First page", type="int", default=1, min=0,
                  show_if={"pagination": ("page_number",)}),
        Parameter(id="items_path", label="Items path", default="", expressions=False,
                  description="Where a page's items are in the response (e.g. body.results); a page with "
                              "none stops page-number pagination. Empty: the page's body.",
                  show_if={"pagination": ("next_url", "page_number")}),
        Parameter(id="max_pages", label="Max pages", type="int", default=10, min=1, max=1000,
                  show_if={"pagination": ("next_url", "page_number")}),
    ),
    outputs=(Socket(id="output", label="Response", side="right",
                    description="{status, headers, body}, with `pages` (every page's body) when paginating."),),
    side_effects=True,
)
