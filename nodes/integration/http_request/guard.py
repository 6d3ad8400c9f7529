"""The SSRF guard every URL this node fetches passes, each redirect hop included (SPEC 12)."""

# MERGE: switch to the unified SSRF guard
from nodes.tools.toolset.addresses import check_url

__all__ = ["check_url"]
