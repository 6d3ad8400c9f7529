"""Reflex state classes, one per feature: the graph list and the graph editor (chat and runs come next)."""
