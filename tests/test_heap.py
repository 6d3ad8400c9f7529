"""Start-up objects are frozen out of the garbage collector's full collections once the app is built."""

from __future__ import annotations

import gc

from nodeflow_app.heap import YOUNG_THRESHOLD, freeze_startup_objects


def test_freezing_moves_what_exists_into_the_permanent_generation():
    gc.unfreeze()
    before, threshold = gc.get_freeze_count(), gc.get_threshold()
    try:
        freeze_startup_objects()
        assert gc.get_freeze_count() > max(before, 10_000)  # the imported modules, classes and their data
        assert len(gc.get_objects(generation=2)) < gc.get_freeze_count()  # full collections skip them
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *threshold[1:])  # requests' objects die young
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


def test_the_app_freezes_them_as_its_last_start_up_task():
    from nodeflow_app.nodeflow_app import app

    tasks = list(app._lifespan_tasks)  # noqa: SLF001 - Reflex keeps them in registration order
    assert tasks[-1] is freeze_startup_objects
