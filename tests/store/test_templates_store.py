"""Templates of a workspace on SQLite and on the real PostgreSQL: saved without secrets, listed and found only in
their own workspace, deleted by it, gone with it; a graph made from one validates."""

from __future__ import annotations

import pytest

from nodeflow_app.runtime.graph import normalize
from nodeflow_app.secret_values import HIDDEN, seal
from nodeflow_app.store.accounts import AccountStore
from nodeflow_app.store.db import make_engine
from nodeflow_app.store.templates import TemplateStore, is_workspace_template
from nodes._registry import default_registry
from tests.llm.graphs import graph
from tests.store.postgres import POSTGRES_URL, private_schema

PASSWORD = "correct horse"


@pytest.fixture(params=["sqlite", "postgresql"])
def stores(request, tmp_path):
    if request.param == "sqlite":
        engine = make_engine(f"sqlite:///{tmp_path / 'nodeflow.db'}")
        yield AccountStore(engine), TemplateStore(engine)
        engine.dispose()
        return
    with private_schema() as schema:
        engine = make_engine(POSTGRES_URL).execution_options(schema_translate_map={None: schema})
        yield AccountStore(engine), TemplateStore(engine)
        engine.dispose()


def _with_a_secret() -> dict:
    return graph([("hook", "webhook-trigger", {"auth": "header", "auth_secret": seal("s3cret-token")}),
                  ("note", "edit-fields", {"fields": [{"name": "ok", "value": "yes"}]})],
                 ["hook.output -> note.input"])


def test_a_template_belongs_to_its_workspace_and_keeps_no_secret(stores):
    accounts, templates = stores
    ada = accounts.create_user("Ada", "ada@example.org", PASSWORD)
    team, other = accounts.create_workspace(ada.id, "Team"), accounts.create_workspace(ada.id, "Other")
    saved = templates.save(team.id, " Webhook desk ", "Answers orders.", _with_a_secret(), default_registry(),
                           author=ada.id)
    assert is_workspace_template(saved.id) and saved.name == "Webhook desk" and saved.node_count == 2
    [listed] = templates.list(team.id)
    assert listed == saved and templates.list(other.id) == []
    assert templates.get(other.id, saved.id) is None  # another workspace's id is not found
    hook = templates.get(team.id, saved.id).new_graph()["nodes"][0]["data"]
    assert hook["auth_secret"] == HIDDEN and "s3cret" not in repr(templates.list(team.id))
    made, issues = normalize({"id": "x", "name": "From template", **listed.new_graph()}, default_registry())
    assert made is not None and issues == []
    templates.delete(other.id, saved.id)  # not its workspace: nothing happens
    assert templates.list(team.id) == [saved]
    templates.delete(team.id, saved.id)
    assert templates.list(team.id) == []


def test_a_bad_name_or_description_says_why(stores):
    accounts, templates = stores
    ada = accounts.create_user("Ada", "ada@example.org", PASSWORD)
    with pytest.raises(ValueError, match="needs a name"):
        templates.save(ada.id, "  ", "", _with_a_secret(), default_registry())
    with pytest.raises(ValueError, match="at most 500"):
        templates.save(accounts.personal_workspace(ada.id).id, "x", "d" * 501, _with_a_secret(), default_registry())


def test_templates_go_with_their_workspace(stores):
    accounts, templates = stores
    ada = accounts.create_user("Ada", "ada@example.org", PASSWORD)
    team = accounts.create_workspace(ada.id, "Team")
    templates.save(team.id, "Kept", "", _with_a_secret(), default_registry())
    accounts.delete_workspace(team.id)
    assert templates.list(team.id) == []
