"""Importing graphs of the older runtime (seed 004, SPEC 9): detection, explicit conversion and its report.

A service: JSON in, JSON out. It never runs inside the kernel; the CLI (`nodeflow migrate`) and the
editor's Import call it, show the report, and only then save.
"""

from .migrate import Migration, migrate_graph
from .report import MigrationReport, ReportLine
from .source import LegacyFormatError, is_legacy_graph

__all__ = ["LegacyFormatError", "Migration", "MigrationReport", "ReportLine", "is_legacy_graph", "migrate_graph"]
