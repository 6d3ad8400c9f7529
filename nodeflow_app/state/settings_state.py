"""State of the Settings page: providers configured or not, their stored keys and URLs, connection tests.

The browser gets display rows only (provider_settings.provider_rows: "set", a source, at most 4 characters
of a key). A key typed here goes to the credential store and is never sent back.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

from nodeflow_app import provider_settings
from nodeflow_app.llm.credentials import CredentialError


class SettingsState(rx.State):
    providers: list[dict[str, Any]] = []
    # provider -> the last connection test: {"ok": "true"/"", "message": ..., "models": [...]}.
    tests: dict[str, dict[str, Any]] = {}
    testing: str = ""  # the provider whose connection is being tested
    form_rev: int = 0  # remounts the key inputs after a save, so a typed key does not linger in the page

    @rx.event
    def load(self):
        self._refresh()

    @rx.event
    def save(self, provider: str, form: dict[str, Any]):
        try:
            provider_settings.save_credential(provider, str(form.get("api_key") or ""),
                                              str(form.get("base_url") or ""))
        except CredentialError as error:
            return rx.toast.error(str(error))
        self.tests = {k: v for k, v in self.tests.items() if k != provider}
        self._refresh()
        return rx.toast.success(f"Saved {self._label(provider)} (encrypted)")

    @rx.event
    def delete(self, provider: str):
        removed = provider_settings.delete_credential(provider)
        self.tests = {k: v for k, v in self.tests.items() if k != provider}
        self._refresh()
        if removed:
            return rx.toast.success(f"Deleted the stored {self._label(provider)} credential")
        return rx.toast.info(f"Nothing is stored for {self._label(provider)}")

    @rx.event(background=True)
    async def check(self, provider: str):
        """Test the connection outside the state lock (a slow provider must not block the page)."""
        async with self:
            if self.testing:
                return
            self.testing = provider
        result = await provider_settings.check_connection(provider)
        async with self:
            self.testing = ""
            self.tests = {**self.tests, provider: {"ok": "true" if result.ok else "", "message": result.message,
                                                   "models": list(result.models)}}

    def _refresh(self) -> None:
        try:
            self.providers = provider_settings.provider_rows()
        except CredentialError as error:
            self.providers = []
            self.tests = {"": {"ok": "", "message": str(error), "models": []}}
        self.form_rev += 1

    def _label(self, provider: str) -> str:
        return next((p["label"] for p in self.providers if p["name"] == provider), provider)
