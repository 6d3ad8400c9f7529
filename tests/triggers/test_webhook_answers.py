"""What a webhook's answer may carry: a node's response headers and status code that would act for NodeFlow's
site (a page, a cookie, a redirect) or that HTTP cannot carry are refused by validation and activation, and left
out of the answer of a version that went live before; every answer says `nosniff` and `sandbox`."""

from __future__ import annotations

import logging

import pytest

from nodeflow_app.triggers.activation import ActivationRefused
from nodeflow_app.triggers.webhooks import hook_id
from nodeflow_app.validation import node_issues, validate_graph
from nodes._registry import default_registry
from tests.llm.graphs import graph
from tests.triggers.conftest import hooked

SCRIPT = "<script>fetch('/api/v1/graphs').then(r => r.text()).then(alert)</script>"


def phishing(headers: list[dict], status: int = 200) -> dict:
    """Webhook (GET, answers with the last node) -> Edit Fields whose output holds a script."""
    return graph([("hook", "webhook-trigger", {"methods": "GET", "respond": "last_node", "status_code": status,
                                               "response_headers": headers}),
                  ("page", "edit-fields", {"include_input": False, "fields": [{"name": "x", "value": SCRIPT}]})],
                 ["hook.output -> page.input"])


UNSAFE = [{"name": "Content-Type", "value": "text/html"},
          {"name": "Set-Cookie", "value": "nf_session=EVES-SESSION; Path=/; HttpOnly"},
          {"name": "Location", "value": "https://evil.example/"},
          {"name": "X-Price", "value": "\u20ac"},
          {"name": "X-Shop", "value": "yes"}]


def went_live_before_the_rules(hooks, raw: dict) -> str:
    """A graph made live as activation did before it checked answers (straight in the store)."""
    graph_id = hooks.graphs.create("Live before", raw).id
    hooks.triggers.activate(graph_id, hooks.graphs.get(graph_id).version, {hook_id(graph_id, "hook"): "hook"})
    return hook_id(graph_id, "hook")


def test_validation_names_the_node_and_each_refused_header_and_status():
    _, issues = validate_graph(phishing(UNSAFE, status=302), default_registry())
    found = [(issue.node_name, issue.parameter, issue.message) for issue in issues if issue.rule == "unsafe_answer"]
    assert [message.split(":")[0] for _, _, message in found] == [
        "status code 302", "response header 'Content-Type'", "response header 'Set-Cookie'",
        "response header 'Location'", "response header 'X-Price'"]
    assert {(name, parameter) for name, parameter, _ in found} == {("HOOK", "status_code"),
                                                                    ("HOOK", "response_headers")}
    assert "cannot set cookies for NodeFlow's site" in found[2][2] and "redirect" in found[0][2]
    assert "character other than ASCII" in found[4][2]


@pytest.mark.parametrize("status", [101, 204, 205, 301, 304, 307])
def test_a_status_that_redirects_or_carries_no_body_is_refused(status):
    _, issues = validate_graph(phishing([], status=status), default_registry())
    assert [issue.parameter for issue in issues if issue.rule == "unsafe_answer"] == ["status_code"]


def test_the_inspector_shows_the_problem_under_the_field():
    normalized, _ = validate_graph(phishing([{"name": "Set-Cookie", "value": "a=b"}]), default_registry())
    issues = node_issues(normalized, default_registry(), "hook")
    assert [(issue.parameter, issue.message) for issue in issues] == [
        ("response_headers", "response header 'Set-Cookie': not allowed: a webhook cannot set cookies for "
                             "NodeFlow's site")]


def test_safe_headers_and_statuses_pass():
    safe = [{"name": "X-Shop", "value": "yes"}, {"name": "Cache-Control", "value": "no-store"}]
    _, issues = validate_graph(phishing(safe, 201), default_registry())
    assert issues == []


def test_activation_refuses_naming_the_node_and_the_header(hooks):
    graph_id = hooks.graphs.create("Phish", phishing([{"name": "Set-Cookie", "value": "a=b"}])).id
    with pytest.raises(ActivationRefused, match="HOOK: response header 'Set-Cookie': not allowed"):
        hooks.activation.activate(graph_id)
    assert hooks.triggers.live_hook(hook_id(graph_id, "hook")) is None


def test_activation_does_not_refuse_a_hidden_webhook_answer(hooks):
    """Answering at once, the answer settings do not apply (the inspector hides them): no refusal for them."""
    data = {"methods": "GET", "respond": "at_once", "response_headers": [{"name": "Set-Cookie", "value": "a=b"}]}
    raw = graph([("hook", "webhook-trigger", data), ("x", "edit-fields", {})], ["hook.output -> x.input"])
    assert validate_graph(raw, default_registry())[1] == []
    graph_id = hooks.graphs.create("Quiet", raw).id
    assert hooks.activation.activate(graph_id) == 1
    raw["nodes"][0]["data"]["respond"] = "last_node"  # the headers apply again: refused again
    hooks.graphs.save(graph_id, raw)
    with pytest.raises(ActivationRefused, match="Set-Cookie"):
        hooks.activation.activate(graph_id)


async def test_a_version_live_from_before_answers_without_the_refused_headers(hooks, caplog):
    hook = went_live_before_the_rules(hooks, phishing(UNSAFE, status=302))
    with caplog.at_level(logging.WARNING, logger="nodeflow.api.hooks"):
        async with hooks.client() as client:
            answer = await client.get(f"/api/hooks/{hook}")
    assert answer.status_code == 200 and answer.json() == {"x": SCRIPT}
    assert answer.headers["content-type"] == "application/json"
    assert "set-cookie" not in answer.headers and "location" not in answer.headers and "x-price" not in answer.headers
    assert answer.headers["x-shop"] == "yes"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["content-security-policy"] == "sandbox"
    assert "response header 'Set-Cookie': not allowed" in caplog.text and "left out of the answer" in caplog.text


async def test_a_header_value_http_cannot_carry_is_no_500_after_the_run(hooks):
    hook = went_live_before_the_rules(hooks, hooked({"respond": "last_node", "response_headers": [
        {"name": "X-A", "value": "\u20ac"}, {"name": "X-B", "value": "a\r\nSet-Cookie: x=y"},
        {"name": "Bad Name", "value": "1"}]}))
    async with hooks.client() as client:
        answer = await client.post(f"/api/hooks/{hook}", json={"n": 1})
    assert answer.status_code == 200 and answer.json() == {"n": 1, "done": True}
    assert not {"x-a", "x-b", "set-cookie", "bad name"} & set(answer.headers)


async def test_every_webhook_answer_says_nosniff_and_sandbox(hooks):
    _, at_once = hooks.create(hooked())
    _, streamed = hooks.create(hooked({"respond": "stream"}))
    async with hooks.client() as client:
        answers = [await client.post(f"/api/hooks/{at_once}", json={"n": 1}),
                   await client.post(f"/api/hooks/{streamed}", json={"n": 1}),
                   await client.put(f"/api/hooks/{at_once}", json={}),  # 405
                   await client.post("/api/hooks/nothing-here", json={})]  # 404
    assert [a.status_code for a in answers] == [202, 200, 405, 404]
    for answer in answers:
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["content-security-policy"] == "sandbox"
