"""What the kernel hands a running node: its context, the runtime API, and the executor protocol."""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Protocol, runtime_checkable

from nodeflow_app.contract.definitions import DataValue
from nodeflow_app.contract.events import EventType, NodeEvent
from nodeflow_app.contract.results import ExecutionResult


@runtime_checkable
class RuntimeApi(Protocol):
    """What the kernel offers a running node; nothing in it knows any node type."""

    def get_node(self, node_id: str) -> dict[str, Any]: ...

    def incoming_edges(self, node_id: str, *, channel: str | None = None,
                       target_handle: str | None = None) -> list[dict[str, Any]]: ...

    def outgoing_edges(self, node_id: str, *, channel: str | None = None,
                       source_handle: str | None = None) -> list[dict[str, Any]]: ...

    def children(self, node_id: str) -> list[str]: ...

    async def resolve_links(self, node_id: str, target_handle: str) -> list[Any]: ...

    async def run_subgraph(self, node_ids: list[str], input: DataValue) -> dict[str, Any]: ...

    def emit(self, event: NodeEvent) -> None: ...

    @property
    def pauses_on_record(self) -> bool:
        """A pause here is kept on record, so the run can go on later, from any process: False inside a container
        (its steps cannot pause) and in a run nothing persists."""

    def checkpoint(self, node_id: str, value: Any) -> None:
        """Persist `value` as the node's progress; if its process dies, the node's re-run gets it as `ctx.checkpoint`."""

    def on_finish(self, cleanup: Any) -> None:
        """Call `cleanup()` (sync or async) when the run stops: finished, failed, cancelled or paused.

        Linked artifacts are forgotten then too, so a resumed run materializes them again.
        """


# Keys of FlowContext.context that entry points may set and nodes may read.
# The conversation a run answers (a chat's id): nodes that keep history (agents) key it by this.
CONVERSATION = "conversation"
# Who or what started the run: chat, test, cli (later user:<id>, webhook, schedule, api).
STARTED_BY = "started_by"


@dataclass(slots=True)
class FlowContext:
    """Per-call context: who is running, in which run, and the runtime's API."""

    node_id: str
    node_type: str
    run_id: str
    runtime: RuntimeApi
    # The embedder's opaque per-run context (e.g. CONVERSATION); the kernel passes it through unread.
    context: dict[str, Any] = field(default_factory=dict)
    # The payload the run was started with (what a trigger node turns into its output).
    payload: Any = None
    # Payload given to `resume` when this node was paused; None on a first execution.
    resume_payload: Any = None
    # Free-form services of the embedding app (credentials, HTTP clients, sessions).
    services: dict[str, Any] = field(default_factory=dict)
    # The node's last checkpoint when it runs again after its process died (e.g. finished loop items); else None.
    checkpoint: Any = None

    def event(self, event_type: EventType, **data: Any) -> NodeEvent:
        return NodeEvent(self.run_id, self.node_id, self.node_type, event_type, data)


# The node the current task executes, set by the runtime before each call: what a node calls (and the tasks and
# threads it starts) acts for that node's run without being handed `ctx` (e.g. whose stored provider keys count).
_running: contextvars.ContextVar[FlowContext | None] = contextvars.ContextVar("nodeflow_running_node", default=None)


def running_node() -> FlowContext | None:
    """The context of the node the current task executes, or None outside any run's node."""
    return _running.get()


def enter_node(ctx: FlowContext) -> None:
    """For the runtime: the current task executes the node of `ctx` from now on (until it enters another)."""
    _running.set(ctx)


class NodeExecutor(Protocol):
    """An executor has `node_type` and `execute`, `materialize`, or both. One that waits for input may have
    `answer_problem(payload) -> str | None`: the kernel refuses an answer it finds a problem with, on every path
    (API, editor, chat, CLI), and the run stays paused."""

    node_type: str

    async def execute(self, data: dict[str, Any], inputs: dict[str, DataValue],
                      ctx: FlowContext) -> ExecutionResult | AsyncIterator[NodeEvent | ExecutionResult]: ...

    async def materialize(self, data: dict[str, Any], output_handle: str, ctx: FlowContext) -> Any: ...


class NodeError(Exception):
    """A clear failure of a node, shown to the user as is (no traceback)."""
