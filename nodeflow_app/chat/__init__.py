"""Chat with a graph as plain Python (no reflex): content blocks, the event adapter, the chat service."""
