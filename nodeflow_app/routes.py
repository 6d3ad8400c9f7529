"""Every page's route in one place."""

GRAPHS = "/"
EDITOR = "/graph/[graph_id]"
CHAT = "/graph/[graph_id]/chat"
KNOWLEDGE = "/knowledge"
SETTINGS = "/settings"


def editor_url(graph_id: str) -> str:
    return f"/graph/{graph_id}"


def chat_url(graph_id: str) -> str:
    return f"/graph/{graph_id}/chat"
