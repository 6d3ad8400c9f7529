"""Persistence: sqlmodel tables and the repositories over them. Never imports reflex (the CLI and tests use it directly)."""
