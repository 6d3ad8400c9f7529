"""`every` (nodeflow_app/runs/periodic.py): the loop of the scheduler, the timed pauses and housekeeping goes on
after a pass fails, and the log says what failed."""

from __future__ import annotations

import asyncio
import logging

import pytest

from nodeflow_app.runs.periodic import every


async def test_a_failed_pass_is_logged_and_the_next_one_comes(caplog):
    passes: list[int] = []

    async def work() -> None:
        passes.append(len(passes))
        if len(passes) == 2:
            raise RuntimeError("database is locked")
        if len(passes) == 4:
            raise asyncio.CancelledError  # the process stops: that ends the loop

    with caplog.at_level(logging.ERROR), pytest.raises(asyncio.CancelledError):
        async with asyncio.timeout(5):
            await every(0.01, work, logging.getLogger("nodeflow.test"), "the test's pass")
    assert passes == [0, 1, 2, 3]
    [record] = caplog.records
    assert record.getMessage() == "the test's pass failed; trying again in 0.01 s"
    assert "database is locked" in caplog.text  # with its trace
