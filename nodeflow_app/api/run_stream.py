"""A run's events as server-sent events, one format for every route that streams a run (docs/api.md, "The event
stream"): the API's `mode: "stream"` and a webhook that answers "Stream".

`run` (its id) first, a `node` per event, a `: keep-alive` comment when the run is quiet for a while (proxies cut
idle connections), and `end` last, when the run ends or pauses. What `end` carries is the route's: the API's
callers see the whole run record, a webhook's callers (who hold no API token) only its outcome.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from nodeflow_app.api.responses import event_data
from nodeflow_app.contract import NodeEvent
from nodeflow_app.runs import detached
from nodeflow_app.runs.detached import RunDriver

KEEP_ALIVE = ": keep-alive\n\n"  # a comment line: SSE clients skip it
HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}  # nginx would buffer the events otherwise


def stream_response(driver: RunDriver, end: Callable[[], Any],
                    headers: dict[str, str] | None = None) -> StreamingResponse:
    """The run `driver` drives as server-sent events; `end()` gives the `end` event's data once the run ends or
    pauses (called in a worker thread: it may read the database). Call it before the first await after `drive`:
    it starts listening (RunDriver.listen), and the run's first event may come at that await."""
    events = driver.listen(detached.KEEPALIVE_S)
    return StreamingResponse(messages(driver.run.run_id, events, end), media_type="text/event-stream",
                             headers={**HEADERS, **(headers or {})})


async def messages(run_id: str, events: AsyncIterator[NodeEvent | None],
                   end: Callable[[], Any]) -> AsyncIterator[str]:
    async with aclosing(events):
        yield message("run", {"run_id": run_id})
        async for event in events:
            yield message("node", event.to_dict()) if event else KEEP_ALIVE
    yield message("end", await run_in_threadpool(end))


def message(name: str, data: Any) -> str:
    return f"event: {name}\ndata: {event_data(data)}\n\n"
