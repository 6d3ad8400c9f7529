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
from nodeflow_app.llm.providers import PROVIDERS
from nodeflow_app.state.access import current, requires
from nodeflow_app.state.first_load import first_load
from nodeflow_app.state.page_threads import off_loop


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
    loaded: bool = False  # until the first load, the page shows neither the providers nor the refusal
    load_error: str = ""  # the first load failed: the page says why, with a Retry

    @rx.event
    @requires("manage")
    async def load(self):
        await first_load(self, "the credentials", self._refresh)

    @rx.event
    @requires("manage")
    async def save(self, provider: str, form: dict[str, Any]):
        base_url = str(form.get("base_url") or "")
        try:
            # A URL every run would refuse is refused now, in the guard's words (not first at Test connection).
            await provider_settings.check_base_url(provider, base_url)
            await off_loop(provider_settings.save_credential, provider, str(form.get("api_key") or ""), base_url,
                           _workspace())
        except CredentialError as error:
            return rx.toast.error(f"Not saved: {error}")
        self.tests = {k: v for k, v in self.tests.items() if k != provider}
        await self._refresh()
        return [rx.toast.success(f"Saved {self._label(provider)} for this workspace (encrypted)"),
                SettingsState.list_saved_models(provider)]

    @rx.event(background=True)
    @requires("manage")
    async def list_saved_models(self, provider: str):
        """After a save: the saved server's models become the editor's suggestions, so the first model node gets
        one of its own names (not a guess). Outside the state lock: a slow server must not hold the page."""
        workspace = _workspace()
        await _remember(provider, workspace, await provider_settings.saved_server_models(provider, workspace))

    @rx.event
    @requires("manage")
    async def delete(self, provider: str):
        removed = await off_loop(provider_settings.delete_credential, provider, _workspace())
        self.tests = {k: v for k, v in self.tests.items() if k != provider}
        await self._refresh()
        if removed:
            return rx.toast.success(f"Deleted the stored {self._label(provider)} credential")
        return rx.toast.info(f"Nothing is stored for {self._label(provider)}")

    @rx.event(background=True)
    @requires("manage")
    async def check(self, provider: str, form: dict[str, Any]):
        """Test the connection with what the form holds (`form`: its key and base URL, read when clicked; never
        kept in the state), outside the state lock (a slow provider must not block the page)."""
        workspace = _workspace()
        if not (isinstance(provider, str) and provider in PROVIDERS and isinstance(form, dict)):  # a forged event
            return rx.toast.error(f"Cannot test {str(provider)[:40]!r}: test one of {', '.join(PROVIDERS)}")
        async with self:
            if self.testing:
                return
            self.testing = provider
        base_url = form.get("base_url")
        try:
            result = await provider_settings.check_connection(provider, workspace, str(form.get("api_key") or ""),
                                                              None if base_url is None else str(base_url))
            if result.ok and result.current:  # the editor suggests the listed models (a local server's own names)
                await _remember(provider, workspace, result.models)
        finally:  # whatever happened, the page's tests are not blocked for good
            async with self:
                self.testing = ""
        async with self:
            self._record_test(provider, result)

    @rx.event
    @requires("manage")
    def set_connection_kind(self, kind: str):
        self.connection_kind = kind if kind in KINDS else "http_bearer"

    @rx.event
    @requires("manage")
    async def save_connection(self, form: dict[str, Any]):
        name = str(form.get("name") or "").strip()
        try:
            await off_loop(provider_settings.save_connection, _workspace(), name, self.connection_kind,
                           str(form.get("fields") or ""), admin=bool(current().user and current().user.is_admin))
        except CredentialError as error:
            return rx.toast.error(str(error))
        await self._refresh()
        return rx.toast.success(f"Saved the connection {name!r} (encrypted)")

    @rx.event
    @requires("manage")
    async def delete_connection(self, name: str):
        await off_loop(provider_settings.delete_connection, _workspace(), name)
        self.tests = {k: v for k, v in self.tests.items() if k != f"connection:{name}"}
        await self._refresh()
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

    async def _refresh(self) -> None:
        access = current()
        self.is_admin = bool(access.user and access.user.is_admin)
        try:
            self.providers, self.connections = await off_loop(_rows, _workspace(), self.is_admin)
        except CredentialError as error:
            self.providers = []
            self.tests = {"": {"ok": "", "message": str(error), "models": []}}
        self.environment = provider_settings.environment_rows() if self.is_admin else []
        self.mcp_servers = await off_loop(provider_settings.mcp_server_names) if self.is_admin else ""
        self.form_rev += 1
        self.loaded = True

    def _label(self, provider: str) -> str:
        return next((p["label"] for p in self.providers if p["name"] == provider), provider)


def _rows(workspace: str, admin: bool) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """(the workspace's provider rows, its connection rows): database reads, in a page thread."""
    return provider_settings.provider_rows(workspace, admin=admin), provider_settings.connection_rows(workspace)


async def _remember(provider: str, workspace: str, models: tuple[str, ...]) -> None:
    """Keep the models a server listed as the workspace's suggestions (none listed: the old ones stay)."""
    try:
        await off_loop(provider_settings.remember_models, provider, workspace, models)
    except CredentialError:
        pass  # the editor keeps its usual suggestions; the page has said what it could


def _workspace() -> str:
    """The workspace the event acts in (the access check resolved it and found its owner)."""
    return current().workspace_id or ""
