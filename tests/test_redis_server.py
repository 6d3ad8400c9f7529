"""tests/redis_server.py: a suite's Redis database is on the server NODEFLOW_TEST_REDIS_URL names."""

from tests.redis_server import redis_database


def test_a_suites_database_keeps_the_servers_host_port_and_password():
    assert redis_database(6, "redis://127.0.0.1:6379") == "redis://127.0.0.1:6379/6"
    assert redis_database(0, "rediss://:secret@cache.internal:6380/3") == "rediss://:secret@cache.internal:6380/0"
