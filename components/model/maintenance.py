"""The weekly maintenance window as each cloud's API spells it (pure functions of the config)."""

from __future__ import annotations

import datetime

from components.model.schema import WEEKDAYS, MaintenanceConfig

# A Monday: recurring windows are anchored on a date; only its weekday and time matter.
_A_MONDAY = datetime.date(2024, 1, 1)


def window_start(window: MaintenanceConfig) -> datetime.datetime:
    """The window's first occurrence on or after the anchor Monday, UTC."""
    hours, minutes = (int(part) for part in window.start_time.split(":"))
    day = _A_MONDAY + datetime.timedelta(days=WEEKDAYS.index(window.day))
    return datetime.datetime.combine(day, datetime.time(hours, minutes), tzinfo=datetime.UTC)


def window_end(window: MaintenanceConfig) -> datetime.datetime:
    return window_start(window) + datetime.timedelta(hours=window.duration_hours)


def rfc3339(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def weekly_rrule(window: MaintenanceConfig) -> str:
    """RFC 5545 recurrence of a weekly window (GKE's `recurrence`)."""
    return f"FREQ=WEEKLY;BYDAY={window.day[:2].upper()}"
