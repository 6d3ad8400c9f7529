"""nodes/ai/classifier through the real kernel, real Agno and real HTTP against the fake OpenAI server.

                             +-- category-0 --> QUESTION  (Edit Fields)
    Chat Start --> Classifier +-- category-1 --> COMPLAINT (Edit Fields)
                             +-- else -------> OTHER     (Edit Fields)
"""

from __future__ import annotations

import json

import pytest

from tests.llm.fake_openai import http_error, text
from tests.llm.graphs import MODEL, graph, of, run_graph

CATEGORIES = [{"name": "question", "description": "The user asks for information."},
              {"name": "complaint", "description": "The user reports a problem."}]
BRANCHES = ("question", "complaint", "other")


def classifier_graph(trigger: str = "chat-start", **data) -> dict:
    settings = {"model": MODEL, "categories": CATEGORIES, **data}
    return graph([("start", trigger, {}), ("cls", "classifier", settings),
                  *[(name, "edit-fields", {}) for name in BRANCHES]],
                 ["start.output -> cls.input", "cls.category-0 -> question.input",
                  "cls.category-1 -> complaint.input", "cls.else -> other.input"])


def ran(events) -> dict[str, str]:
    """Each branch node's fate: completed or skipped."""
    return {name: next(e.event_type for e in events if e.node_id == name and e.event_type in ("completed", "skipped"))
            for name in BRANCHES}


def category(name: str) -> dict:
    return text(json.dumps({"category": name}))


async def test_routes_the_input_to_the_chosen_category(fake_llm):
    fake_llm.script(category("complaint"))
    run, events = await run_graph(classifier_graph(instructions="Messages come from the support inbox."),
                                  payload="My order arrived broken")
    assert run.status == "completed", run.error
    assert ran(events) == {"question": "skipped", "complaint": "completed", "other": "skipped"}
    assert run.outputs_by_name()["CLS"] == {"category-1": {
        "message": "My order arrived broken", "chat_id": None, "attachments": [],
        "classification": {"category": "complaint", "index": 1}}}
    assert run.outputs_by_name()["COMPLAINT"]["output"]["classification"]["category"] == "complaint"
    assert of(events, "cls", "token") == []
    [request] = fake_llm.requests
    system, user = request["messages"]
    assert user == {"role": "user", "content": "My order arrived broken"}
    assert system["content"] == (
        "Messages come from the support inbox.\n\n"
        "Classify the user's message into exactly one of these categories:\n"
        "- question: The user asks for information.\n- complaint: The user reports a problem.\n\n"
        'Answer with the category\'s name, or "none" if no category fits.')
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["category"]["enum"] == ["question", "complaint", "none"]


@pytest.mark.parametrize("reply", [category("weather"), category("none"), text("I am not sure.")])
async def test_an_answer_naming_no_category_goes_to_else(fake_llm, reply):
    fake_llm.script(reply)
    run, events = await run_graph(classifier_graph(), payload="Nice weather today")
    assert run.status == "completed", run.error
    assert ran(events) == {"question": "skipped", "complaint": "skipped", "other": "completed"}
    classification = run.outputs_by_name()["OTHER"]["output"]["classification"]
    assert classification["category"] is None and classification["index"] is None
    assert classification["answer"] in ("weather", "none", "I am not sure.")


@pytest.mark.parametrize("reply", [category("Question"), text("question"), text('"question"')])
async def test_loose_answers_still_match_a_name(fake_llm, reply):
    fake_llm.script(reply)
    run, events = await run_graph(classifier_graph(), payload="What time is it?")
    assert ran(events)["question"] == "completed"
    assert run.outputs_by_name()["CLS"]["category-0"]["classification"] == {"category": "question", "index": 0}


async def test_a_field_path_and_a_non_object_input(fake_llm):
    fake_llm.script(category("question"), category("question"))
    run, _ = await run_graph(classifier_graph("manual-trigger", field="email.body"),
                             payload={"email": {"body": "How much is it?"}})
    assert run.status == "completed", run.error
    assert fake_llm.requests[0]["messages"][-1]["content"] == "How much is it?"
    run, _ = await run_graph(classifier_graph("manual-trigger"), payload="How much is it?")
    assert run.outputs_by_name()["QUESTION"]["output"] == {
        "input": "How much is it?", "classification": {"category": "question", "index": 0}}


async def test_provider_http_500_is_a_clear_node_error(fake_llm):
    fake_llm.script(http_error(500, "the GPU caught fire"))
    run, events = await run_graph(classifier_graph(), payload="hi")
    assert run.status == "failed"
    [error] = of(events, "cls", "error")
    assert error.data["error"] == "model openai-compatible:fake-model failed (HTTP 500): the GPU caught fire"
    assert all(of(events, name, "completed") == [] for name in BRANCHES)
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize("data, message", [
    ({"categories": [{"name": "a"}, {"name": "a"}]},
     "parameter 'categories': the name 'a' is used twice (categories 0 and 1)"),
    ({"categories": [{"name": "a"}, {"name": " ", "description": "blank"}]},
     "parameter 'categories': category 1 has no name"),
    ({"field": "email.body"}, "nothing to classify: the input has no field 'email.body'"),
])
async def test_bad_settings_are_named_before_any_call(fake_llm, data, message):
    run, events = await run_graph(classifier_graph(**data), payload="hi")
    assert run.status == "failed"
    assert of(events, "cls", "error")[0].data["error"] == message
    assert fake_llm.requests == []


async def test_no_categories_is_an_error(fake_llm):
    raw = graph([("start", "chat-start", {}), ("cls", "classifier", {"model": MODEL, "categories": []}),
                 ("other", "edit-fields", {})], ["start.output -> cls.input", "cls.else -> other.input"])
    run, events = await run_graph(raw, payload="hi")
    assert of(events, "cls", "error")[0].data["error"] == (
        "parameter 'categories' needs at least one category with a name")
    assert fake_llm.requests == []


#   Manual --> Classifier (categories from an expression: the graph gave it only `else`) --else--> OTHER
async def test_a_category_from_an_expression_the_node_has_no_output_for_fails_naming_it(fake_llm):
    fake_llm.script(category("complaint"))
    settings = {"model": MODEL, "categories": "{{ $json.cats }}"}
    raw = graph([("start", "manual-trigger", {}), ("cls", "classifier", settings), ("other", "edit-fields", {})],
                ["start.output -> cls.input", "cls.else -> other.input"])
    run, _ = await run_graph(raw, payload={"message": "It broke", "cats": CATEGORIES})
    assert run.status == "failed"
    assert run.error.startswith("node 'CLS' failed: it sent {'message': 'It broke', ")
    assert run.error.endswith(" to output 'category-1', which it does not have (its outputs: else)")
