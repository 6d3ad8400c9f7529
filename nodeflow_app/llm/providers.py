"""Model providers: which exist, whether each is configured, and `build_model` turning a reference into an Agno model.

A model reference is `provider:model_id` (`openai:gpt-4o-mini`, `ollama:llama3.2:3b`: the first colon
splits) or the dict a Model Selector materializes (`{ref, provider, model, base_url, temperature}`).
Importing this module imports no provider SDK and reads no key: keys are read when a model is built.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import importlib
import importlib.util
import json
import logging
import os
import re
import urllib.parse
import weakref
from dataclasses import dataclass
from typing import Any

from nodeflow_app.contract import NodeError

COMPATIBLE_BASE_URL_ENV = "NODEFLOW_OPENAI_COMPATIBLE_BASE_URL"
COMPATIBLE_API_KEY_ENV = "NODEFLOW_OPENAI_COMPATIBLE_API_KEY"
OLLAMA_HOST_ENV = "OLLAMA_HOST"  # the ollama package's own variable: where the install's Ollama runs
OLLAMA_DEFAULT_URL = "http://127.0.0.1:11434"  # where the ollama package looks when nothing says otherwise
MAX_RETRIES_ENV = "NODEFLOW_LLM_MAX_RETRIES"
# The web app's name for a workspace's credentials page (its header link): where a web user adds a key.
SETTINGS_PAGE = "the Settings page"


class ModelConfigError(NodeError):
    """A model that cannot be built: bad reference, unknown provider, missing package, key or base URL."""


@dataclass(frozen=True, slots=True)
class Provider:
    name: str
    label: str
    model_class: str            # "module:Class" of the Agno model
    package: str                # what `pip install` needs
    module: str                 # the SDK's import name (checked without importing it)
    key_env: str | None = None  # None: no key needed (local servers)
    base_url_field: str | None = "base_url"  # the Agno field taking a base URL ("host" for Ollama)
    needs_base_url: bool = False
    # The install's variable naming its URL; a provider with one counts as set up only once a URL is given.
    url_env: str | None = None
    shares_http_client: bool = True  # the Agno class takes an httpx.AsyncClient via `http_client=`


PROVIDERS: dict[str, Provider] = {p.name: p for p in (
    Provider("openai", "OpenAI", "agno.models.openai:OpenAIChat", "openai", "openai", "OPENAI_API_KEY"),
    Provider("anthropic", "Anthropic", "agno.models.anthropic:Claude", "anthropic", "anthropic",
             "ANTHROPIC_API_KEY", base_url_field=None),
    Provider("google", "Google", "agno.models.google:Gemini", "google-genai", "google.genai", "GOOGLE_API_KEY",
             base_url_field=None, shares_http_client=False),
    Provider("groq", "Groq", "agno.models.groq:Groq", "groq", "groq", "GROQ_API_KEY"),
    # Ollama needs no key, and its package falls back to localhost: it still counts as set up only once
    # someone said where it runs, so new nodes do not default to a server nobody started.
    Provider("ollama", "Ollama", "agno.models.ollama:Ollama", "ollama", "ollama", None,
             base_url_field="host", url_env=OLLAMA_HOST_ENV, shares_http_client=False),
    Provider("openrouter", "OpenRouter", "agno.models.openrouter:OpenRouter", "openai", "openai",
             "OPENROUTER_API_KEY"),
    Provider("openai-compatible", "OpenAI-compatible URL", "agno.models.openai:OpenAILike", "openai", "openai",
             COMPATIBLE_API_KEY_ENV, needs_base_url=True, url_env=COMPATIBLE_BASE_URL_ENV),
)}


@dataclass(frozen=True, slots=True)
class ModelRef:
    provider: str
    model: str
    base_url: str | None = None
    temperature: float | None = None
    # The provider whose key may go to `base_url` when it is not the install's own URL (chosen in the graph).
    credential: str | None = None

    @property
    def ref(self) -> str:
        return f"{self.provider}:{self.model}"


# 1. References ------------------------------------------------------------------------------------

def parse_ref(value: str | dict[str, Any] | ModelRef) -> ModelRef:
    """A ModelRef from `provider:model` or a Model Selector dict; a clear error for anything else."""
    if isinstance(value, ModelRef):
        return value
    if isinstance(value, dict):
        provider, model = value.get("provider"), value.get("model")
        if not provider or not model:
            if not value.get("ref"):
                raise ModelConfigError(f"a model reference needs a provider and a model, got {value!r}")
            parsed = parse_ref(str(value["ref"]))
            provider, model = parsed.provider, parsed.model
        base_url = value.get("base_url") or None
        temperature = value.get("temperature")
        credential = str(value.get("credential") or "").strip() or None
        if credential is not None and credential not in PROVIDERS:
            raise ModelConfigError(f"unknown credential {credential!r}; use one of: {', '.join(PROVIDERS)}")
        return _checked(ModelRef(str(provider).strip(), str(model).strip(), base_url,
                                 _temperature(temperature), credential))
    if not isinstance(value, str) or ":" not in value.strip():
        raise ModelConfigError(f"a model is written provider:model (for example openai:gpt-4o-mini), got {value!r}")
    provider, model = value.strip().split(":", 1)
    return _checked(ModelRef(provider.strip(), model.strip()))


def _checked(ref: ModelRef) -> ModelRef:
    if ref.provider not in PROVIDERS:
        raise ModelConfigError(f"unknown provider {ref.provider!r}; use one of: {', '.join(PROVIDERS)}")
    if not ref.model:
        raise ModelConfigError(f"choose a model for provider {ref.provider!r}")
    return ref


# 2. Configuration ---------------------------------------------------------------------------------

def api_key_for(provider: str) -> str | None:
    """The API key for `provider`'s own URL, or None: the current workspace's stored key first, then the
    install's environment variable (the fallback every workspace shares). The environment's key goes only to the
    install's URL: not to a URL a workspace stored without a key of its own (any account owns a workspace)."""
    stored = _stored(provider)
    if stored.api_key:
        return stored.api_key
    if stored.base_url and not is_install_url(provider, stored.base_url):
        return None
    env = PROVIDERS[provider].key_env
    return (os.environ.get(env) or None) if env else None


def install_url(provider: str) -> str | None:
    """The URL the install's environment sets for `provider` (None: the SDK's default):
    NODEFLOW_OPENAI_COMPATIBLE_BASE_URL, or OLLAMA_HOST as the ollama package reads it."""
    if provider == "openai-compatible":
        return os.environ.get(COMPATIBLE_BASE_URL_ENV) or None
    if provider == "ollama" and os.environ.get(OLLAMA_HOST_ENV, "").strip():
        return ollama_host_url(os.environ[OLLAMA_HOST_ENV].strip())
    return None


def ollama_host_url(host: str) -> str:
    """`host` ("host", "host:port" or a URL, as OLLAMA_HOST may be written) as the URL the ollama package makes
    of it (its `_parse_host`): the scheme defaults to http, the port to 11434 unless the scheme implies one."""
    scheme, _, rest = host.partition("://")
    port = 11434
    if not rest:
        scheme, rest = "http", host
    elif scheme in ("http", "https"):
        port = 80 if scheme == "http" else 443
    split = urllib.parse.urlsplit(f"{scheme}://{rest}")
    name = split.hostname or "127.0.0.1"
    if ":" in name:  # an IPv6 address: urlsplit drops its brackets
        name = f"[{name}]"
    path = split.path.strip("/")
    return f"{scheme}://{name}:{split.port or port}" + (f"/{path}" if path else "")


def is_install_url(provider: str, url: str) -> bool:
    """Whether `url` is the URL the install's environment sets for `provider`: its admin's choice, not guarded."""
    return same_url(url, install_url(provider) or "")


def base_url_for(provider: str, explicit: str | None = None) -> str | None:
    """An explicit URL, else the install's own: the workspace's stored URL, else the install's environment's
    (`install_url`); None: the SDK's default (for Ollama OLLAMA_DEFAULT_URL). Runs, connection tests and
    embeddings all pick a provider's URL here, in this order."""
    if explicit:
        return explicit
    url = _stored(provider).base_url
    return url if url is not None else install_url(provider)


def graph_base_url(ref: ModelRef) -> str | None:
    """`ref`'s base URL when it was written in a graph and is not the install's own URL for the provider, else None.

    Such a URL gets no key unless `ref.credential` names one, and it passes the SSRF guard (SPEC 12).
    The install's URLs (environment, credential store, the SDK's default) are the install's choice: trusted.
    """
    if not ref.base_url or PROVIDERS[ref.provider].base_url_field is None:
        return None
    own = base_url_for(ref.provider)
    return None if own and same_url(ref.base_url, own) else ref.base_url


def workspace_url(provider: str) -> str | None:
    """The base URL the current workspace stored for `provider`, when it is not the install's own, else None.

    A workspace's owner (any account) chose it, so like a graph's URL it passes the SSRF guard; the
    install's environment URL (an admin's choice, often a local server) does not need to.
    """
    url = _stored(provider).base_url
    return url if url and not is_install_url(provider, url) else None


def same_url(a: str, b: str) -> bool:
    return a.strip().rstrip("/").lower() == b.strip().rstrip("/").lower()


def _temperature(value: Any) -> float | None:
    """A model reference's temperature (a reference an expression builds may hold text)."""
    if value in (None, ""):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ModelConfigError(f"a model's temperature is a number from 0 to 2, got {str(value)[:40]!r}") from None


async def check_model_url(ref: ModelRef) -> None:
    """Refuse a base URL written in a graph or stored by a workspace that points at an internal address (unless
    allowlisted)."""
    from nodeflow_app.net.guard import BlockedUrl, check_url

    url = _guarded_url(ref)
    if url is None:
        return
    try:
        await check_url(url)
    except BlockedUrl as error:
        raise ModelConfigError(f"model {ref.ref}: {error}") from None
    except ValueError as error:  # e.g. "http://[::1"
        raise ModelConfigError(f"model {ref.ref}: base URL {url!r} is not a URL ({error})") from None


async def check_workspace_url(provider: str, url: str) -> None:
    """Refuse a base URL a workspace is about to store that every run would refuse (internal, not allowlisted):
    the guard's own words, at once. The install's own URL for the provider is its admin's choice: not checked."""
    from nodeflow_app.net.guard import BlockedUrl, check_url

    if is_install_url(provider, url):
        return
    try:
        await check_url(url)
    except BlockedUrl as error:
        raise ModelConfigError(str(error)) from None
    except ValueError as error:  # e.g. "http://[::1"
        raise ModelConfigError(f"base URL {url!r} is not a URL ({error})") from None


def _guarded_url(ref: ModelRef) -> str | None:
    """The URL a model of `ref` would reach that must pass the SSRF guard, or None (the install's own)."""
    if PROVIDERS[ref.provider].base_url_field is None:
        return None
    foreign, stored = graph_base_url(ref), workspace_url(ref.provider)
    if foreign or not stored:
        return foreign
    return stored if same_url(ref.base_url or stored, stored) else None


def _stored(provider: str) -> Any:
    from nodeflow_app.llm.credentials import Credential, stored  # lazily: never at import

    return stored(provider) or Credential(None, None)


def missing_steps(provider: str, *, to_run: bool = False, here: bool = False) -> list[str]:
    """What to do before `provider` counts as set up, in order; empty when it is configured. `to_run`: only what
    stops it from running (an Ollama nobody pointed to still runs, against its package's localhost default).
    `here`: said on the Settings page itself (its fields are "below")."""
    spec = PROVIDERS[provider]
    steps = []
    if package_missing(provider):
        steps.append(f"pip install {spec.package}")
    unset_url = spec.url_env and base_url_for(provider) is None and not os.environ.get(spec.url_env)
    if unset_url and (spec.needs_base_url or not to_run):
        steps.append(url_step(provider, here=here))
    elif spec.key_env and provider != "openai-compatible" and api_key_for(provider) is None:
        steps.append(key_step(provider, here=here))
    return steps


def package_missing(provider: str) -> bool:
    """Whether the install lacks `provider`'s SDK (checked without importing it)."""
    module = PROVIDERS[provider].module
    return importlib.util.find_spec(module.split(".")[0]) is None or _missing_submodule(module)


def _where(provider: str, here: bool) -> str:
    return "below" if here else f"under {PROVIDERS[provider].label} on {SETTINGS_PAGE}"


def key_step(provider: str, *, here: bool = False) -> str:
    """How to give `provider` a key: the workspace's Settings page, or the install's variable for everyone."""
    spec = PROVIDERS[provider]
    return f"enter an API key {_where(provider, here)} (or set {spec.key_env} for the whole install)"


def url_step(provider: str, *, here: bool = False) -> str:
    """How to tell NodeFlow where `provider` runs (one with a `url_env`)."""
    spec = PROVIDERS[provider]
    selector = ", or give a base URL in a Model Selector" if spec.needs_base_url else ""
    return f"enter a base URL {_where(provider, here)} (or set {spec.url_env} for the whole install{selector})"


def _missing_submodule(module: str) -> bool:
    if "." not in module:
        return False
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:
        return True


def provider_status() -> list[dict[str, Any]]:
    """Every provider with `configured` and, when not, the exact steps to configure it."""
    rows = []
    for spec in PROVIDERS.values():
        steps = missing_steps(spec.name)
        rows.append({"name": spec.name, "label": spec.label, "configured": not steps,
                     "steps": steps, "how": "; ".join(steps)})
    return rows


# 3. Building models ---------------------------------------------------------------------------------

def build_model(ref_or_dict: str | dict[str, Any] | ModelRef, *, temperature: float | None = None,
                base_url: str | None = None, api_key: str | None = None, max_retries: int | None = None,
                **options: Any) -> Any:
    """An Agno model for the reference. Explicit arguments win over the reference's own values.

    `options` (max_tokens, reasoning_effort, ...) that are set must be fields of the Agno class, else a
    ModelConfigError names them (a setting is never dropped silently).
    `max_retries` defaults to NODEFLOW_LLM_MAX_RETRIES when set, else the SDK's default.
    """
    ref = parse_ref(ref_or_dict)
    if base_url:
        ref = dataclasses.replace(ref, base_url=base_url)
    spec = PROVIDERS[ref.provider]
    model_class = _model_class(spec, ref)
    fields = {f.name for f in dataclasses.fields(model_class)}
    foreign = graph_base_url(ref)
    url = foreign or base_url_for(ref.provider)
    if spec.needs_base_url and url is None:
        raise ModelConfigError(f"model {ref.ref!r} needs a base URL (for example http://localhost:8000/v1): "
                               f"{url_step(ref.provider)}")
    kwargs: dict[str, Any] = {"id": ref.model}
    key = api_key or _key_for(ref, foreign)
    if spec.key_env and key is None and foreign is None and ref.provider != "openai-compatible":
        if _stored(ref.provider).base_url:
            raise ModelConfigError(f"{spec.label} is not configured: the workspace's URL for it has no key stored "
                                   f"with it; enter one under {spec.label} on {SETTINGS_PAGE} ({spec.key_env} "
                                   "goes only to the install's own URL)")
        raise ModelConfigError(f"{spec.label} is not configured: {key_step(ref.provider)}")
    if key is not None:
        kwargs["api_key"] = key
    elif "api_key" in fields:
        # Not None: the SDKs would read their provider's key from the environment and send it to this URL.
        # Local servers accept anything, and the SDKs refuse an empty key. A provider that needs no key
        # (Ollama) gets an empty one: Agno's Ollama takes any key as "use Ollama's cloud" and sends it there.
        kwargs["api_key"] = "not-provided" if spec.key_env else ""
    if url is not None and spec.base_url_field:
        kwargs[spec.base_url_field] = url
    temperature = temperature if temperature is not None else ref.temperature
    if temperature is not None:
        if "temperature" in fields:
            kwargs["temperature"] = temperature
        elif "options" in fields:  # Ollama takes sampling settings as options
            kwargs["options"] = {"temperature": temperature}
    retries = max_retries if max_retries is not None else _env_int(MAX_RETRIES_ENV)
    if retries is not None:
        if "max_retries" in fields:
            kwargs["max_retries"] = retries
        elif "client_params" in fields and spec.shares_http_client:  # Anthropic's client takes it; the
            kwargs["client_params"] = {"max_retries": retries}      # ollama and google-genai ones would fail
    if key is None and spec.key_env is None and "client_params" in fields:
        # The ollama package adds OLLAMA_API_KEY from the environment to every request, whatever the host.
        kwargs["client_params"] = {**kwargs.get("client_params", {}), "auth": _without_credentials()}
    guarded = _guarded_url(ref) is not None
    if not spec.shares_http_client and guarded and "client_params" in fields:
        # Its own httpx client (the SDK passes client_params on): no redirect it would follow unchecked, and
        # every connection through the guard's transport, so a name that resolves elsewhere by the time it
        # connects (DNS rebinding) is refused. Runs are async; a sync client of this model cannot send at all.
        from nodeflow_app.net.guard import guarded_transport

        kwargs["client_params"] = {**kwargs.get("client_params", {}), "follow_redirects": False,
                                   "transport": guarded_transport(on_refused=_record_refusal)}
    if spec.shares_http_client and "http_client" in fields:
        client = shared_http_client(ref.provider, url, guarded=guarded,
                                    keyless=foreign is not None and key is None)
        if client is not None:
            kwargs["http_client"] = client
    if "max_tokens" in options and "max_tokens" not in fields and "max_output_tokens" in fields:
        options["max_output_tokens"] = options.pop("max_tokens")  # Gemini's name for it
    unsupported = sorted(k for k, v in options.items() if v is not None and k not in fields)
    if unsupported:  # never drop a setting the user made: the run would quietly differ from the graph
        raise ModelConfigError(f"{spec.label} models do not take {', '.join(unsupported)}; clear "
                               f"{'it' if len(unsupported) == 1 else 'them'} on the node")
    kwargs.update({k: v for k, v in options.items() if v is not None})
    hide_keys_in_agno_logs()
    return model_class(**kwargs)


def _key_for(ref: ModelRef, foreign_url: str | None) -> str | None:
    """The provider's own key for its own URL; for a URL written in a graph none, unless the credential chosen
    for it was stored with that very URL: a stored or environment key never goes anywhere new (SPEC 12)."""
    if foreign_url is None:
        return api_key_for(ref.provider)
    if not ref.credential:
        return None
    stored = _stored(ref.credential)
    if stored.api_key and stored.base_url and same_url(stored.base_url, foreign_url):
        return stored.api_key
    raise ModelConfigError(
        f"the {ref.credential} key goes only to the URL stored with it, not to {foreign_url}: store that URL with "
        f"its key for {ref.credential} on the Settings page, or clear 'Key for this URL'")


def _model_class(spec: Provider, ref: ModelRef) -> type:
    module_name, class_name = spec.model_class.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ModelConfigError(f"{spec.label} models need a package: pip install {spec.package} ({error})") from None
    return getattr(module, class_name)


def _env_int(name: str) -> int | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise ModelConfigError(f"{name} must be a whole number, got {raw!r}") from None


# 4. Shared HTTP clients -------------------------------------------------------------------------------

# A new client costs ~190 ms: share one per (provider, base_url). httpx pools are bound to the event
# loop that opened their connections, so the share is per loop (the app has one; each test has its own).
_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str | None, bool, bool], Any]]" = (
    weakref.WeakKeyDictionary())


def shared_http_client(provider: str, base_url: str | None, *, guarded: bool = False,
                       keyless: bool = False) -> Any:
    """The httpx.AsyncClient for (provider, base_url) on the running loop; None outside a loop.

    `guarded` (a base URL written in a graph or stored by a workspace): every connection, redirects included,
    passes the SSRF guard.
    `keyless`: requests leave without any authentication header (the SDKs insist on sending a placeholder).
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    by_key = _clients.setdefault(loop, {})
    client = by_key.get((provider, base_url, guarded, keyless))
    if client is None or client.is_closed:
        import httpx  # the SDKs' own defaults: long reads for slow generations, quick connects

        options: dict[str, Any] = dict(
            timeout=httpx.Timeout(600.0, connect=5.0), follow_redirects=True,
            limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100),
            event_hooks={"response": [_record_http_error], "request": [_drop_credentials] if keyless else []})
        if guarded:
            from nodeflow_app.net.guard import guarded_client

            client = guarded_client(on_refused=_record_refusal, **options)
        else:
            client = httpx.AsyncClient(**options)
        by_key[(provider, base_url, guarded, keyless)] = client
    return client


_AUTH_HEADERS = ("authorization", "x-api-key", "api-key", "x-goog-api-key")


def _remove_credentials(request: Any) -> None:
    for name in _AUTH_HEADERS:
        request.headers.pop(name, None)


async def _drop_credentials(request: Any) -> None:
    _remove_credentials(request)


def _without_credentials() -> Any:
    """An httpx auth (sync and async alike) that removes every authentication header before a request leaves."""
    import httpx

    class WithoutCredentials(httpx.Auth):
        def auth_flow(self, request: httpx.Request):
            _remove_credentials(request)
            yield request

    return WithoutCredentials()


async def close_http_clients() -> None:
    """Close the running loop's shared clients (app shutdown, test teardown)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    for client in _clients.pop(loop, {}).values():
        await client.aclose()


# 5. HTTP statuses of failed calls ------------------------------------------------------------------------

# Agno turns a provider's HTTP error into a RunError event carrying only the message; the status is
# recorded here, by the shared clients, into a list owned by the task that runs the model.
_http_errors: contextvars.ContextVar[list["HttpFailure"] | None] = contextvars.ContextVar(
    "nodeflow_llm_http_errors", default=None)


@dataclass(frozen=True, slots=True)
class HttpFailure:
    status: int
    model: str | None
    refused: str | None = None  # the SSRF guard's reason, when the connection was refused before any request


def track_http_errors() -> list[HttpFailure]:
    """Start recording failed provider responses for the current task (and tasks it starts); returns the list."""
    failures: list[HttpFailure] = []
    _http_errors.set(failures)
    return failures


async def _record_http_error(response: Any) -> None:
    failures = _http_errors.get()
    if failures is None or response.status_code < 400:
        return
    model = None
    try:
        model = json.loads(response.request.content or b"{}").get("model")
    except (ValueError, AttributeError, RuntimeError):
        pass
    failures.append(HttpFailure(response.status_code, model))


def _record_refusal(message: str) -> None:
    failures = _http_errors.get()
    if failures is not None:
        failures.append(HttpFailure(0, None, message))


_STATUS_IN_MESSAGE = re.compile(r"\b(?:Error code|status(?: code)?)[:= ]+(\d{3})\b", re.IGNORECASE)


def describe_failure(ref: ModelRef, message: str, failures: list[HttpFailure]) -> str:
    """`provider:model failed (HTTP 500): message`, naming the model that failed (a team member's, maybe)."""
    failure = failures[-1] if failures else None
    if failure is not None and failure.refused:  # the SDK says only "Connection error."
        return f"model {ref.ref}: {failure.refused}"
    status = failure.status if failure else None
    if status is None and (found := _STATUS_IN_MESSAGE.search(message or "")):
        status = int(found.group(1))
    model = failure.model if failure and failure.model else ref.model
    where = f"{ref.provider}:{model}"
    detail = f" (HTTP {status})" if status else ""
    return f"model {where} failed{detail}: {scrub(message, ref) or 'no message from the provider'}"


# A provider (or whatever answers at its URL) may echo the request's headers back in its error.
_HEADER_ECHO = re.compile(r"""(?i)\b(authorization|x-api-key|api[-_]key|x-goog-api-key)(['"]?\s*[:=]\s*['"]?)"""
                          r"""(bearer\s+)?[^\s'",}]+""")
_BEARER = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}")


def scrub(message: str, ref: ModelRef | None = None) -> str:
    """`message` without keys: the keys this model could have sent, and anything shaped like an auth header."""
    text = _HEADER_ECHO.sub(lambda m: f"{m.group(1)}{m.group(2)}[hidden]", message or "")
    text = _BEARER.sub("Bearer [hidden]", text)
    if ref is not None:
        for provider in {ref.provider, ref.credential} - {None}:
            try:
                key = api_key_for(provider)
            except NodeError:
                continue
            if key and len(key) >= 4:
                text = text.replace(key, "[hidden]")
    return text


# 6. Keys in Agno's logs ----------------------------------------------------------------------------
#
# Agno logs a provider's error body as it came, and OpenAI's 401 quotes the key it was sent: the server's log
# must not hold keys any more than a run's record does.

AGNO_LOGGERS = ("agno", "agno-team", "agno-workflow")


class _HideKeys(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:  # errors quote bodies; the rest stays as cheap as it was
            try:
                record.msg, record.args = hide_keys(record.getMessage()), None
                if record.exc_info and not record.exc_text:
                    record.exc_text = hide_keys(logging.Formatter().formatException(record.exc_info))
            except Exception:  # noqa: BLE001 - a record that cannot be formatted: logging reports it, as before
                pass
        return True


_HIDE_KEYS = _HideKeys()


def hide_keys_in_agno_logs() -> None:
    """Filter Agno's loggers through `hide_keys` (once; after Agno made them: it sets their class)."""
    import agno.utils.log  # noqa: F401 - Agno's loggers exist once it is imported

    for name in AGNO_LOGGERS:
        logger = logging.getLogger(name)
        if _HIDE_KEYS not in logger.filters:
            logger.addFilter(_HIDE_KEYS)


def hide_keys(text: str) -> str:
    """`text` without any key the install knows: its providers' environment keys, the current workspace's stored
    ones, and anything shaped like an auth header."""
    text = scrub(text)
    for provider, spec in PROVIDERS.items():
        keys = {os.environ.get(spec.key_env or "") or None}
        try:
            keys.add(api_key_for(provider))
        except Exception:  # noqa: BLE001 - a log line must never fail on a store it cannot read
            pass
        for key in keys - {None}:
            if len(key) >= 4:
                text = text.replace(key, "[hidden]")
    return text
