"""Account tests hash with cheap argon2 settings (the production defaults cost ~50 ms per hash)."""

import pytest
from argon2 import PasswordHasher

from nodeflow_app.store import accounts


@pytest.fixture(autouse=True)
def cheap_password_hashing(monkeypatch):
    monkeypatch.setattr(accounts, "PASSWORD_HASHER", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
