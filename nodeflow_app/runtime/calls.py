"""The per-node call policy: how one node is called (timeout, retries with backoff, streaming) and what an
error becomes under the node's error mode. No scheduling here: the run decides what runs when.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any, Callable

from nodeflow_app.contract import ERROR_HANDLE, ExecutionResult, FlowContext, NodeError, NodeEvent
from nodeflow_app.runtime.coercion import CoercionError
from nodeflow_app.runtime.expressions import ExpressionError
from nodeflow_app.runtime.plan import PlanNode

Push = Callable[[NodeEvent], None]


def settled(pn: PlanNode, result: Any, push: Push) -> ExecutionResult:
    """A plain call's result, checked, with its events handed on (the policy path does both itself)."""
    if result.__class__ is not ExecutionResult:
        result = checked(pn, result)
    for event in result.events:
        push(event)
    return result


async def call_node(pn: PlanNode, data: dict, inputs: dict, ctx: FlowContext, push: Push) -> ExecutionResult:
    """The node called with its timeout, retried per its policy, before any error routing. A node with
    neither (`pn.plain`, most nodes) is awaited as is by the run, which hands its result to `settled`."""
    settings = pn.node.settings
    policy = settings.retry
    delay = policy.initial_interval
    for attempt in range(1, policy.max_attempts + 1):
        try:
            if settings.timeout is None:
                return await _call(pn, data, inputs, ctx, push)
            async with asyncio.timeout(settings.timeout):
                return await _call(pn, data, inputs, ctx, push)
        except (asyncio.CancelledError, ExpressionError, CoercionError):
            raise
        except Exception as exc:
            if isinstance(exc, TimeoutError):
                exc = NodeError(f"node '{pn.node.name}' timed out after {settings.timeout:g} s")
            if attempt == policy.max_attempts:
                raise exc
            push(ctx.event("progress", message=f"attempt {attempt} failed: {exc}; retrying", attempt=attempt))
            await asyncio.sleep(min(delay, policy.max_interval))
            delay *= policy.backoff_factor
    raise AssertionError("unreachable")


async def _call(pn: PlanNode, data: dict, inputs: dict, ctx: FlowContext, push: Push) -> ExecutionResult:
    if not pn.streams:
        result = await pn.executor.execute(data, inputs, ctx)
    else:
        result = None
        handed_over = 0.0
        # aclosing: a cancel that lands outside the generator still closes it (and its HTTP stream).
        async with contextlib.aclosing(pn.executor.execute(data, inputs, ctx)) as stream:
            async for item in stream:
                if item.__class__ is not NodeEvent:
                    result = item
                    continue
                push(item)
                # A fast stream may never suspend (its data is already buffered): step aside every
                # few ms so the consumer sees events as they are made, not in late batches.
                now = time.perf_counter()
                if now - handed_over > 0.002:
                    handed_over = now
                    try:
                        await asyncio.sleep(0)
                    except asyncio.CancelledError:  # re-deliver it where the stream waits, so the
                        asyncio.current_task().cancel()  # stream's own cleanup (HTTP close) runs
    result = checked(pn, result)
    for event in result.events:
        push(event)
    return result


def checked(pn: PlanNode, result: Any) -> ExecutionResult:
    if not isinstance(result, ExecutionResult):
        raise NodeError(f"node '{pn.node.name}' returned {type(result).__name__}, not an ExecutionResult")
    return result


def failure_message(error: BaseException) -> str:
    """What the user reads: a clear node error as is, anything else with its type."""
    if isinstance(error, (NodeError, ExpressionError, CoercionError)):
        return str(error)
    return f"{type(error).__name__}: {error}"


def handled_outputs(pn: PlanNode, message: str) -> dict[str, Any] | None:
    """The outputs an error becomes under the node's error mode; None when the run must stop (mode `stop`)."""
    mode = pn.node.settings.error_mode
    if mode == "continue" and pn.first_output:
        return {pn.first_output: {"error": message}}
    if mode == "error_output":
        return {ERROR_HANDLE: {"error": message, "node": pn.node.name}}
    return None
