"""Chats, pins and credentials on SQLite and on the real PostgreSQL alike, poison values included.

(Graphs and runs: tests/store/test_graphs.py and test_runs.py run on both too.)
"""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet

from nodeflow_app.llm.credentials import Credential
from nodeflow_app.store.credentials import CredentialStore
from nodeflow_app.store.chats import ChatNotFound, ChatStore
from nodeflow_app.store.db import create_all, make_engine
from nodeflow_app.store.pins import PinStore

from tests.store.postgres import POSTGRES_URL, private_schema

POISON = {"nul": "a\x00b", "surrogate": "x\ud800y", "stray byte": "\udcff", "emoji": "🙂"}


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path):
    """A fresh SQLite file, or a private schema in the shared `test` PostgreSQL database."""
    if request.param == "sqlite":
        engine = make_engine(f"sqlite:///{tmp_path / 'nodeflow.db'}")
        create_all(engine)
        yield engine
        engine.dispose()
        return
    with private_schema() as schema:
        base = make_engine(POSTGRES_URL)
        engine = base.execution_options(schema_translate_map={None: schema})
        create_all(engine)
        yield engine
        base.dispose()


def test_chats_messages_branches_and_poison_text(engine):
    store = ChatStore(engine)
    chat = store.create_chat("g1", "First")
    other = store.create_chat("g1")
    question = store.add_message(chat.id, "user", [{"type": "text", "text": "hi"}], parent_id=None)
    answer = store.add_message(chat.id, "assistant", [{"type": "text", "text": POISON["nul"]}],
                               parent_id=question.id, status="streaming", run_id="r1")
    retry = store.add_message(chat.id, "assistant", [{"type": "text", "text": "again"}], parent_id=question.id)
    store.update_message(answer.id, blocks_json='[{"type": "text", "text": "x\ud800y"}]', status="complete")

    assert store.get_message(answer.id).blocks == [{"type": "text", "text": POISON["surrogate"]}]
    history = store.history(chat.id)
    assert history.siblings(retry.id) == [answer.id, retry.id] and history.path == [question.id, retry.id]
    assert [c.id for c in store.list_chats("g1")] == [chat.id, other.id]  # last active first
    store.rename_chat(chat.id, "Renamed")
    assert store.get_chat(chat.id).title == "Renamed"
    store.delete_chat(chat.id)
    assert store.get_chat(chat.id) is None and store.get_message(answer.id) is None
    with pytest.raises(ChatNotFound):
        store.add_message(chat.id, "user", [], parent_id=None)


def test_an_answer_left_streaming_becomes_failed(engine):
    store = ChatStore(engine)
    chat = store.create_chat("g1")
    message = store.add_message(chat.id, "assistant", [{"type": "text", "text": "half"}], parent_id=None,
                                status="streaming")
    gone = store.add_message(chat.id, "assistant", [], parent_id=message.id, status="streaming",
                             run_id="a run pruned since")
    assert sorted(store.mark_interrupted()) == sorted([message.id, gone.id])
    stored = store.get_message(message.id)
    assert stored.status == "failed" and stored.blocks[-1]["type"] == "error"
    assert store.get_message(gone.id).status == "failed"


def test_pins_round_trip_any_value(engine):
    store = PinStore(engine)
    store.pin("g1", "a", {"out": POISON})
    store.pin("g1", "b", {"out": 1})
    store.pin("g1", "b", {"out": 2})  # re-pinned
    store.pin("g2", "a", {"out": 3})
    assert store.pins("g1") == {"a": {"out": POISON}, "b": {"out": 2}}
    assert store.unpin("g1", "a") is True and store.unpin("g1", "a") is False
    assert store.pins("g1") == {"b": {"out": 2}} and store.pins("g2") == {"a": {"out": 3}}


def test_credentials_are_stored_encrypted_listed_and_deleted(engine):
    store = CredentialStore(engine, Fernet(Fernet.generate_key()))
    store.set("openai", "sk-secret")
    store.set("openai-compatible", "k", base_url="http://llm.internal:8000/v1")
    assert store.get("openai") == Credential("sk-secret", None)
    assert store.get("openai-compatible") == Credential("k", "http://llm.internal:8000/v1")
    assert [(r["provider"], r["api_key"], r["base_url"]) for r in store.list()] == [
        ("openai", True, False), ("openai-compatible", True, True)]
    assert store.delete("openai") is True and store.delete("openai") is False
    assert store.get("openai") is None
