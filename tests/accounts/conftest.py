"""Account tests hash with cheap argon2 settings (the production defaults cost ~50 ms per hash)."""

import pytest
from argon2 import PasswordHasher

from nodeflow_app.state import access
from nodeflow_app.store import accounts


@pytest.fixture(autouse=True)
def cheap_password_hashing(monkeypatch):
    monkeypatch.setattr(accounts, "PASSWORD_HASHER", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))


@pytest.fixture
def page_accounts(tmp_path, monkeypatch):
    """`use(state_module)`: an account store on a fresh SQLite file, read by that page state's module and by the
    access check (its session cache emptied)."""
    store = accounts.AccountStore(f"sqlite:///{tmp_path / 'nodeflow.db'}")
    monkeypatch.setattr(access, "account_store", lambda: store)
    access._sessions.clear()

    def use(state_module) -> accounts.AccountStore:
        monkeypatch.setattr(state_module, "account_store", lambda: store)
        return store

    yield use
    store.engine.dispose()
