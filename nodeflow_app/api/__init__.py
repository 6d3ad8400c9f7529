"""The HTTP API (SPEC 10, 14): one FastAPI app mounted beside Reflex's backend; every route declares its access."""
