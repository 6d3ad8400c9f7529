"""Knowledge: documents read from files, split into chunks, embedded and kept in per-workspace collections.

A helper layer below the node folders (like `nodeflow_app.llm`): the rag nodes and the Knowledge page use
it; it imports nothing of the services or the UI. A document is a plain dict `{text, metadata}`.
"""
