"""Graph templates: every file in nodeflow_app/templates loads and passes the normalizer; a broken file is named."""

from __future__ import annotations

import json

import pytest

from nodeflow_app.runtime.graph import normalize
from nodeflow_app.state.graph_list_state import UNTITLED, name_base, next_untitled
from nodeflow_app.templates import BLANK, TEMPLATES_DIR, TemplateError, get_template, load_templates
from nodes._registry import default_registry

TEMPLATES = load_templates()


def test_blank_comes_first_and_is_a_chat_start_alone():
    assert TEMPLATES[0].id == BLANK
    [node] = TEMPLATES[0].graph["nodes"]
    assert node["type"] == "chat-start" and TEMPLATES[0].graph["edges"] == []


def test_the_issue_s_starting_points_are_all_there():
    ids = {t.id for t in TEMPLATES}
    assert {"blank", "chat_agent_tools", "approval", "branching", "for_each", "research_summarize"} <= ids
    assert len({t.name for t in TEMPLATES}) == len(TEMPLATES), "two templates share a name"


@pytest.mark.parametrize("template", TEMPLATES, ids=[t.id for t in TEMPLATES])
def test_every_template_validates(template):
    graph, issues = normalize({"id": "t", "name": template.name, **template.new_graph()}, default_registry())
    assert graph is not None and issues == [], [str(i) for i in issues]
    assert len(template.description) > 30, "a template says what it does"


def test_new_graph_is_a_copy(tmp_path):
    blank = get_template(BLANK)
    blank.new_graph()["nodes"].clear()
    assert blank.node_count == 1


def test_a_new_file_is_a_new_template(tmp_path):
    (tmp_path / "mine.json").write_text(json.dumps(
        {"name": "Mine", "description": "Mine.", "order": 5, "graph": {"nodes": [], "edges": []}}))
    (tmp_path / "blank.json").write_text((TEMPLATES_DIR / "blank.json").read_text())
    assert [t.id for t in load_templates(tmp_path)] == ["blank", "mine"]


@pytest.mark.parametrize("content, message", [
    ("{", "cannot be read"),
    ("[]", "must be a JSON object"),
    ('{"description": "d", "graph": {"nodes": []}}', "'name' must be a non-empty string"),
    ('{"name": "n", "description": "d", "graph": {}}', "'graph' must be an object with a 'nodes' list"),
    ('{"name": "n", "description": "d", "order": "1", "graph": {"nodes": []}}', "'order' must be an integer"),
])
def test_a_broken_file_is_named_with_its_fault(tmp_path, content, message):
    (tmp_path / "broken.json").write_text(content)
    with pytest.raises(TemplateError, match="template broken.json") as error:
        load_templates(tmp_path)
    assert message in str(error.value)


@pytest.mark.parametrize("template_id", ["nope", "../templates/blank", ".hidden"])
def test_unknown_ids_are_refused(template_id):
    with pytest.raises(TemplateError, match="no template"):
        get_template(template_id)


def test_a_new_graph_is_named_after_its_template_and_made_unique():
    research = get_template("research_summarize")
    assert name_base(get_template(BLANK)) == UNTITLED
    assert name_base(research) == research.name
    assert next_untitled([], research.name) == research.name
    assert next_untitled([research.name, f"{research.name} 2"], research.name) == f"{research.name} 3"
