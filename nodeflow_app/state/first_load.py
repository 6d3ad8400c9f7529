"""A page's first load that failed: its list's place says what failed, with a Retry (components/loading.py),
instead of a spinner that never ends beside an error toast."""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable

log = logging.getLogger(__name__)


async def first_load(state: Any, what: str, load: Callable[[], Awaitable[None]]) -> None:
    """Run `load` for `state` (which has `loaded` and `load_error`). A failure before the state ever loaded is
    logged and kept in `load_error`: "Could not load <what>: <reason>"; a later one raises as before."""
    try:
        await load()
    except Exception as error:  # noqa: BLE001 - the page says it, the log has the trace
        if state.loaded:
            raise
        log.exception("could not load %s", what)
        state.load_error = f"Could not load {what}: {error}"
    else:
        state.load_error = ""
