"""The SSRF guard every URL this node fetches passes, each redirect hop included (SPEC 12).

`check_url` before each hop gives a clear refusal naming the hop; `guarded_client` checks again when it
connects, so a DNS answer that changes in between cannot reach an internal address.
"""

from nodeflow_app.net.guard import check_url, guarded_client

__all__ = ["check_url", "guarded_client"]
