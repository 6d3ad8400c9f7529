"""Which nodes' streamed text is the chat's answer (nodeflow_app/chat/answer.py), graph by graph."""

from __future__ import annotations

from nodeflow_app.chat.answer import answer_nodes
from nodeflow_app.runtime.graph import normalize_or_raise
from nodeflow_app.runtime.plan import compile_plan
from nodeflow_app.templates import TEMPLATES_DIR, read_template
from nodes._registry import default_registry
from tests.llm.graphs import MODEL, graph

REGISTRY = default_registry()


def answering(raw: dict) -> set[str]:
    return set(answer_nodes(compile_plan(normalize_or_raise(raw, REGISTRY), REGISTRY)))


def template(name: str) -> dict:
    return read_template(TEMPLATES_DIR / f"{name}.json").new_graph()


def test_a_model_that_ends_the_graph_answers():
    """Chat Start --> Agent"""
    raw = graph([("chat", "chat-start", {}), ("a", "agent", {"model": MODEL})], ["chat.output -> a.input"])
    assert answering(raw) == {"a"}


def test_a_model_answers_through_nodes_that_pass_one_value_on():
    """Chat Start --> LLM --> Edit Fields --> Wait"""
    raw = graph([("chat", "chat-start", {}), ("llm", "llm-completion", {"model": MODEL}),
                 ("edit", "edit-fields", {}), ("wait", "wait", {"amount": 0})],
                ["chat.output -> llm.input", "llm.output -> edit.input", "edit.output -> wait.input"])
    assert "llm" in answering(raw)


def test_an_approval_after_a_model_makes_its_text_a_draft():
    """Chat Start --> Draft (agent) --> Approval --approve--> Send
                                                 \\--reject---> Hold"""
    assert answering(template("approval")) == {"send", "hold"}


def test_a_branch_a_model_or_new_text_after_a_model_holds_its_text_back():
    """Chat Start --> LLM --> Conditional --> ...;  Chat Start --> Agent --> LLM;  Chat Start --> LLM --> Prompt Template"""
    routed = graph([("chat", "chat-start", {}), ("llm", "llm-completion", {"model": MODEL}),
                    ("if", "conditional", {}), ("yes", "edit-fields", {})],
                   ["chat.output -> llm.input", "llm.output -> if.input", "if.true -> yes.input"])
    assert answering(routed) == {"if", "yes"}
    research = answering(template("research_summarize"))  # researcher --> summarize (both models)
    assert "summarize" in research and "researcher" not in research
    templated = graph([("chat", "chat-start", {}), ("llm", "llm-completion", {"model": MODEL}),
                       ("t", "prompt-template", {})], ["chat.output -> llm.input", "llm.output -> t.input"])
    assert answering(templated) == {"t"}


def test_models_after_a_branch_answer():
    """Chat Start --> Conditional --true--> Prompt Template --> Merge;  --false--> LLM --> Merge"""
    assert answering(template("branching")) == {"refund", "answer", "join"}


def test_nodes_in_a_container_never_answer_and_nothing_before_it_does():
    """Chat Start --> For Each [ LLM ] --> Edit Fields"""
    raw = graph([("chat", "chat-start", {}), ("loop", "for-each", {}), ("llm", "llm-completion", {"model": MODEL}),
                 ("edit", "edit-fields", {})], ["chat.output -> loop.input", "loop.output -> edit.input"])
    raw["nodes"][2]["parentId"] = "loop"
    assert answering(raw) == {"loop", "edit"}
