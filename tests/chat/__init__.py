"""Chat with a graph: the event adapter and the chat service (no UI)."""
