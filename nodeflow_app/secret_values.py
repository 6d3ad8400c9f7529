"""Secret parameter values (`Parameter.secret`): sealed in the graph JSON, hidden from browsers and exports.

A secret value is stored in the node's data as `{"$secret": "<Fernet token>"}`, encrypted with the credential
store's key (NODEFLOW_SECRET_KEY or `<data dir>/secret.key`), so it is encrypted wherever the graph goes at
rest: graph versions, run records. Browsers and exports get `{"$secret": ""}` instead: "a secret was here"; so
does a sealed value anywhere else in a node's data (its type no longer installed, or changed since it was sealed).
Executors call `reveal` to get the value back when they run; a `{"$secret": ""}` (an imported export) is a
NodeError saying to enter the secret again.

For a `key_value` parameter the values are secret and the names are not. A value holding an expression
(`{{ ... }}`) is a reference to data, not a secret, and is left as written.

A secret sent to a URL (`Parameter.secret_for`, e.g. an MCP server's headers) is sealed together with that
URL's origin and revealed only for a URL of the same origin: whoever may edit a graph but not read its secrets
cannot point the URL at a server of their own and receive them. Changing the URL to another origin clears such
secrets (`cleared_by`); a secret entered before the URL is refused until the URL is set.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any, Callable, Iterator

from nodeflow_app.contract import NodeDefinition, NodeError, Parameter

SEALED = "$secret"
HIDDEN: dict[str, str] = {SEALED: ""}
_KIND = "parameter"  # inside the token: a credential row's token cannot be replayed as a parameter

Definitions = Any  # anything with `definition(node_type) -> NodeDefinition | None` (the registry)


def is_sealed(value: Any) -> bool:
    """Whether `value` is a secret's envelope (sealed, or hidden for a browser or an export)."""
    return isinstance(value, dict) and len(value) == 1 and SEALED in value


def is_set(value: Any) -> bool:
    """Whether a secret slot holds a value (sealed or still plain), as the editor shows it."""
    if is_sealed(value):
        return bool(value[SEALED])
    return value not in (None, "")


# 1. One value ------------------------------------------------------------------------------------

def seal(plain: str, bound_to: str | None = None) -> dict[str, str]:
    """The sealed envelope of `plain`; with `bound_to` (an origin, see `origin`) it reveals only for that origin."""
    from nodeflow_app.llm.credentials import load_key

    content = {"kind": _KIND, "value": plain, **({"for": bound_to} if bound_to is not None else {})}
    token = load_key(create=True).encrypt(json.dumps(content).encode())
    return {SEALED: token.decode("ascii")}


def origin(url: Any) -> str:
    """`scheme://host:port` of an http(s) URL as httpx (the client that sends it) reads it; "" when it names none
    (empty, an expression, another scheme)."""
    if not isinstance(url, str) or "{{" in url:
        return ""
    import httpx

    try:
        parsed = httpx.URL(url.strip())
        host = parsed.raw_host.decode("ascii")
    except (httpx.InvalidURL, UnicodeDecodeError):
        return ""
    if parsed.scheme not in ("http", "https") or not host:
        return ""
    return f"{parsed.scheme}://{host}:{parsed.port or (443 if parsed.scheme == 'https' else 80)}"


def reveal(value: Any, where: str, url: str | None = None) -> Any:
    """The plain value of a secret slot (plain values pass through); a NodeError naming `where` if it cannot be.

    `url`: where the value is about to be sent; a secret sealed for another origin (or for none) is refused.
    """
    if not is_sealed(value):
        return value
    token = value[SEALED]
    if not token:
        raise NodeError(f"{where} is a secret that was not exported with the graph: enter it again")
    from cryptography.fernet import InvalidToken

    from nodeflow_app.llm.credentials import load_key

    fernet = load_key(create=False)
    try:
        if fernet is None:
            raise InvalidToken
        plain = json.loads(fernet.decrypt(str(token).encode("ascii")))
    except (InvalidToken, ValueError, UnicodeEncodeError):
        raise NodeError(f"{where} is a secret encrypted with another key than this install's (NODEFLOW_SECRET_KEY "
                        "or the data folder's secret.key): enter it again") from None
    if not isinstance(plain, dict) or plain.get("kind") != _KIND:
        raise NodeError(f"{where} does not hold a secret parameter value: enter it again")
    target = origin(url) if url is not None else None
    if url is not None and (not target or plain.get("for") != target):
        raise NodeError(f"{where} was entered for {plain.get('for') or 'no URL'}, not for "
                        f"{target or 'a URL without an http(s) address'}: a secret goes only to the address it "
                        "was entered for; enter it again")
    return plain.get("value")


def reveal_set(value: Any, where: str, url: str | None = None) -> Any:
    """`reveal`, refusing an empty value: the editor empties a secret sent to a URL when that URL moves to
    another address, and an empty header would only earn a vague 401 from the server."""
    plain = reveal(value, where, url=url)
    if plain in (None, ""):
        raise NodeError(f"{where} is empty (a secret is cleared when its URL changes to another address): "
                        "enter it again")
    return plain


def _sealable(value: Any) -> bool:
    return isinstance(value, str) and value != "" and "{{" not in value


# 2. Every secret slot of a node or a graph ----------------------------------------------------------

def secret_parameters(definition: NodeDefinition | None) -> list[Parameter]:
    return [p for p in definition.parameters if p.secret] if definition is not None else []


def map_node_secrets(definition: NodeDefinition | None, data: dict[str, Any],
                     change: Callable[[Any], Any]) -> dict[str, Any]:
    """`data` with `change(value)` applied to every secret slot (a new dict; `data` is untouched)."""
    parameters = secret_parameters(definition)
    if not parameters:
        return data
    data = dict(data)
    for parameter in parameters:
        if parameter.id in data:
            data[parameter.id] = _map_value(parameter, data[parameter.id], change)
    return data


def _map_value(parameter: Parameter, value: Any, change: Callable[[Any], Any]) -> Any:
    if parameter.type != "key_value":
        return change(value)
    if isinstance(value, dict) and not is_sealed(value):
        return {name: change(item) for name, item in value.items()}
    if isinstance(value, list):
        return [{**row, "value": change(row.get("value"))} if isinstance(row, dict) else row for row in value]
    return value


def seal_parameter(parameter: Parameter, value: Any, data: dict[str, Any] | None = None) -> Any:
    """A secret parameter's value with every plain secret in it sealed (other parameters' values as they are).

    `data`: the node's parameters, where a secret sent to a URL finds it; without that URL a NodeError says to
    set it first.
    """
    if not parameter.secret:
        return value
    sealed = _sealed(parameter, value, data or {})
    if _bound_to(parameter, data or {}) == "" and sealed != value:
        raise NodeError(f"{parameter.label}: set the URL first; a secret is tied to the address it is sent to")
    return sealed


def seal_node(definition: NodeDefinition | None, data: dict[str, Any]) -> dict[str, Any]:
    """`data` with every plain secret sealed (one sent to a URL, for that URL's origin)."""
    parameters = [p for p in secret_parameters(definition) if p.id in data]
    return {**data, **{p.id: _sealed(p, data[p.id], data) for p in parameters}} if parameters else data


def _sealed(parameter: Parameter, value: Any, data: dict[str, Any]) -> Any:
    bound_to = _bound_to(parameter, data)
    return _map_value(parameter, value, lambda v: seal(v, bound_to) if _sealable(v) else v)


def _bound_to(parameter: Parameter, data: dict[str, Any]) -> str | None:
    return origin(data.get(parameter.secret_for)) if parameter.secret_for else None


def cleared_by(definition: NodeDefinition | None, data: dict[str, Any], parameter_id: str,
               value: Any) -> dict[str, Any]:
    """The secrets that setting `parameter_id` to `value` clears, when its origin changes: the values of those
    sent to it (a header's name stays, its value is to be entered again)."""
    if definition is None or origin(data.get(parameter_id)) == origin(value):
        return {}
    return {p.id: _map_value(p, data[p.id], lambda v: "" if is_sealed(v) or _sealable(v) else v)
            for p in secret_parameters(definition) if p.secret_for == parameter_id and p.id in data}


def hide_node(definition: NodeDefinition | None, data: dict[str, Any]) -> dict[str, Any]:
    """`data` as a browser or an export may see it: every set secret is `{"$secret": ""}`, and so is every sealed
    value elsewhere in it (see `forget_sealed_node`)."""
    hidden = map_node_secrets(definition, data, lambda v: dict(HIDDEN) if is_sealed(v) or _sealable(v) else v)
    return forget_sealed_node(definition, hidden)


def _nodes(graph: dict[str, Any]) -> Iterator[dict[str, Any]]:
    return (n for n in graph.get("nodes") or [] if isinstance(n, dict) and isinstance(n.get("data"), dict))


def _map_nodes(graph: dict[str, Any], definitions: Definitions,
               change: Callable[[NodeDefinition | None, dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """A copy of the graph JSON with `change(definition, data)` applied to each node's data."""
    return {**graph, "nodes": [
        {**n, "data": change(definitions.definition(str(n.get("type"))), n["data"])}
        if isinstance(n, dict) and isinstance(n.get("data"), dict) else n for n in graph.get("nodes") or []]}


def seal_graph(graph: dict[str, Any], definitions: Definitions) -> dict[str, Any]:
    """A copy of the graph JSON with every plain secret sealed (what is stored)."""
    return _map_nodes(graph, definitions, seal_node)


def hide_graph(graph: dict[str, Any], definitions: Definitions) -> dict[str, Any]:
    """A copy of the graph JSON with every secret hidden (what a browser or an export gets)."""
    return _map_nodes(graph, definitions, hide_node)


def forget_sealed(graph: dict[str, Any], definitions: Definitions) -> dict[str, Any]:
    """A copy of the graph JSON whose sealed secrets are emptied, to be entered again: a graph from elsewhere (a
    file, another workspace, a clipboard) brings no sealed value along. Plain ones (written in clear in a file)
    stay, to be sealed."""
    return _map_nodes(graph, definitions, forget_sealed_node)


def forget_sealed_node(definition: NodeDefinition | None, data: dict[str, Any]) -> dict[str, Any]:
    """`data` with its sealed secrets emptied (see `forget_sealed`), wherever they are in it, not only in the
    parameters `definition` marks secret: a node whose type is no longer installed (its plugin removed, an old
    version restored) or has changed since still holds the sealed values of its secret parameters."""
    return _forget_everywhere(data)


def _forget_everywhere(value: Any) -> Any:
    if isinstance(value, dict):
        return _forget(value) if is_sealed(value) else {k: _forget_everywhere(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_forget_everywhere(v) for v in value]
    return value


def forget_sealed_value(parameter: Parameter, value: Any) -> Any:
    """A value typed in the browser, which never sees a sealed value: one it sends (a ciphertext seen elsewhere)
    is emptied rather than taken as a secret the sender may use."""
    return _map_value(parameter, value, _forget) if parameter.secret else value


def _forget(value: Any) -> Any:
    return dict(HIDDEN) if is_sealed(value) and value[SEALED] else value


def fingerprint_graph(graph: dict[str, Any], definitions: Definitions, key: bytes) -> dict[str, Any]:
    """A copy of the graph JSON with every secret (sealed, or plain in an old version) replaced by a keyed digest
    of it: two graphs fingerprinted with one fresh `key` differ where their secrets differ, and the digests say
    nothing else (comparing versions shows that a secret changed, never its value)."""
    def stand_in(value: Any) -> Any:
        if not (is_sealed(value) or _sealable(value)):
            return value
        digest = hmac.new(key, json.dumps(value, sort_keys=True).encode(), hashlib.sha256).hexdigest()[:16]
        return {SEALED: digest}

    return _map_nodes(graph, definitions, lambda definition, data: map_node_secrets(definition, data, stand_in))


def holds_secret(value: Any) -> bool:
    """Whether a secret's envelope sits anywhere in `value` (a whole value, or a row of a key_value list)."""
    if is_sealed(value):
        return True
    if isinstance(value, dict):
        return any(holds_secret(v) for v in value.values())
    if isinstance(value, list):
        return any(holds_secret(v) for v in value)
    return False


def secrets_to_enter(graph: dict[str, Any], definitions: Definitions) -> list[str]:
    """Where the graph holds a secret, as people name it: "'MCP'.headers Authorization"."""
    found: list[str] = []
    for node in _nodes(graph):
        for parameter in secret_parameters(definitions.definition(str(node.get("type")))):
            where, value = f"'{node.get('name')}'.{parameter.id}", node["data"].get(parameter.id)
            if parameter.type == "key_value":
                found.extend(f"{where} {name}" for name, item in _pairs(value) if is_set(item))
            elif is_set(value):
                found.append(where)
    return found


def _pairs(value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict) and not is_sealed(value):
        return [(str(k), v) for k, v in value.items()]
    if isinstance(value, list):
        return [(str(row.get("name", row.get("key", ""))), row.get("value")) for row in value if isinstance(row, dict)]
    return []
