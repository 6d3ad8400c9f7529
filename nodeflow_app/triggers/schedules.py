"""When a Schedule trigger is due: a cron expression in a time zone, or every interval (aligned to the epoch,
so every process computes the same due times without talking to each other)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadCronError, CroniterBadDateError, croniter

STARTED_BY = "schedule"  # the entry point: a Schedule's definition lists it in `started_by`
UNITS = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400}
MAX_CATCH_UP = 1000  # due times looked at between two ticks (a clock jump fires only the last)


@dataclass(frozen=True)
class Spec:
    """A schedule as parsed from a Schedule node's parameters."""

    mode: str  # cron | interval
    cron: str
    zone: ZoneInfo
    every_s: int
    missed: str  # skip | run_once

    def next_after(self, moment: float) -> float:
        """The first due time strictly after `moment` (epoch seconds).

        When clocks go back, the repeated hour's wall times come twice (croniter yields both). Like cron
        (vixie, cronie), a job at a fixed hour and minute runs once, in the first of them; a job whose hour or
        minute field is `*` (hourly, every 30 minutes, every minute of 2 am) or whose hour is a step runs in both. When clocks go forward, a skipped wall time runs
        once, at the first time after the gap (02:30 -> 03:00)."""
        if self.mode == "interval":
            return (int(moment) // self.every_s + 1) * self.every_s
        times = croniter(self.cron, datetime.fromtimestamp(moment, self.zone))
        while True:
            due = times.get_next(datetime).timestamp()
            # fold=1: the second occurrence of this wall time (computed from the instant, whatever croniter set)
            if not (self._fixed_time and datetime.fromtimestamp(due, self.zone).fold):
                return due

    @property
    def _fixed_time(self) -> bool:
        """Not a "wildcard job" in cron's sense (its minute or hour starts with `*`)."""
        minute, hour = self.cron.split()[:2]
        return not minute.startswith("*") and "*" not in hour and "/" not in hour

    def due_between(self, start: float, end: float) -> list[float]:
        """Due times in (start, end], oldest first (at most MAX_CATCH_UP of the latest)."""
        times: list[float] = []
        moment = self.next_after(start)
        while moment <= end:
            times.append(moment)
            if len(times) > MAX_CATCH_UP:
                times.pop(0)
            moment = self.next_after(moment)
        return times

    def next_times(self, after: float, count: int = 3) -> list[float]:
        times, moment = [], after
        for _ in range(count):
            moment = self.next_after(moment)
            times.append(moment)
        return times

    def payload(self, due_at: float) -> dict[str, Any]:
        """The run's payload for a due time (the Schedule node's folder owns its shape)."""
        return {"scheduled_at": datetime.fromtimestamp(due_at, self.zone).isoformat(), "timezone": self.zone.key}


def parse(data: dict[str, Any]) -> Spec:
    """A Schedule node's parameters as a Spec; a ValueError says which one is wrong."""
    mode = data.get("mode") or "cron"
    # The time zone is a cron setting (the node shows it only then): an interval counts in UTC.
    zone_name = str(data.get("timezone") or "UTC").strip() if mode == "cron" else "UTC"
    try:
        zone = ZoneInfo(zone_name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {zone_name!r} (use a name like Europe/Paris or UTC)") from None
    cron = str(data.get("cron") or "").strip()
    every_s = 0
    if mode == "cron":
        if len(cron.split()) != 5 or not croniter.is_valid(cron):
            raise ValueError(f"{cron!r} is not a cron expression of five fields (minute hour day month weekday)")
        # croniter reads a lone R as a random value, drawn again by each process and each tick: not a schedule.
        if re.search(r"(?<![A-Z])R(?![A-Z])", cron.upper()):
            raise ValueError(f"cron {cron!r}: R (a random value) is not supported; give the time")
        try:
            croniter(cron)
        except CroniterBadCronError as error:
            raise ValueError(f"cron {cron!r}: {error}") from None
    elif mode == "interval":
        unit = data.get("unit") or "hours"
        if unit not in UNITS:
            raise ValueError(f"unknown unit {unit!r}; use one of {', '.join(UNITS)}")
        try:
            every = int(data.get("every") or 0)
        except (TypeError, ValueError):
            raise ValueError("'Every' must be a whole number") from None
        if every < 1:
            raise ValueError("'Every' must be at least 1")
        every_s = every * UNITS[unit]
    else:
        raise ValueError(f"unknown repeat mode {mode!r}; use cron or interval")
    missed = data.get("missed") or "skip"
    spec = Spec(mode, cron, zone, every_s, "run_once" if missed == "run_once" else "skip")
    if mode == "cron":
        try:  # e.g. '0 0 31 4 *' (April 31st) is valid syntax, but croniter finds no date to fire on
            spec.next_after(time.time())
        except CroniterBadDateError:
            raise ValueError(f"cron {cron!r} never comes due: no date matches it (like April 31st)") from None
    return spec


def describe_next(data: dict[str, Any], now: float, count: int = 3) -> list[str] | str:
    """The next `count` due times as text in the schedule's zone (the inspector), or why there are none."""
    try:
        spec = parse(data)
        times = spec.next_times(now, count)
    except ValueError as error:
        return str(error)
    except Exception as error:  # noqa: BLE001 - the inspector shows why instead of failing to render the node
        return f"cannot compute the next times: {error}"
    return [datetime.fromtimestamp(t, spec.zone).strftime("%a %Y-%m-%d %H:%M:%S %Z") for t in times]
