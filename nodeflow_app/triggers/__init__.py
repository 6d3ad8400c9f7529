"""Webhooks, schedules and activation (SPEC 6): the entry points that start runs of a graph's live version."""
