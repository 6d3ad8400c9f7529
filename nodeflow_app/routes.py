"""Every page's route in one place."""

GRAPHS = "/"
EDITOR = "/graph/[graph_id]"
CHAT = "/graph/[graph_id]/chat"
SETUP = "/setup"
SIGN_IN = "/signin"
ACCOUNT = "/account"
WORKSPACE = "/workspace"
INVITE = "/invite/[code]"
KNOWLEDGE = "/knowledge"
SETTINGS = "/settings"


def editor_url(graph_id: str) -> str:
    return f"/graph/{graph_id}"


def run_url(graph_id: str, run_id: str) -> str:
    """The editor with `run_id` chosen in its Runs panel."""
    return f"/graph/{graph_id}?run={run_id}"


def chat_url(graph_id: str) -> str:
    return f"/graph/{graph_id}/chat"
