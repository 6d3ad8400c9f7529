"""Model providers, credentials and the Agno integration helpers nodes use (no reflex here)."""
