"""Reflex components of the NodeFlow UI (header, palette, canvas, inspector, chat...)."""
