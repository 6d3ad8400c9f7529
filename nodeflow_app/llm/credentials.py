"""Provider credentials encrypted at rest: the Fernet key, and the lookup providers.py makes.

Stored credentials belong to a workspace (SPEC 10): the lookup reads the keys of the workspace the current
context acts in: inside a run's node, its run's (`services["workspace_id"]`, whoever started the run: editor,
chat, API, webhook, schedule, MCP, a resumed run); elsewhere the one `use_workspace` set (the access check per
event, the CLI, the Settings page). The environment variables stay an install-wide fallback (providers.py).

The key is NODEFLOW_SECRET_KEY (a Fernet key) or `<data dir>/secret.key`, generated with mode 0600 the first
time a credential is stored. The database holds only ciphertext plus which fields are set. The database side
(`CredentialStore`) is the services layer's, nodeflow_app/store/credentials.py: this helper layer, used by
node folders, never imports the store; the store registers its lookup here (`use_lookup`) when it loads.
"""

from __future__ import annotations

import contextvars
import os
from pathlib import Path
from typing import Any, Callable, NamedTuple

from nodeflow_app.settings import data_dir, private_dir
from nodeflow_app.contract import NodeError, running_node

SECRET_KEY_ENV = "NODEFLOW_SECRET_KEY"
KEY_FILE = "secret.key"
_GENERATE = "python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'"


class CredentialError(NodeError):
    """The credential store cannot be used (bad or missing key, unreadable key file); the message says how to fix it."""


class Credential(NamedTuple):
    api_key: str | None
    base_url: str | None


# 1. The key -----------------------------------------------------------------------------------------

def key_file() -> Path:
    return data_dir() / KEY_FILE


def load_key(*, create: bool) -> Any:
    """The Fernet for NODEFLOW_SECRET_KEY, else for the key file (generated when `create`); None if there is none."""
    from cryptography.fernet import Fernet

    raw = os.environ.get(SECRET_KEY_ENV, "").strip()
    if raw:
        try:
            return Fernet(raw)
        except ValueError:
            raise CredentialError(f"{SECRET_KEY_ENV} is not a Fernet key (32 url-safe base64-encoded bytes); "
                                  f"generate one with: {_GENERATE}") from None
    path = key_file()
    try:
        text = path.read_bytes().strip()
    except FileNotFoundError:
        if not create:
            return None
        text = _create_key_file(path)
    except OSError as error:
        raise CredentialError(f"cannot read the key file {path}: {error.strerror or error}") from None
    try:
        return Fernet(text)
    except ValueError:
        raise CredentialError(f"the key file {path} does not hold a Fernet key; restore it, or set "
                              f"{SECRET_KEY_ENV} to the key the credentials were stored with") from None


def keyed_digest(text: str) -> str:
    """HMAC-SHA256 of `text` under the install's key: the same in every process of the install, and not
    computable without the key (e.g. a name a client must not be able to guess)."""
    import hashlib
    import hmac

    load_key(create=True)  # checks the key, and makes the key file on a fresh install
    secret = os.environ.get(SECRET_KEY_ENV, "").strip().encode() or key_file().read_bytes().strip()
    return hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()


def _create_key_file(path: Path) -> bytes:
    from cryptography.fernet import Fernet

    private_dir(path.parent)
    key = Fernet.generate_key()
    try:  # O_EXCL: two processes starting together must not each write a different key
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes().strip()
    with os.fdopen(fd, "wb") as file:
        file.write(key + b"\n")
    return key


def _key_source() -> str:
    return SECRET_KEY_ENV if os.environ.get(SECRET_KEY_ENV, "").strip() else f"the key file {key_file()}"


# 2. The lookup -------------------------------------------------------------------------------------

# (provider, workspace_id) -> the credential; "" is the workspace of credentials stored before accounts.
_lookup: Callable[[str, str], Credential | None] | None = None
_workspace: contextvars.ContextVar[str] = contextvars.ContextVar("nodeflow_credential_workspace", default="")


def use_lookup(lookup: Callable[[str, str], Credential | None]) -> None:
    """Where `stored` finds credentials (the credential store registers itself when it loads)."""
    global _lookup
    _lookup = lookup


def use_workspace(workspace_id: str | None) -> None:
    """Stored credentials of `workspace_id` count in this context (and the tasks it starts from now on), except
    in a run's node, which acts in its run's workspace."""
    _workspace.set(workspace_id or "")


def current_workspace() -> str:
    """The workspace whose stored credentials count here: the running node's run's, else `use_workspace`'s."""
    node = running_node()
    return (node is not None and (node.services or {}).get("workspace_id")) or _workspace.get()


def stored(provider: str) -> Credential | None:
    """`provider`'s credential stored for the current workspace, or None (also when no store is loaded)."""
    return _lookup(provider, current_workspace()) if _lookup is not None else None
