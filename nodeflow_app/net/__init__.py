"""Outbound network helpers shared by nodes and services (the SSRF guard); nothing here imports store, services or UI."""
