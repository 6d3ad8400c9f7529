"""Webhook calls (SPEC 6): find the live graph of `/api/hooks/<id>`, check the call against its Webhook node
(method, authentication, payload size), and start the run of the graph's active version.

The HTTP side (reading the body, writing the answer) is the route's (nodeflow_app/api/hooks.py); everything
here is plain Python, so tests and the benchmark use it without a server. A refused call raises Refused with
the status and a message that says what to change.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import hmac
import json
import logging
import threading
import time
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import parse_qsl

from nodeflow_app.connections import connection_for
from nodeflow_app.contract import NodeError
from nodeflow_app.runs.caller import Caller, set_caller
from nodeflow_app.runs.launcher import RunLauncher
from nodeflow_app.runtime.graph import GraphInvalid
from nodeflow_app.runtime.plan import Plan
from nodeflow_app.runtime.run import Run
from nodeflow_app.runtime.values import MAX_DEPTH, value_problem
from nodeflow_app.secret_values import reveal
from nodeflow_app.store.graphs import GraphStore
from nodeflow_app.store.triggers import LiveHook, TriggerStore, changes
# STARTED_BY: the entry point, beside the answer's rules
from nodeflow_app.triggers.webhook_answer import STARTED_BY, Answer, settings
RESPOND = ("at_once", "last_node", "stream")
NOT_SET_UP = "the webhook's authentication is not set up (the server's log says why)"
PLANS_KEPT = 256  # compiled plans of active versions kept per process
# A live address is looked up in the database at most once per this many seconds per process: switching a
# graph off in this process takes effect at once, in another process within this time.
LIVE_TTL = 1.0


log = logging.getLogger("nodeflow.triggers.webhooks")


class Refused(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


def hook_id(graph_id: str, node_id: str) -> str:
    """A Webhook node's address id: stable while the graph and the node exist, new for a duplicated graph."""
    return hashlib.sha256(f"{graph_id}/{node_id}".encode()).hexdigest()[:20]


@dataclass(frozen=True)
class Call:
    """An HTTP call as the route read it."""

    method: str
    headers: dict[str, str]  # names lower-case
    query: dict[str, str]
    body: bytes
    token_header: str = ""  # the header that carried the webhook's token (set by `check`): never recorded


@dataclass(frozen=True)
class Target:
    """The graph version and Webhook node a call starts. A live address's target serves every call to it while its
    version is active (`Webhooks.live`): what it reads from the node's settings is read once."""

    graph_id: str
    node_id: str
    plan: Plan
    workspace_id: str | None

    @cached_property
    def data(self) -> dict[str, Any]:
        return self.plan.nodes[self.node_id].node.data

    @cached_property
    def respond(self) -> str:
        return self.data.get("respond") if self.data.get("respond") in RESPOND else "at_once"

    @cached_property
    def methods(self) -> list[str]:
        return methods(self.data)

    @cached_property
    def answer(self) -> Answer:
        """The status and headers of an answer "when the last node finishes" (webhook_answer.settings)."""
        return settings(self.data)

    def max_body(self) -> int:
        return max(1, int(self.data.get("max_body_kb") or 1024)) * 1024


class Webhooks:
    """Resolves addresses to live (or, for test calls, stored) graph versions and starts their runs."""

    def __init__(self, launcher: RunLauncher, triggers: TriggerStore | None = None, graphs: GraphStore | None = None):
        self.launcher = launcher
        self.triggers = triggers or TriggerStore(launcher.engine)
        self.graphs = graphs or GraphStore(launcher.engine)
        self._plans: dict[tuple[str, int], Plan] = {}
        self._targets: dict[LiveHook, Target] = {}  # one per live address and active version
        self._live: dict[str, tuple[float, int, LiveHook | None]] = {}  # hook -> (when, changes(), found)
        self._lock = threading.Lock()

    # -- finding the graph (blocking: database) ----------------------------------------------------------

    def live(self, hook: str) -> Target:
        """The active version's Webhook node behind `/api/hooks/<hook>`; 404 when none is live."""
        found = self._live_hook(hook)
        if found is None:
            raise Refused(404, "no active webhook at this address (is the graph active?)")
        target = self._targets.get(found)
        if target is not None:
            return target
        plan = self._plan(found.graph_id, found.version)
        if found.node_id not in plan.nodes:
            raise Refused(404, "no active webhook at this address")
        target = Target(found.graph_id, found.node_id, plan, found.workspace_id)
        with self._lock:
            if len(self._targets) >= PLANS_KEPT:
                self._targets.clear()
            self._targets[found] = target
        return target

    def _live_hook(self, hook: str) -> LiveHook | None:
        now, generation = time.monotonic(), changes()
        cached = self._live.get(hook)
        if cached is not None and now - cached[0] < LIVE_TTL and cached[1] == generation:
            return cached[2]
        found = self.triggers.live_hook(hook)
        with self._lock:
            if len(self._live) >= PLANS_KEPT * 16:
                self._live.clear()
            self._live[hook] = (now, generation, found)
        return found

    def cached_live(self, hook: str) -> Target | None:
        """`live(hook)` when it needs no database (a recent lookup): the route then skips a thread hop."""
        cached = self._live.get(hook)
        if cached is None or time.monotonic() - cached[0] >= LIVE_TTL or cached[1] != changes():
            return None
        return self.live(hook)

    def test_target(self, hook: str) -> Target:
        """The stored graph's Webhook node an editor listens for at `/api/hooks-test/<hook>`; 404 when nobody does."""
        listener = self.triggers.test_listener(hook)
        if listener is None or listener.called:
            raise Refused(404, "nobody is listening for a test call: press 'Listen for test event' in the editor")
        stored = self.graphs.get(listener.graph_id)
        if stored is None:
            raise Refused(404, "the graph of this webhook no longer exists")
        try:
            plan = self.launcher.plan(stored.graph)
        except GraphInvalid as error:
            raise Refused(409, "; ".join(issue.message for issue in error.issues)) from None
        if listener.node_id not in plan.nodes:
            raise Refused(404, "the webhook node is no longer in the saved graph")
        return Target(listener.graph_id, listener.node_id, plan, self.graphs.workspace_of(listener.graph_id))

    def _plan(self, graph_id: str, version: int) -> Plan:
        key = (graph_id, version)
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        stored = self.graphs.get_version(graph_id, version)
        if stored is None:
            raise Refused(404, "the active version of this graph no longer exists")
        try:
            plan = self.launcher.plan(stored.graph)
        except GraphInvalid as error:
            raise Refused(409, "; ".join(issue.message for issue in error.issues)) from None
        with self._lock:
            if len(self._plans) >= PLANS_KEPT:
                self._plans.clear()
            self._plans[key] = plan
        return plan

    # -- checking the call -----------------------------------------------------------------------------

    def check(self, target: Target, call: Call) -> Call:
        """Method, then authentication, then size; Refused names what is wrong. The call back, with the header
        that carried the token named (its own, or the connection's: payloads leave it out)."""
        allowed = target.methods
        if call.method.upper() not in allowed:
            raise Refused(405, f"this webhook accepts {', '.join(allowed)}, not {call.method.upper()}",
                          {"Allow": ", ".join(allowed)})
        token_header = self.authenticate(target, call.headers)
        if len(call.body) > target.max_body():
            raise Refused(413, too_large(target.max_body()))
        return call if token_header == call.token_header else dataclasses.replace(call, token_header=token_header)

    def authenticate(self, target: Target, headers: dict[str, str]) -> str:
        """"" when the call may go on; for a header token, that header's name (lower-case)."""
        data = target.data
        kind = data.get("auth") or "none"
        if kind == "none":
            return ""
        name, secret = self._secret(target, kind)
        if kind == "header":
            given = headers.get(name.lower(), "")
            if not given or not hmac.compare_digest(given.encode(), secret.encode()):
                raise Refused(401, f"this webhook needs its token in the {name} header")
            return name.strip().lower()
        user, password = _basic(headers.get("authorization", ""))
        if not (hmac.compare_digest(user.encode(), name.encode())
                and hmac.compare_digest(password.encode(), secret.encode())):
            raise Refused(401, "this webhook needs Basic authentication (user and password)",
                          {"WWW-Authenticate": 'Basic realm="webhook"'})
        return ""

    def _secret(self, target: Target, kind: str) -> tuple[str, str]:
        """(header name or user, token or password): from the named connection, else the node's fields."""
        data = target.data
        try:
            if str(data.get("auth_connection") or "").strip():
                services = {"workspace_id": target.workspace_id} if target.workspace_id else {}
                wanted = ("http_header",) if kind == "header" else ("http_basic",)
                fields = connection_for(services, data["auth_connection"], wanted).fields
                return ((fields["header"], fields["value"]) if kind == "header"
                        else (fields["username"], fields["password"]))
            secret = reveal(data.get("auth_secret"), "the webhook's token or password")
        except NodeError as error:
            raise self._not_set_up(target, str(error)) from None
        name = str(data.get("auth_name") or "").strip()
        if not secret or not name:
            raise self._not_set_up(target, "fill in its header name or user and its token or password")
        return name, str(secret)

    @staticmethod
    def _not_set_up(target: Target, why: str) -> Refused:
        """A 500 that tells the caller, who may be anyone, nothing of the workspace (its id, its connections'
        names); the log tells the owner what to fix."""
        log.warning("webhook %s of graph %s: its authentication is not set up: %s", target.node_id, target.graph_id,
                    why)
        return Refused(500, NOT_SET_UP)

    # -- starting the run --------------------------------------------------------------------------------

    def start(self, target: Target, call: Call, *, test: bool = False) -> Run:
        """The run of the target's graph version with the call as its payload (not yet driven)."""
        set_caller(Caller(None, "", target.workspace_id))  # nodes resolve connections in the graph's workspace
        try:
            return self.launcher.start(target.plan, started_by="test" if test else STARTED_BY,
                                       trigger=target.node_id, payload=payload(call, target), graph_id=target.graph_id,
                                       cache="reuse" if test else "none",
                                       defer_start=not test and target.respond == "last_node")
        except GraphInvalid as error:
            raise Refused(409, "; ".join(issue.message for issue in error.issues)) from None


def methods(data: dict[str, Any]) -> list[str]:
    chosen = [m.strip().upper() for m in str(data.get("methods") or "POST").split(",") if m.strip()]
    return chosen or ["POST"]


def too_large(limit: int) -> str:
    return f"the payload is larger than this webhook's limit of {limit // 1024} KB"


# Headers that carry the caller's credentials. They authenticate the call and go no further: a run's payload is
# stored and shown to everyone who may see the graph's runs.
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key"})
HIDDEN_HEADER = "(hidden)"


def payload(call: Call, target: Target | None = None) -> dict[str, Any]:
    """`{body, headers, query}`: a JSON body parsed, a form as an object, anything else as text; credentials in
    headers (and the webhook's own token header, named by `check` or by the node) hidden."""
    hidden = set(CREDENTIAL_HEADERS) | {call.token_header}
    if target is not None and target.data.get("auth") == "header":
        hidden.add(str(target.data.get("auth_name") or "").strip().lower())
    headers = {name: HIDDEN_HEADER if name in hidden else value for name, value in call.headers.items()}
    return {"body": parse_body(call.body, call.headers.get("content-type", "")), "headers": headers,
            "query": call.query}


def parse_body(body: bytes, content_type: str) -> Any:
    if not body:
        return None
    kind = content_type.split(";")[0].strip().lower()
    text = body.decode("utf-8", errors="replace")
    if kind == "application/json" or kind.endswith("+json"):
        try:
            value = json.loads(text)
        except ValueError as error:
            raise Refused(400, f"the body is not valid JSON: {error}") from None
        except RecursionError:
            raise Refused(400, f"the body's JSON is nested deeper than {MAX_DEPTH} levels") from None
        problem = value_problem(value)  # NaN, Infinity, nesting past MAX_DEPTH: no run could carry it
        if problem:
            raise Refused(400, f"the body cannot be used: {problem}")
        return value
    if kind == "application/x-www-form-urlencoded":
        return dict(parse_qsl(text, keep_blank_values=True))
    return text


def _basic(header: str) -> tuple[str, str]:
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return "", ""
    try:
        user, _, password = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return "", ""
    return user, password
