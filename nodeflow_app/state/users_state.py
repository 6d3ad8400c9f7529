"""The install's accounts, for the instance admin: who has one, and a password reset that signs them out
everywhere (the new password is shown once, to hand over; the CLI's `nodeflow users` does the same headless)."""

from __future__ import annotations

import dataclasses
import secrets
from typing import Any

import reflex as rx

from nodeflow_app.state.page_threads import off_loop
from nodeflow_app.state.access import requires
from nodeflow_app.store.accounts import AccountError, account_store


@dataclasses.dataclass
class AccountRow:
    id: str
    name: str
    email: str
    admin: bool


class UsersState(rx.State):
    accounts: list[AccountRow] = []
    reset_for: str = ""  # whose password was just reset (their email)
    new_password: str = ""  # shown once

    @rx.event
    @requires("admin")
    def load(self) -> None:
        self.reset_for = self.new_password = ""
        self.accounts = [AccountRow(u.id, u.name, u.email, u.is_admin) for u in account_store().users()]

    @rx.event
    @requires("admin")
    async def reset_password(self, user_id: str) -> Any:
        password = secrets.token_urlsafe(12)
        try:  # argon2 hashes in a thread (150-500 ms): the event loop runs every run meanwhile
            await off_loop(account_store().set_password, user_id, password)  # ends every session of theirs
        except AccountError as error:
            return rx.toast.error(str(error).capitalize() + ".")
        user = account_store().user(user_id)
        self.reset_for, self.new_password = (user.email if user else ""), password
        return None
