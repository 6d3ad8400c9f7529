"""Persistence: sqlmodel tables and the repositories over them. Never imports reflex (the CLI and tests use it directly)."""

# The credential store registers its lookup with the LLM helpers (which never import the store).
from nodeflow_app.store import credentials as _credentials  # noqa: E402,F401
# The connection store registers its lookup with nodeflow_app.connections (which never imports the store).
from nodeflow_app.store import connections as _connections  # noqa: E402,F401
