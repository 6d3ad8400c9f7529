"""Reflex state classes (graph editor, chat, runs, auth, workspace).

The shell needs no state yet: the palette is rendered at compile time from the registry.
"""
