"""A database, a launcher and the API in process (httpx over ASGI) for webhook, schedule and activation tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from nodeflow_app.api.app import create_api
from nodeflow_app.api.services import Services
from nodeflow_app.runs.launcher import RunLauncher
from nodeflow_app.store.graphs import GraphStore
from nodeflow_app.store.triggers import TriggerStore
from nodeflow_app.triggers.activation import Activation
from nodeflow_app.triggers.webhooks import hook_id
from tests.llm.graphs import graph


def hooked(hook: dict[str, Any] | None = None, *, fields: dict[str, Any] | None = None) -> dict:
    """Webhook -> Edit Fields (copies the body's `n`, adds what `fields` says) -> Edit Fields (done: true)."""
    rows = [{"name": "n", "value": "{{ $json.body.n }}"}] + [{"name": k, "value": v} for k, v in (fields or {}).items()]
    return graph([("hook", "webhook-trigger", hook or {}),
                  ("pick", "edit-fields", {"include_input": False, "fields": rows}),
                  ("done", "edit-fields", {"fields": [{"name": "done", "value": True}]})],
                 ["hook.output -> pick.input", "pick.output -> done.input"])


@dataclass
class Hooks:
    launcher: RunLauncher
    graphs: GraphStore
    triggers: TriggerStore
    activation: Activation
    api: Any

    def create(self, raw: dict, *, active: bool = True) -> tuple[str, str]:
        """A stored graph (activated unless told) and its webhook's address id."""
        graph_id = self.graphs.create("Hooked", raw).id
        if active:
            self.activation.activate(graph_id)
        return graph_id, hook_id(graph_id, "hook")

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=self.api), base_url="http://api.test")


@pytest.fixture
def hooks(tmp_path, monkeypatch) -> Hooks:
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))  # the secret key of sealed parameters
    monkeypatch.delenv("NODEFLOW_SECRET_KEY", raising=False)
    url = f"sqlite:///{tmp_path / 'nodeflow.db'}"
    launcher = RunLauncher(url)
    graphs, triggers = GraphStore(launcher.engine), TriggerStore(launcher.engine)
    api = create_api(Services(graphs=lambda: graphs, launcher=lambda: launcher))
    yield Hooks(launcher, graphs, triggers, Activation(launcher, triggers, graphs), api)
    launcher.close()
