"""Agent history: Agno session storage keyed by chat and node, in a SQLite file under NODEFLOW_DATA_DIR.

    Chat Start --> Agent       (two messages of one chat, then another chat)
"""

from __future__ import annotations

from nodeflow_app.contract import CONVERSATION
from tests.llm.fake_openai import text
from tests.llm.graphs import MODEL, graph, run_graph


def chat_graph(**data) -> dict:
    return graph([("chat", "chat-start", {}), ("a", "agent", {"model": MODEL, **data})], ["chat.output -> a.input"])


def conversation(request: dict) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in request["messages"] if m["role"] in ("user", "assistant")]


async def test_the_second_turn_of_a_chat_sees_the_first(fake_llm, tmp_path):
    fake_llm.script(text(["Hi", " Ada"]), text(["Your", " name", " is", " Ada"]))
    first, _ = await run_graph(chat_graph(), payload="My name is Ada", context={CONVERSATION: "chat-1"})
    second, _ = await run_graph(chat_graph(), payload="What is my name?", context={CONVERSATION: "chat-1"})
    assert (first.status, second.status) == ("completed", "completed"), (first.error, second.error)
    assert conversation(fake_llm.requests[1]) == [
        ("user", "My name is Ada"), ("assistant", "Hi Ada"), ("user", "What is my name?")]
    # History lives in the app's own database (REFLEX_DB_URL), in Agno's session table.
    import sqlite3
    tables = {row[0] for row in sqlite3.connect(tmp_path / "nodeflow.db").execute(
        "select name from sqlite_master where type = 'table'")}
    assert any(name.startswith("agno_") and "session" in name for name in tables), tables


async def test_history_is_per_chat_and_can_be_switched_off(fake_llm):
    await run_graph(chat_graph(), payload="first", context={CONVERSATION: "chat-1"})
    await run_graph(chat_graph(), payload="other chat", context={CONVERSATION: "chat-2"})
    await run_graph(chat_graph(history=False), payload="no memory", context={CONVERSATION: "chat-1"})
    await run_graph(chat_graph(), payload="no chat id")
    assert [conversation(r) for r in fake_llm.requests[1:]] == [
        [("user", "other chat")], [("user", "no memory")], [("user", "no chat id")]]


async def test_history_is_per_agent_node(fake_llm):
    raw = graph([("chat", "chat-start", {}), ("a", "agent", {"model": MODEL}), ("b", "agent", {"model": MODEL})],
                ["chat.output -> a.input", "a.output -> b.input"])
    await run_graph(raw, payload="one", context={CONVERSATION: "c"})
    await run_graph(raw, payload="two", context={CONVERSATION: "c"})
    a_first, b_first, a_second, b_second = fake_llm.requests
    assert conversation(a_second) == [("user", "one"), ("assistant", "echo: one"), ("user", "two")]
    assert conversation(b_second) == [("user", "echo: one"), ("assistant", "echo: echo: one"),
                                      ("user", "echo: two")]


#  Chat Start --> Lead    (Member ==tools-out => tools==> Lead)
async def test_a_team_remembers_the_chat_too(fake_llm):
    raw = graph([("chat", "chat-start", {}), ("lead", "agent", {"model": MODEL}),
                 ("member", "agent", {"model": MODEL})],
                ["chat.output -> lead.input", "member.tools-out => lead.tools"])
    fake_llm.script(text("Noted, Ada"))
    first, _ = await run_graph(raw, payload="I am Ada", context={CONVERSATION: "team-chat"})
    second, _ = await run_graph(raw, payload="Who am I?", context={CONVERSATION: "team-chat"})
    assert (first.status, second.status) == ("completed", "completed"), (first.error, second.error)
    assert conversation(fake_llm.requests[1]) == [
        ("user", "I am Ada"), ("assistant", "Noted, Ada"), ("user", "Who am I?")]


async def test_history_on_the_real_postgresql(fake_llm, monkeypatch):
    """Team scale (REFLEX_DB_URL on PostgreSQL): Agno's PostgresDb keeps the chat's history there."""
    import uuid

    from sqlalchemy import inspect

    from nodeflow_app.llm.history import session_db, session_id
    from nodeflow_app.store.db import make_engine
    from tests.store.postgres import POSTGRES_URL

    monkeypatch.setenv("REFLEX_DB_URL", POSTGRES_URL)
    chat_id = f"pg-history-{uuid.uuid4().hex[:8]}"  # the shared database: a chat nobody else uses
    fake_llm.script(text(["Hi", " Ada"]), text(["Your", " name", " is", " Ada"]))
    try:
        first, _ = await run_graph(chat_graph(), payload="My name is Ada", context={CONVERSATION: chat_id})
        second, _ = await run_graph(chat_graph(), payload="What is my name?", context={CONVERSATION: chat_id})
        assert (first.status, second.status) == ("completed", "completed"), (first.error, second.error)
        assert conversation(fake_llm.requests[1]) == [
            ("user", "My name is Ada"), ("assistant", "Hi Ada"), ("user", "What is my name?")]
        db = session_db()
        assert type(db).__name__ == "PostgresDb"
        engine = make_engine(POSTGRES_URL)
        try:
            tables = inspect(engine).get_table_names(schema=db.db_schema)
        finally:
            engine.dispose()
        assert any(name.startswith("agno_") and "session" in name for name in tables), tables
    finally:
        session_db().delete_session(session_id(chat_id, "a"))
