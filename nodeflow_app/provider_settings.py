"""What a workspace's credentials page shows and does (issues 11, 14): providers' status, the workspace's stored
keys, connection tests, its named connections; the install's environment keys for the admin (no reflex).

A stored key never leaves here whole: rows carry whether a key is set, where it comes from and at most its
last 4 characters. Saving an empty key keeps the stored one (the page never has it to send back), but only
with the URL it was saved with: a co-owner cannot see the key, and must not send it to a URL of their choosing
(SPEC "Safe by default"); a changed URL needs the key typed again.
The connection test lists the provider's models where its API offers that, with the key and base URL typed in
the form (else the stored ones, else the install's; the stored key only to its own URL); a URL the workspace
chose passes the SSRF guard, as when saved.
"""

from __future__ import annotations

import contextvars
import os
from dataclasses import dataclass
from typing import Any

from nodeflow_app.contract import NodeError
from nodeflow_app.connections import HOSTS
from nodeflow_app.llm.credentials import Credential, CredentialError, use_workspace
from nodeflow_app.llm.credentials import stored as stored_credential
from nodeflow_app.store.credentials import default_store
from nodeflow_app.llm.providers import (
    OLLAMA_DEFAULT_URL, PROVIDERS, ModelConfigError, ModelRef, check_workspace_url, install_url, is_install_url,
    missing_steps, package_missing, provider_status, same_url, scrub,
)
from nodeflow_app.net.guard import guarded_client

# Suggestions for the model picker (any provider:model can be typed).
SUGGESTED_MODELS: dict[str, tuple[str, ...]] = {
    "openai": ("gpt-4o-mini", "gpt-4o", "gpt-4.1", "gpt-4.1-mini", "o4-mini"),
    "anthropic": ("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"),
    "google": ("gemini-2.5-flash", "gemini-2.5-pro"),
    "groq": ("llama-3.3-70b-versatile", "llama-3.1-8b-instant"),
    "ollama": ("llama3.2:3b", "qwen2.5:7b"),
    "openrouter": ("openai/gpt-4o-mini", "anthropic/claude-sonnet-4.5"),
    "openai-compatible": ("local-model",),
}
# Providers whose models are whatever their server has: the models a connection test listed replace the guesses.
LISTED_PROVIDERS = ("openai-compatible", "ollama")
# Where each provider lists its models when no base URL is configured.
PUBLIC_API: dict[str, str] = {
    "openai": "https://api.openai.com/v1", "groq": "https://api.groq.com/openai/v1",
    "openrouter": "https://openrouter.ai/api/v1", "anthropic": "https://api.anthropic.com/v1",
    "google": "https://generativelanguage.googleapis.com/v1beta", "ollama": OLLAMA_DEFAULT_URL,
}
TEST_TIMEOUT_S = 10.0
MAX_MODELS = 200
# Said when an empty key field would send the stored key to another URL than the one it was saved with.
KEY_AGAIN = ("type the API key again: it is only sent to the URL it was saved with (to use the new URL without "
             "a key, delete the stored credential first)")


def key_hint(key: str | None) -> str:
    """"••••abcd": whether a key is set and at most its last 4 characters (none of a short key)."""
    if not key:
        return ""
    return "••••" + (key[-4:] if len(key) >= 12 else "")


def provider_rows(workspace_id: str, *, admin: bool) -> list[dict[str, Any]]:
    """One row per provider for the workspace's credentials page: configured or not, how to configure it, where
    its key and URL come from; never a key. The install's environment keys (the fallback of every workspace)
    show a hint only to the instance admin; others learn only that the install's key is used."""
    return contextvars.copy_context().run(_provider_rows, workspace_id, admin)


def _provider_rows(workspace_id: str, admin: bool) -> list[dict[str, Any]]:
    use_workspace(workspace_id)  # in a copied context: the caller's workspace stays as it was
    stored = _stored_rows(workspace_id)
    rows = []
    for name, spec in PROVIDERS.items():
        how = _how(name, admin)
        row = stored.get(name, {})
        own = (_quiet(lambda: stored_credential(name)) or Credential(None, None)) if row else Credential(None, None)
        env_key = (os.environ.get(spec.key_env) or None) if spec.key_env else None
        key = own.api_key or env_key
        source = "stored" if own.api_key else (f"from {spec.key_env}" if admin else "the install's key") if key else ""
        env_url = (os.environ.get(spec.url_env) or None) if spec.url_env else None
        url = own.base_url or env_url
        url_source = "stored" if own.base_url else (f"from {spec.url_env}" if admin else "the install's")
        rows.append({
            "name": name, "label": spec.label, "configured": not how, "how": how,
            "needs_key": spec.key_env is not None, "takes_base_url": spec.base_url_field is not None,
            "key_set": bool(key), "key_hint": key_hint(key) if own.api_key or admin else "", "key_source": source,
            "key_env": spec.key_env or "", "base_url": (url or "") if own.base_url or admin else "",
            "base_url_source": url_source if url else "", "stored_base_url": own.base_url or "",
            # What an empty URL field means (saving it clears the stored URL; a test goes there).
            "empty_url": (f"{env_url} from {spec.url_env}" if admin else "the install's") if env_url
            else "not set" if spec.needs_base_url else "the provider's own",
            # A row holding only a connection test's models has nothing to delete on the page.
            "stored": bool(row.get("api_key") or row.get("base_url")),
        })
    return rows


def _how(provider: str, admin: bool) -> str:
    """What to do before `provider` counts as set up, said on the Settings page itself ("" when it is). A missing
    package is the install's to add: the instance admin gets the pip line, everyone else whom to ask."""
    spec = PROVIDERS[provider]
    steps = [step for step in missing_steps(provider, here=True) if step != f"pip install {spec.package}"]
    if package_missing(provider):
        steps.insert(0, f"this install lacks the {spec.package} package: "
                        + (f"pip install {spec.package} on the server, then restart NodeFlow" if admin
                           else "the instance admin must add it"))
    return "; ".join(steps)


def environment_rows() -> list[dict[str, str]]:
    """The install's environment keys (instance admin only): variable, set or not, at most 4 characters."""
    rows = []
    for spec in PROVIDERS.values():
        for variable in (spec.key_env, spec.url_env):
            if variable:
                value = os.environ.get(variable) or ""
                shown = value if variable == spec.url_env else key_hint(value)
                rows.append({"provider": spec.label, "variable": variable, "value": shown or "not set"})
    return rows


def mcp_server_names() -> str:
    """The stdio MCP servers the install declares (instance admin only), or why none can be read."""
    from nodeflow_app.llm.mcp_servers import McpConfigError, declared_servers, how_to_declare

    try:
        names = sorted(declared_servers())
    except McpConfigError as error:
        return str(error)
    return ", ".join(names) if names else f"none. {how_to_declare()}"


def _stored_rows(workspace_id: str) -> dict[str, dict[str, Any]]:
    store = default_store()
    if store is None:
        return {}
    return {row["provider"]: row for row in store.list(workspace_id)}


def _quiet(read: Any) -> Any:
    try:
        return read()
    except CredentialError:
        return None


async def check_base_url(provider: str, base_url: str) -> None:
    """Refuse, before it is stored, a base URL the SSRF guard would refuse at every run and connection test."""
    if base_url.strip():
        try:
            await check_workspace_url(provider, base_url.strip())
        except ModelConfigError as error:
            raise CredentialError(str(error)) from None


def save_credential(provider: str, api_key: str, base_url: str, workspace_id: str) -> None:
    """Store `provider`'s key and base URL for the workspace (encrypted); an empty key keeps the stored key, an
    empty URL clears it. The models its connection test listed stay while the URL does (check_base_url first)."""
    if provider not in PROVIDERS:
        raise CredentialError(f"unknown provider {provider!r}; use one of: {', '.join(PROVIDERS)}")
    store = default_store(create=True)
    api_key, base_url = api_key.strip(), base_url.strip()
    current = store.get(provider, workspace_id)
    if not api_key and current is not None and current.api_key:
        if not same_url(destination(provider, base_url), destination(provider, current.base_url)):
            raise CredentialError(KEY_AGAIN)
        api_key = current.api_key
    url_kept = current is not None and (current.base_url or "") == base_url
    store.set(provider, api_key or None, base_url or None, workspace_id,
              store.models(provider, workspace_id) if url_kept else ())


def destination(provider: str, base_url: str | None) -> str:
    """Where `provider`'s requests go with `base_url` in its form: that URL, else the install's, else the
    provider's public API ("" when none); a provider without a base URL field always goes to its own."""
    url = (base_url or "").strip() if PROVIDERS[provider].base_url_field else ""
    return url or install_url(provider) or PUBLIC_API.get(provider) or ""


def delete_credential(provider: str, workspace_id: str) -> bool:
    store = default_store()
    return store.delete(provider, workspace_id) if store is not None else False


def configured_providers(workspace_id: str) -> list[str]:
    """The providers set up for the workspace: its stored credentials, else the install's environment."""
    return contextvars.copy_context().run(_configured_providers, workspace_id)


def _configured_providers(workspace_id: str) -> list[str]:
    use_workspace(workspace_id)  # in a copied context: the caller's workspace stays as it was
    return [row["name"] for row in provider_status() if row["configured"]]


def remember_models(provider: str, workspace_id: str, models: tuple[str, ...]) -> None:
    """Keep the models `provider`'s connection test listed with the workspace's credential, to suggest them."""
    if provider not in LISTED_PROVIDERS or not models:
        return
    store = default_store(create=True)
    current = store.get(provider, workspace_id) or Credential(None, None)
    store.set(provider, current.api_key, current.base_url, workspace_id, models)


async def saved_server_models(provider: str, workspace_id: str) -> tuple[str, ...]:
    """The models the server `provider`'s saved settings point at lists (read as a connection test reads them,
    through the SSRF guard for a URL the workspace chose), for `remember_models` after a save: the first model
    node then gets one of the server's own names. () for a provider with a catalogue of its own, or a server
    that does not answer (the suggestions stay as they were)."""
    if provider not in LISTED_PROVIDERS:
        return ()
    result = await check_connection(provider, workspace_id)
    return result.models if result.ok and result.current else ()


def suggested_models(workspace_id: str) -> dict[str, tuple[str, ...]]:
    """Model suggestions per provider: the models the workspace's connection tests listed, else the usual ones."""
    store = default_store()
    listed = {p: _quiet(lambda: store.models(p, workspace_id)) for p in LISTED_PROVIDERS} if store else {}
    return {**SUGGESTED_MODELS, **{p: models for p, models in listed.items() if models}}


def model_choices(configured: list[str],
                  suggested: dict[str, tuple[str, ...]] = SUGGESTED_MODELS) -> list[dict[str, str]]:
    """`provider:model` suggestions, configured providers first; the others are marked "not configured", and
    last those whose package the install lacks, marked "not installed" (only the instance admin can add it)."""
    missing = [p for p in PROVIDERS if p not in configured and package_missing(p)]
    order = ([p for p in PROVIDERS if p in configured] + [p for p in PROVIDERS if p not in configured + missing]
             + missing)

    def label(p: str) -> str:
        state = "" if p in configured else " (not installed)" if p in missing else " (not configured)"
        return PROVIDERS[p].label + state

    return [{"value": f"{p}:{m}", "label": label(p)} for p in order for m in suggested.get(p, ())]


def default_model(configured: list[str], usual: str,
                  suggested: dict[str, tuple[str, ...]] = SUGGESTED_MODELS) -> str | None:
    """The model a new node gets instead of `usual` when `usual`'s provider is not configured and another is."""
    provider = usual.partition(":")[0]
    if provider in configured or not configured:
        return None
    chosen = configured[0]
    return f"{chosen}:{(suggested.get(chosen) or ('model',))[0]}"


# The connection test ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class ConnectionResult:
    ok: bool
    message: str
    models: tuple[str, ...] = ()
    # The test reached the URL the workspace's runs use now, so its models are theirs to suggest (a URL only
    # typed, not saved, may never be).
    current: bool = False


async def check_connection(provider: str, workspace_id: str, api_key: str = "",
                           base_url: str | None = None) -> ConnectionResult:
    """Ask the provider for its models with the key and base URL typed in its form, as saving the form would
    keep them: an empty key field means the workspace's stored key, which goes only to the URL it was saved with;
    an empty URL field the install's URL (saving clears the stored one); `base_url` None the stored URL. A
    sentence either way, never a key.

    The install's own URLs (environment, the provider's public API) are trusted; a URL the workspace chose
    (typed or stored: any account owns a workspace) passes the SSRF guard, as it does when saved and at runs."""
    import httpx

    if provider not in PROVIDERS:
        return ConnectionResult(False, f"unknown provider {provider!r}; use one of: {', '.join(PROVIDERS)}")
    use_workspace(workspace_id)
    spec = PROVIDERS[provider]
    try:
        own = stored_credential(provider) or Credential(None, None)
    except CredentialError as error:
        return ConnectionResult(False, str(error))
    install = install_url(provider) or PUBLIC_API.get(provider)
    chosen = (own.base_url if base_url is None else base_url.strip() or None) if spec.base_url_field else None
    if chosen and is_install_url(provider, chosen):
        chosen = None
    url = chosen or install
    if url is None:
        return ConnectionResult(False, f"{spec.label} needs a base URL first")
    # The runs' URL: the stored key was saved with it, and goes nowhere else.
    current = same_url(url, destination(provider, own.base_url))
    if own.api_key and not api_key.strip() and not current:
        return ConnectionResult(False, KEY_AGAIN)
    # The environment's key goes only to the install's URL (as at runs: providers.api_key_for).
    env_key = (os.environ.get(spec.key_env) or None) if spec.key_env else None
    key = api_key.strip() or own.api_key or (None if chosen else env_key)
    if spec.key_env and not key and provider != "openai-compatible":
        return ConnectionResult(False, f"{spec.label} needs an API key first")
    request = _models_request(provider, url.rstrip("/"), key)
    refused: list[str] = []
    client = (guarded_client(on_refused=refused.append, timeout=TEST_TIMEOUT_S) if chosen
              else httpx.AsyncClient(timeout=TEST_TIMEOUT_S, trust_env=False))
    try:
        async with client:
            response = await client.get(request["url"], headers=request["headers"], params=request["params"])
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        reason = refused[0] if refused else error or type(error).__name__
        return ConnectionResult(False, f"cannot reach {request['url']}: {reason}")
    ref = ModelRef(provider, "models")
    if response.status_code >= 400:
        text = scrub(response.text[:300], ref)
        if key and len(key) >= 4:  # a typed key is not one scrub knows
            text = text.replace(key, "[hidden]")
        return ConnectionResult(False, f"{spec.label} answered HTTP {response.status_code}: {text}")
    try:
        models = _model_ids(provider, response.json())
    except ValueError:
        return ConnectionResult(True, f"connected to {request['url']} (the answer lists no models)",
                                current=current)
    return ConnectionResult(True, f"connected: {len(models)} model(s)", tuple(models[:MAX_MODELS]), current)


def _models_request(provider: str, url: str, key: str | None) -> dict[str, Any]:
    if provider == "ollama":
        return {"url": f"{url}/api/tags", "headers": {}, "params": {}}
    if provider == "anthropic":
        return {"url": f"{url}/models", "headers": {"x-api-key": key or "", "anthropic-version": "2023-06-01"},
                "params": {}}
    if provider == "google":
        return {"url": f"{url}/models", "headers": {"x-goog-api-key": key or ""}, "params": {}}
    return {"url": f"{url}/models", "headers": {"Authorization": f"Bearer {key}"} if key else {}, "params": {}}


def _model_ids(provider: str, body: Any) -> list[str]:
    if not isinstance(body, dict):
        raise ValueError("not an object")
    if provider == "ollama":
        return sorted(str(m.get("name")) for m in body.get("models") or [] if isinstance(m, dict))
    if provider == "google":
        return sorted(str(m.get("name", "")).removeprefix("models/") for m in body.get("models") or []
                      if isinstance(m, dict))
    return sorted(str(m.get("id")) for m in body.get("data") or [] if isinstance(m, dict) and m.get("id"))


# The workspace's named connections (HTTP and database credentials) ----------------------------------------

def connection_rows(workspace_id: str) -> list[dict[str, str]]:
    """`{name, kind, fields}` per connection of the workspace: the field names and hosts, never a secret value."""
    from nodeflow_app.store.connections import StaleConnection, default_store as connection_store

    store = connection_store()
    rows = []
    for row in (store.list(workspace_id) if store is not None else []):
        connection, fields = None, "cannot be decrypted"
        try:
            connection = store.get(row["name"], workspace_id)
        except StaleConnection as error:
            fields = str(error)
        except CredentialError:
            pass
        if connection:
            fields = ", ".join(sorted(connection.fields))
        if connection and connection.fields.get(HOSTS):  # not a secret: where the connection may be sent
            fields += f" (sent only to {connection.fields[HOSTS]})"
        rows.append({"name": row["name"], "kind": row["kind"], "fields": fields})
    return rows


def parse_fields(text: str) -> dict[str, str]:
    """`field=value` lines (blank lines ignored) as a dict; a CredentialError names a line without `=`."""
    fields = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, equals, value = line.partition("=")
        if not equals or not name.strip():
            raise CredentialError(f"write each field as name=value, got {line.strip()[:40]!r}")
        fields[name.strip()] = value.strip()
    return fields


def save_connection(workspace_id: str, name: str, kind: str, fields_text: str, *, admin: bool) -> None:
    """Store (or replace) the connection `name` of the workspace (encrypted). A SQLite connection names a file of
    the install's data folder, which every workspace shares: only the instance admin (`admin`) stores one."""
    from nodeflow_app.store.connections import default_store as connection_store

    if kind == "sqlite" and not admin:
        raise CredentialError("only the instance admin may store a SQLite connection: its file lies in the "
                              "install's data folder, which every workspace shares (ask them to add it here)")
    connection_store(create=True).set(name, kind, parse_fields(fields_text), workspace_id)


def delete_connection(workspace_id: str, name: str) -> bool:
    from nodeflow_app.store.connections import default_store as connection_store

    store = connection_store()
    return store.delete(name, workspace_id) if store is not None else False


async def check_named_connection(workspace_id: str, name: str) -> ConnectionResult:
    """A database connection runs `SELECT 1`; an HTTP one has no URL of its own, so only its fields are checked."""
    from nodeflow_app.connections import DATABASE_KINDS
    from nodeflow_app.sql.run import run_checked
    from nodeflow_app.store.connections import default_store as connection_store

    store = connection_store()
    try:
        connection = store.get(name, workspace_id) if store is not None else None
    except CredentialError as error:
        return ConnectionResult(False, str(error))
    if connection is None:
        return ConnectionResult(False, f"no connection named {name!r}")
    if connection.kind not in DATABASE_KINDS:
        if not connection.fields.get(HOSTS):
            return ConnectionResult(False, f"the {connection.kind} connection names no hosts, so an HTTP Request "
                                           "node will not send it; add hosts=api.example.com (or * for any host)")
        return ConnectionResult(True, f"the {connection.kind} connection is complete and goes only to "
                                      f"{connection.fields[HOSTS]}, over https unless an entry says http:// (an "
                                      "HTTP connection has no URL of its own: a run of an HTTP Request node "
                                      "tests it)")
    try:
        await run_checked(connection, "SELECT 1", {}, writable=False, limit=1, timeout=int(TEST_TIMEOUT_S),
                          workspace=workspace_id)
    except NodeError as error:
        return ConnectionResult(False, str(error))
    return ConnectionResult(True, f"connected to the {connection.kind} database")
