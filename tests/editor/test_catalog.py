"""The canvas catalog: every registered node type, drawable from data alone."""

from __future__ import annotations

import json

from nodeflow_app.editor.catalog import catalog
from nodeflow_app.contract import SOCKET_TYPES
from nodeflow_app.editor.catalog import SOCKET_STYLES
from nodeflow_app.runtime.coercion import can_connect
from nodes._registry import default_registry


def test_catalog_has_every_definition_and_is_plain_json() -> None:
    definitions = default_registry().definitions()
    data = json.loads(json.dumps(catalog(definitions)))
    assert set(data["types"]) == {d.id for d in definitions}
    prompt = data["types"]["prompt-template"]
    assert [s["id"] for s in prompt["outputs"]] == ["output", "prompt"]
    assert prompt["parameters"][0]["socket"] is None  # constant parameters have no socket
    agent = {p["id"]: p for p in data["types"]["agent"]["parameters"]}
    assert agent["model"]["socket"] == {"type": "model", "channel": "link"}
    assert set(data["sockets"]) == set(SOCKET_STYLES) == set(SOCKET_TYPES)


def test_catalog_coercions_agree_with_can_connect() -> None:
    pairs = {tuple(p) for p in catalog([])["coercions"]}
    for source in SOCKET_STYLES:
        for target in SOCKET_STYLES:
            expected = can_connect(source, target)[0]
            browser_says = source == target or "any" in (source, target) or (source, target) in pairs
            assert browser_says == expected, (source, target)
