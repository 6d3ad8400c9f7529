"""State of a workspace's credentials page: its provider keys and URLs, its named HTTP and database
connections, connection tests; for the instance admin also the install's environment keys and MCP servers.

Only the workspace's owner gets here (`manage`, checked on the server for every event). The browser gets
display rows only (provider_settings: "set", a source, at most 4 characters of a key; a connection's field
names). A key or field value typed here goes to the encrypted store and is never sent back.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

from nodeflow_app import provider_settings
from nodeflow_app.connections import KINDS
from nodeflow_app.llm.credentials import CredentialError
from nodeflow_app.state.access import current, requires


class SettingsState(rx.State):
    providers: list[dict[str, Any]] = []
    # provider (or "connection:<name>") -> the last test: {"ok": "true"/"", "message": ..., "models": [...]}.
    tests: dict[str, dict[str, Any]] = {}
    testing: str = ""  # the provider or connection being tested
    form_rev: int = 0  # remounts the key inputs after a save, so a typed key does not linger in the page
    connections: list[dict[str, str]] = []
    connection_kind: str = "http_bearer"
    is_admin: bool = False
    environment: list[dict[str, str]] = []  # the install's keys: instance admin only
    mcp_servers: str = ""

    @rx.event
    @requires("manage")
    def load(self):
        self._refresh()

    @rx.event
    @requires("manage")
    def save(self, provider: str, form: dict[str, Any]):
        try:
            provider_settings.save_credential(provider, str(form.get("api_key") or ""),
                                              str(form.get("base_url") or ""), _workspace())
        except CredentialError as error:
            return rx.toast.error(str(error))
        self.tests = {k: v for k, v in self.tests.items() if k != provider}
        self._refresh()
        return rx.toast.success(f"Saved {self._label(provider)} for this workspace (encrypted)")

    @rx.event
    @requires("manage")
    def delete(self, provider: str):
        removed = provider_settings.delete_credential(provider, _workspace())
        self.tests = {k: v for k, v in self.tests.items() if k != provider}
        self._refresh()
        if removed:
            return rx.toast.success(f"Deleted the stored {self._label(provider)} credential")
        return rx.toast.info(f"Nothing is stored for {self._label(provider)}")

    @rx.event(background=True)
    @requires("manage")
    async def check(self, provider: str):
        """Test the connection outside the state lock (a slow provider must not block the page)."""
        workspace = _workspace()
        async with self:
            if self.testing:
                return
            self.testing = provider
        result = await provider_settings.check_connection(provider, workspace)
        async with self:
            self._record_test(provider, result)

    @rx.event
    @requires("manage")
    def set_connection_kind(self, kind: str):
        self.connection_kind = kind if kind in KINDS else "http_bearer"

    @rx.event
    @requires("manage")
    def save_connection(self, form: dict[str, Any]):
        name = str(form.get("name") or "").strip()
        try:
            provider_settings.save_connection(_workspace(), name, self.connection_kind, str(form.get("fields") or ""),
                                              admin=bool(current().user and current().user.is_admin))
        except CredentialError as error:
            return rx.toast.error(str(error))
        self._refresh()
        return rx.toast.success(f"Saved the connection {name!r} (encrypted)")

    @rx.event
    @requires("manage")
    def delete_connection(self, name: str):
        provider_settings.delete_connection(_workspace(), name)
        self.tests = {k: v for k, v in self.tests.items() if k != f"connection:{name}"}
        self._refresh()
        return rx.toast.success(f"Deleted the connection {name!r}")

    @rx.event(background=True)
    @requires("manage")
    async def check_connection(self, name: str):
        workspace, key = _workspace(), f"connection:{name}"
        async with self:
            if self.testing:
                return
            self.testing = key
        result = await provider_settings.check_named_connection(workspace, name)
        async with self:
            self._record_test(key, result)

    def _record_test(self, key: str, result: Any) -> None:
        self.testing = ""
        self.tests = {**self.tests, key: {"ok": "true" if result.ok else "", "message": result.message,
                                          "models": list(result.models)}}

    def _refresh(self) -> None:
        access = current()
        self.is_admin = bool(access.user and access.user.is_admin)
        try:
            self.providers = provider_settings.provider_rows(_workspace(), admin=self.is_admin)
            self.connections = provider_settings.connection_rows(_workspace())
        except CredentialError as error:
            self.providers = []
            self.tests = {"": {"ok": "", "message": str(error), "models": []}}
        self.environment = provider_settings.environment_rows() if self.is_admin else []
        self.mcp_servers = provider_settings.mcp_server_names() if self.is_admin else ""
        self.form_rev += 1

    def _label(self, provider: str) -> str:
        return next((p["label"] for p in self.providers if p["name"] == provider), provider)


def _workspace() -> str:
    """The workspace the event acts in (the access check resolved it and found its owner)."""
    return current().workspace_id or ""
