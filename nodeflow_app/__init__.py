"""NodeFlow: a visual builder for AI agent workflows. The Reflex app lives in nodeflow_app.nodeflow_app."""
