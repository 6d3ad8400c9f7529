"""Test runs of stored graphs: reactive re-runs, run to here, pinned outputs, run history (no reflex)."""
