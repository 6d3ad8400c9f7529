"""The database tables, as plain SQLModel classes (Alembic picks them up from SQLModel.metadata).

JSON values are TEXT written with json.dumps(default=str); times are epoch seconds, like Run.started_at.
"""

from __future__ import annotations

from sqlalchemy import Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


class RunRow(SQLModel, table=True):
    """One run of a graph, with the normalized graph it used (restorable even after the graph changed)."""

    __tablename__ = "run"
    # Each graph's runs newest first (the run history) and oldest first (pruning beyond a number per graph);
    # it serves lookups by graph alone too (no index of graph_id by itself: one less to write per run).
    __table_args__ = (Index("ix_run_graph_id_started_at", "graph_id", "started_at"),)

    id: str = Field(primary_key=True)  # the kernel's run_id
    graph_id: str
    graph_version: int = 1
    graph_json: str = Field(sa_type=Text)
    trigger_id: str | None = None
    payload_json: str | None = Field(default=None, sa_type=Text)
    status: str = Field(index=True)  # running | paused | completed | failed | cancelled | interrupted
    error: str | None = Field(default=None, sa_type=Text)
    started_at: float = Field(index=True)
    finished_at: float | None = None
    duration_ms: float | None = None
    # Added by migration 0003 (a run written before them reads as None).
    started_by: str | None = None  # chat | test | cli | graph (later: webhook, schedule, api)
    started_by_user: str | None = None  # the name of the person who started it (migration 0005)
    context_json: str | None = Field(default=None, sa_type=Text)  # the run's opaque context for its nodes
    # A run started by an Execute Graph node: the calling run and that node (migration 0007).
    parent_run_id: str | None = Field(default=None, index=True)
    parent_node_id: str | None = None
    # The process executing it ("host:pid:token") and when that process last said it is alive:
    # recovery and resume touch a `running` run only when its owner is gone.
    owner: str | None = None
    heartbeat_at: float | None = None


class RunRequestRow(SQLModel, table=True):
    """A stop or an answer for a run, recorded for the process executing it (which polls, or hears Redis)."""

    __tablename__ = "run_request"

    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(index=True)
    kind: str  # stop | answer
    node_id: str | None = None
    payload_json: str | None = Field(default=None, sa_type=Text)
    created_at: float
    handled_at: float | None = Field(default=None, index=True)


class NodeRunRow(SQLModel, table=True):
    """The latest state of one node in one run (a kernel NodeRecord)."""

    __tablename__ = "node_run"

    run_id: str = Field(primary_key=True, foreign_key="run.id", ondelete="CASCADE")
    node_id: str = Field(primary_key=True)
    node_type: str
    node_name: str
    status: str  # running | completed | failed | skipped | paused | cancelled | interrupted
    inputs_json: str | None = Field(default=None, sa_type=Text)  # input values not taken from an upstream output
    # Inputs that are an upstream node's output, by reference, so each output is stored once:
    # {handle: {"from": [node_id, port]}} or, for a multiple input, {handle: {"items": [[node_id, port] | null]}}.
    input_refs_json: str | None = Field(default=None, sa_type=Text)
    outputs_json: str | None = Field(default=None, sa_type=Text)
    error: str | None = Field(default=None, sa_type=Text)
    duration_ms: float | None = None
    sequence: int = 0  # order of the node's last status change within the run
    cached: bool = False
    wait_json: str | None = Field(default=None, sa_type=Text)  # {prompt, options, detail, resume_at} of a pause
    resume_at: float | None = Field(default=None, index=True)  # a timed pause goes on by itself then (runs/timers.py)
    checkpoint_json: str | None = Field(default=None, sa_type=Text)  # the node's saved progress (see RuntimeApi)
    updated_at: float = 0.0


class CredentialRow(SQLModel, table=True):
    """A provider's credential of a workspace, encrypted at rest: one Fernet token; only which fields are set is
    readable."""

    __tablename__ = "credential"

    workspace_id: str = Field(default="", primary_key=True, max_length=64)  # "": stored before accounts
    provider: str = Field(primary_key=True)
    secret: str = Field(sa_type=Text)  # Fernet token of {"provider", "api_key", "base_url"} as JSON
    has_api_key: bool = False
    has_base_url: bool = False
    updated_at: float = 0.0


class GraphRow(SQLModel, table=True):
    """A stored graph: its latest version, plus what the graph list shows without reading the JSON."""

    __tablename__ = "graph"

    id: str = Field(primary_key=True, max_length=64)  # short and url-safe: it is part of the editor's URL
    name: str = Field(max_length=120)
    graph_json: str = Field(sa_type=Text)  # the normalized graph, Graph.model_dump(mode="json")
    node_count: int = 0
    version: int = 1  # the latest GraphVersionRow.version
    created_at: float
    updated_at: float = Field(index=True)  # the list shows the last edited first
    workspace_id: str | None = Field(default=None, index=True, max_length=32)  # None: made before workspaces
    # Activation (migration 0008): the version webhooks and schedules run; None while the graph is inactive.
    active_version: int | None = Field(default=None, index=True)
    activated_at: float | None = None


class GraphVersionRow(SQLModel, table=True):
    """One save of a graph, kept so history can show and restore it."""

    __tablename__ = "graph_version"
    __table_args__ = (UniqueConstraint("graph_id", "version"),)

    id: int | None = Field(default=None, primary_key=True)
    graph_id: str = Field(foreign_key="graph.id", ondelete="CASCADE", index=True, max_length=64)
    version: int
    graph_json: str = Field(sa_type=Text)
    node_count: int = 0
    created_at: float
    note: str = ""  # created | saved | autosave | imported | renamed | duplicated from <name> | restored from v<n>
    # Added after the first release: nullable without a default, so an older database can gain them in place.
    author: str | None = Field(default=None, max_length=32)  # the user id of who saved it; None before accounts
    author_name: str | None = Field(default=None, max_length=120)  # their name then (kept if they leave)
    label: str | None = Field(default=None, max_length=120)  # a name a person gave this version in History


class ChatRow(SQLModel, table=True):
    """A conversation with a graph; its messages (ChatMessageRow) form a tree."""

    __tablename__ = "chat"

    id: str = Field(primary_key=True, max_length=64)
    graph_id: str = Field(index=True, max_length=64)  # no foreign key: a chat outlives edits and imports of its graph
    title: str = Field(max_length=120)
    created_at: float
    updated_at: float = Field(index=True)  # the list shows the last active first
    user_id: str | None = Field(default=None, index=True, max_length=32)  # whose chat (None: before accounts)


class ChatMessageRow(SQLModel, table=True):
    """One message of a chat. Retry adds an assistant sibling, edit a user sibling (same parent_id)."""

    __tablename__ = "chat_message"

    id: str = Field(primary_key=True, max_length=64)
    chat_id: str = Field(foreign_key="chat.id", ondelete="CASCADE", index=True, max_length=64)
    parent_id: str | None = Field(default=None, max_length=64)  # None: a first message
    role: str  # user | assistant
    blocks_json: str = Field(sa_type=Text)  # the content blocks (nodeflow_app.chat.blocks) as a JSON list
    status: str = "complete"  # complete | streaming | stopped | failed | paused
    run_id: str | None = Field(default=None, index=True)  # the run that wrote an assistant message
    created_at: float


class PinnedOutputRow(SQLModel, table=True):
    """A node's output pinned as test data: test runs of the graph use it instead of running the node."""

    __tablename__ = "pinned_output"

    graph_id: str = Field(primary_key=True, max_length=64)  # no foreign key, like chats: pins outlive imports
    node_id: str = Field(primary_key=True)
    outputs_json: str = Field(sa_type=Text)  # {output port: value} as JSON
    updated_at: float = 0.0


# Accounts, workspaces and access (SPEC 10). Secrets (passwords, session, invitation and API tokens) are
# stored only as hashes: argon2 for passwords, sha256 for random tokens (they carry 256 bits already).


class UserRow(SQLModel, table=True):
    __tablename__ = "user_account"

    id: str = Field(primary_key=True, max_length=32)
    email: str = Field(unique=True, max_length=254)  # lower-cased
    name: str = Field(max_length=120)
    password_hash: str = Field(sa_type=Text)
    is_admin: bool = False  # the instance admin: the first account
    created_at: float


class SessionRow(SQLModel, table=True):
    __tablename__ = "user_session"

    token_hash: str = Field(primary_key=True, max_length=64)
    user_id: str = Field(foreign_key="user_account.id", ondelete="CASCADE", index=True, max_length=32)
    created_at: float
    expires_at: float = Field(index=True)


class SignInAttemptRow(SQLModel, table=True):
    """Failed sign-ins, by email and by the client's address, for the rate limits (shared by every worker through
    the database; see AccountStore._password_checked)."""

    __tablename__ = "sign_in_attempt"

    id: int | None = Field(default=None, primary_key=True)
    email: str = Field(index=True, max_length=254)
    # accounts.addresses.sign_in_address: an IP address, an IPv6 /64 network; None for an attempt made before
    # addresses were kept, or by a caller that has none.
    address: str | None = Field(default=None, index=True, max_length=64)
    at: float = Field(index=True)


class KnownSignInAddressRow(SQLModel, table=True):
    """The addresses each account signed in from (as `sign_in_address` gives them), with the last time: from such
    an address the account meets only its own limit, not those that failures from elsewhere fill
    (AccountStore._password_checked)."""

    __tablename__ = "known_sign_in_address"

    user_id: str = Field(primary_key=True, foreign_key="user_account.id", ondelete="CASCADE", max_length=32)
    address: str = Field(primary_key=True, max_length=64)
    at: float = Field(index=True)


class WorkspaceRow(SQLModel, table=True):
    __tablename__ = "workspace"

    id: str = Field(primary_key=True, max_length=32)
    name: str = Field(max_length=120)
    personal_of: str | None = Field(default=None, index=True, max_length=32)  # the user of a personal workspace
    created_at: float


class MembershipRow(SQLModel, table=True):
    __tablename__ = "membership"

    workspace_id: str = Field(primary_key=True, foreign_key="workspace.id", ondelete="CASCADE", max_length=32)
    user_id: str = Field(primary_key=True, foreign_key="user_account.id", ondelete="CASCADE", index=True,
                         max_length=32)
    role: str = Field(max_length=16)  # owner | editor | viewer
    created_at: float


class InvitationRow(SQLModel, table=True):
    __tablename__ = "invitation"

    id: str = Field(primary_key=True, max_length=32)
    token_hash: str = Field(unique=True, max_length=64)
    workspace_id: str = Field(foreign_key="workspace.id", ondelete="CASCADE", index=True, max_length=32)
    role: str = Field(max_length=16)
    created_by: str = Field(max_length=32)
    created_at: float
    expires_at: float
    used_by: str | None = Field(default=None, max_length=32)
    used_at: float | None = None
    revoked_at: float | None = None


class ApiTokenRow(SQLModel, table=True):
    __tablename__ = "api_token"

    id: str = Field(primary_key=True, max_length=32)
    token_hash: str = Field(unique=True, max_length=64)
    name: str = Field(max_length=120)
    user_id: str = Field(foreign_key="user_account.id", ondelete="CASCADE", index=True, max_length=32)
    workspace_id: str = Field(foreign_key="workspace.id", ondelete="CASCADE", index=True, max_length=32)
    created_at: float
    last_used_at: float | None = None
    revoked_at: float | None = None
class ConnectionRow(SQLModel, table=True):
    """A named HTTP or database credential of a workspace, encrypted at rest like CredentialRow."""

    __tablename__ = "connection"

    workspace_id: str = Field(primary_key=True, max_length=64)
    name: str = Field(primary_key=True, max_length=120)
    kind: str = Field(max_length=32)  # one of nodeflow_app.connections.KINDS
    secret: str = Field(sa_type=Text)  # Fernet token of {"workspace_id", "name", "kind", "fields"} as JSON
    updated_at: float = 0.0


# Triggers of active graphs (SPEC 6): webhook addresses and the schedule's once-per-due-time leases.


class WebhookRow(SQLModel, table=True):
    """A webhook address of an active graph (written on activation, removed on deactivation)."""

    __tablename__ = "webhook_address"

    hook_id: str = Field(primary_key=True, max_length=64)  # the <id> of /api/hooks/<id>
    graph_id: str = Field(index=True, max_length=64)
    node_id: str = Field(max_length=64)


class WebhookTestRow(SQLModel, table=True):
    """An editor listening for the next call of a webhook's test address, and the call once it came."""

    __tablename__ = "webhook_test"

    hook_id: str = Field(primary_key=True, max_length=64)
    graph_id: str = Field(max_length=64)
    node_id: str = Field(max_length=64)
    expires_at: float
    payload_json: str | None = Field(default=None, sa_type=Text)  # set by the call
    run_id: str | None = Field(default=None, max_length=64)  # the test run the call started


class ScheduleFireRow(SQLModel, table=True):
    """One due time of a schedule, claimed by the process that fires it: the row IS the lease (unique)."""

    __tablename__ = "schedule_fire"
    __table_args__ = (UniqueConstraint("graph_id", "node_id", "due_at"),)

    id: int | None = Field(default=None, primary_key=True)
    graph_id: str = Field(index=True, max_length=64)
    node_id: str = Field(max_length=64)
    due_at: float  # epoch seconds of the due time (whole seconds)
    fired_at: float
    owner: str = Field(max_length=160)  # the process that fired it
    run_id: str | None = Field(default=None, max_length=64)


class TemplateRow(SQLModel, table=True):
    """A graph a workspace's member saved as a starting point for New graph (beside the built-in templates)."""

    __tablename__ = "graph_template"

    id: str = Field(primary_key=True, max_length=32)
    workspace_id: str = Field(foreign_key="workspace.id", ondelete="CASCADE", index=True, max_length=32)
    name: str = Field(max_length=120)
    description: str = Field(default="", max_length=500)
    graph_json: str = Field(sa_type=Text)
    created_by: str | None = Field(default=None, max_length=32)
    created_at: float
