"""A tiny stdio MCP server for the tests, written with the `mcp` package: tools `add` and `shout`.

With NODEFLOW_MCP_PID_FILE set it appends its process id to that file (one line per start), so a test
can count the starts and check the processes are gone.
"""

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("echo")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


if __name__ == "__main__":
    pid_file = os.environ.get("NODEFLOW_MCP_PID_FILE")
    if pid_file:
        with open(pid_file, "a") as handle:
            handle.write(f"{os.getpid()}\n")
    server.run("stdio")
