"""Accounts, sessions, workspaces, memberships, invitations and API tokens (SPEC 10), without Reflex.

Passwords are argon2-hashed (argon2-cffi). Session, invitation and API tokens are random (256 bits) and
stored as sha256 hashes: a stolen database row opens nothing. Failed sign-ins are kept in the database with the
client's address, so the limits hold across workers (see `_password_checked`); so are the addresses each
account signed in from, which meet only their own limit for it. Every user has a personal
workspace; the first account is the owner of the install (instance admin).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
import uuid
from dataclasses import dataclass
from typing import Any

from argon2 import PasswordHasher
from sqlalchemy import Connection, Engine, and_, delete, exists, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from nodeflow_app.accounts.addresses import sign_in_address
from nodeflow_app.accounts.roles import ROLES, Role, check_role
from nodeflow_app.store.db import create_all, make_engine, process_wide
from nodeflow_app.store.models import (
    ApiTokenRow, InvitationRow, KnownSignInAddressRow, MembershipRow, SessionRow, SignInAttemptRow, UserRow,
    WorkspaceRow,
)

SESSION_SECONDS = 14 * 86400
# A sign-in in the browser first makes a session this short; the page hands it at once to the sign-in route
# (nodeflow_app/api/session.py), which swaps it for a full session kept only in an HttpOnly cookie.
HANDOFF_SECONDS = 60
INVITATION_SECONDS = 7 * 86400
# Failed sign-ins allowed within SIGN_IN_WINDOW_S, as OWASP and django-axes count them:
MAX_FAILED_SIGN_INS = 5  # for one email from one address: a stranger elsewhere cannot lock the owner out
MAX_FAILED_FROM_ADDRESS = 20  # from one address, whatever the emails: one password tried on every account
MAX_FAILED_FOR_EMAIL = 50  # for one email, whatever the addresses: guessing spread over many addresses
SIGN_IN_WINDOW_S = 15 * 60
# An address the account signed in from within this time is known: there only MAX_FAILED_SIGN_INS counts, so
# strangers failing from many addresses (or from the same shared one) cannot lock the owner out (OWASP's
# "device cookies", with the address as the device).
KNOWN_ADDRESS_S = 90 * 86400
MIN_PASSWORD = 8
MAX_EMAIL = 254  # no address is longer (RFC 5321); the column holds no more
FIRST_ACCOUNT_LOCK = 0x4E46_0001  # PostgreSQL advisory lock key: one account made at a time where "first" counts
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class AccountError(ValueError):
    """A request that cannot be done, with the reason to show (bad email, wrong password, last owner...)."""


class SignInThrottled(AccountError):
    pass


class InstallOwned(AccountError):
    """The install has an owner already: the first account was made, maybe a moment ago by a simultaneous sign-up."""


@dataclass(frozen=True)
class User:
    id: str
    email: str
    name: str
    is_admin: bool


@dataclass(frozen=True)
class Workspace:
    id: str
    name: str
    personal: bool
    role: Role  # the asking user's role in it


@dataclass(frozen=True)
class Member:
    user_id: str
    email: str
    name: str
    role: Role
    personal: bool = False  # the workspace is this member's personal one: they cannot be removed or demoted


@dataclass(frozen=True)
class Invitation:
    id: str
    workspace_id: str
    role: Role
    created_at: float
    expires_at: float
    used_at: float | None
    revoked_at: float | None

    @property
    def pending(self) -> bool:
        return self.used_at is None and self.revoked_at is None and self.expires_at > time.time()


@dataclass(frozen=True)
class ApiToken:
    id: str
    name: str
    workspace_id: str
    created_at: float
    last_used_at: float | None
    revoked_at: float | None


@dataclass(frozen=True)
class ApiCaller:
    user: User
    workspace_id: str
    role: Role


def _first_account_lock(conn: Connection) -> None:
    """Until `conn`'s transaction ends, no other account is made where it matters whether it is the first.
    PostgreSQL reads committed rows only: two sign-ups at once would both see no account without it. SQLite
    needs none (see `_create_user`)."""
    if conn.dialect.name == "postgresql":
        conn.execute(select(func.pg_advisory_xact_lock(FIRST_ACCOUNT_LOCK)))


def _hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def _new_id() -> str:
    return uuid.uuid4().hex[:16]


# argon2id with the library's defaults (RFC 9106's low-memory profile); tests swap in a cheaper one.
PASSWORD_HASHER = PasswordHasher()


def _hasher() -> PasswordHasher:
    return PASSWORD_HASHER


_UNKNOWN_ACCOUNT: dict[int, str] = {}  # id(hasher) -> its hash of a secret nobody knows


def _unknown_account_hash() -> str:
    """A hash no password matches, made by the current hasher: an unknown email costs the same verification as a
    known one, so a sign-in's answer time does not tell which emails have accounts."""
    hasher = _hasher()
    known = _UNKNOWN_ACCOUNT.get(id(hasher))
    if known is None:
        known = _UNKNOWN_ACCOUNT[id(hasher)] = hasher.hash(secrets.token_urlsafe(32))
    return known


def clean_email(email: str) -> str:
    cleaned = (email or "").strip().lower()
    if not cleaned:
        raise AccountError("an email address is needed")  # not "'' is not an email address"
    # The length first: the pattern backtracks quadratically on a long run of dots (a 20,000-character address
    # took 10 s), and the invitation page sends any text here before it knows whether its link is valid.
    if len(cleaned) > MAX_EMAIL or not _EMAIL.match(cleaned):
        raise AccountError(f"{email[:MAX_EMAIL]!r} is not an email address")
    return cleaned


def check_password(password: str) -> str:
    if len(password or "") < MIN_PASSWORD:
        raise AccountError(f"a password needs at least {MIN_PASSWORD} characters")
    return password


def _attempts_of(email: str, address: str | None) -> Any:
    """Failed sign-ins for `email` from `address` (no address: those without one)."""
    return and_(SignInAttemptRow.email == email, _from(address))


def _from(address: str | None) -> Any:
    # `== None` is IS NULL; unlike IS NOT DISTINCT FROM, both forms can use the address index on PostgreSQL.
    return SignInAttemptRow.address == address


def _recent_failures(conn: Connection, email: str, address: str | None, now: float) -> tuple[int, int, int]:
    """Failed sign-ins within the window: (for `email` from `address`, from `address`, for `email`)."""
    same_email = SignInAttemptRow.email == email
    same_address = _from(address)
    return tuple(conn.execute(select(
        func.count().filter(and_(same_email, same_address)), func.count().filter(same_address),
        func.count().filter(same_email),
    ).where(SignInAttemptRow.at > now - SIGN_IN_WINDOW_S, or_(same_email, same_address))).one())


def _known(conn: Connection, email: str, address: str | None, now: float) -> bool:
    """Whether the account of `email` signed in from `address` within KNOWN_ADDRESS_S (False for no address)."""
    if address is None:
        return False
    return conn.execute(select(KnownSignInAddressRow.at).join(UserRow, UserRow.id == KnownSignInAddressRow.user_id)
                        .where(UserRow.email == email, KnownSignInAddressRow.address == address,
                               KnownSignInAddressRow.at > now - KNOWN_ADDRESS_S)).first() is not None


def _remember_address(conn: Connection, user_id: str, address: str | None, now: float) -> None:
    """`address` is known for the account from `now` on (nothing for no address)."""
    if address is None:
        return
    table, row = KnownSignInAddressRow.__table__, {"user_id": user_id, "address": address, "at": now}
    if conn.dialect.name in ("sqlite", "postgresql"):
        insert = (sqlite if conn.dialect.name == "sqlite" else postgresql).insert(table).values(row)
        conn.execute(insert.on_conflict_do_update(index_elements=["user_id", "address"], set_={"at": now}))
    elif not conn.execute(update(table).where(table.c.user_id == user_id, table.c.address == address)
                          .values(at=now)).rowcount:  # any other database
        conn.execute(table.insert().values(row))


def _throttled(email: str, pair: int, from_address: int, for_email: int, known: bool = False) -> str | None:
    """Why a sign-in waits, given the failures counted by `_recent_failures`; None when it may go on. From a
    `known` address (`_known`) only the failures of this email there count."""
    wait = f"try again in {SIGN_IN_WINDOW_S // 60} minutes"
    if pair >= MAX_FAILED_SIGN_INS:
        return f"too many failed sign-ins for {email} from this address; {wait}"
    if known:
        return None
    if from_address >= MAX_FAILED_FROM_ADDRESS:
        return f"too many failed sign-ins from this address; {wait}"
    if for_email >= MAX_FAILED_FOR_EMAIL:
        return f"too many failed sign-ins for {email} from many addresses; {wait}"
    return None


class AccountStore:
    """Everything about who someone is and what they belong to; each method is one transaction."""

    def __init__(self, engine_or_url: Engine | str | None = None):
        self.engine: Engine = engine_or_url if isinstance(engine_or_url, Engine) else make_engine(engine_or_url)
        create_all(self.engine)

    # 1. Users --------------------------------------------------------------------------------------------

    def has_users(self) -> bool:
        with self.engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(UserRow)).scalar_one() > 0

    def create_user(self, name: str, email: str, password: str, *, admin: bool | None = None) -> User:
        """A new account with its personal workspace; the first account ever is the instance admin."""
        return self._create_user(name, email, password, admin)[0]

    def create_owner(self, name: str, email: str, password: str) -> User:
        """The install's owner (instance admin): the first account, or InstallOwned when any account exists, even
        one a simultaneous sign-up made a moment ago (then no account is made)."""
        return self._create_user(name, email, password, None, owner=True)[0]

    def sign_up_by_invitation(self, raw: str, name: str, email: str, password: str) -> tuple[User, Workspace]:
        """A new account that joins the workspace of the invitation `raw`, in one transaction: a link that is not
        valid (made up, used, revoked or expired) makes no account, or any link would be an open sign-up."""
        return self._create_user(name, email, password, False, invitation=raw)

    def _create_user(self, name: str, email: str, password: str, admin: bool | None,
                     invitation: str | None = None, *, owner: bool = False) -> tuple[User, Workspace | None]:
        """`admin` None: the instance admin if it is the first account; `owner`: only as the first account."""
        email, name = clean_email(email), (name or "").strip() or email.split("@")[0]
        check_password(password)
        password_hash = _hasher().hash(password)  # slow by design: before the transaction and its lock
        now, user_id = time.time(), _new_id()
        users = UserRow.__table__
        with self.engine.begin() as conn:
            if admin is None:
                _first_account_lock(conn)
            # "No account yet" is read by the insert itself: on SQLite one statement holds the write lock
            # from its start, so two sign-ups at once cannot both see an empty table.
            first = ~exists(select(users.c.id))
            try:
                conn.execute(users.insert().values(
                    id=user_id, email=email, name=name[:120], password_hash=password_hash,
                    is_admin=first if admin is None else admin, created_at=now))
            except IntegrityError:
                raise AccountError(f"an account with {email} exists already") from None
            is_admin = conn.execute(select(users.c.is_admin).where(users.c.id == user_id)).scalar_one()
            if owner and not is_admin:  # the transaction ends in a rollback: no account
                raise InstallOwned("this install has an owner already: sign in")
            self._insert_workspace(conn, f"{name[:100]}'s workspace", user_id, personal=True, now=now)
            joined = None if invitation is None else self._accept(conn, invitation, user_id, now)
        return User(user_id, email, name[:120], is_admin), joined

    def users(self) -> list[User]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(UserRow).order_by(UserRow.created_at)).all()
        return [User(r.id, r.email, r.name, r.is_admin) for r in rows]

    def user(self, user_id: str) -> User | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(UserRow).where(UserRow.id == user_id)).first()
        return User(row.id, row.email, row.name, row.is_admin) if row else None

    def user_by_email(self, email: str) -> User | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(UserRow).where(UserRow.email == email.strip().lower())).first()
        return User(row.id, row.email, row.name, row.is_admin) if row else None

    def set_password(self, user_id: str, password: str) -> None:
        """A new password; every session of the user ends (a reset or change signs out everywhere), and the
        addresses they signed in from are no longer known (the old password may have leaked: an intruder's too)."""
        check_password(password)
        with self.engine.begin() as conn:
            done = conn.execute(update(UserRow).where(UserRow.id == user_id)
                                .values(password_hash=_hasher().hash(password))).rowcount
            if not done:
                raise AccountError("no such account")
            conn.execute(delete(SessionRow).where(SessionRow.user_id == user_id))
            conn.execute(delete(KnownSignInAddressRow).where(KnownSignInAddressRow.user_id == user_id))

    def change_password(self, user_id: str, old: str, new: str, *, address: str | None = None) -> None:
        """A new password for someone who knows the current one. A wrong one counts against the sign-in limits of
        their email from the client's `address`: else a session left open was a way to guess the password
        without any limit."""
        user = self.user(user_id)
        if user is None:
            raise AccountError("no such account")
        try:
            self._password_checked(user.email, old, time.time(), sign_in_address(address))
        except SignInThrottled:
            raise
        except AccountError:
            raise AccountError("the current password is wrong") from None
        self.set_password(user_id, new)

    def ensure_admin(self, email: str, password: str, name: str = "Admin") -> User | None:
        """Create the owner from the environment on a fresh install; None when accounts exist already."""
        if self.has_users():
            return None
        try:
            return self.create_owner(name, email, password)
        except InstallOwned:
            return None  # another backend worker, starting at the same time, created it (or someone on /setup)
        except AccountError:
            if self.user_by_email(email) is None:
                raise
            return None  # the same: its account has this email

    # 2. Sessions -------------------------------------------------------------------------------------------

    def sign_in(self, email: str, password: str, *, address: str | None = None,
                seconds: float | None = None) -> tuple[str, User]:
        """(raw session token, user); a clear error for bad credentials or too many failed attempts.
        `address`: the client's IP address, None when there is none; a success forgets the failures of this email
        from this address only, and makes the address known for the account (KNOWN_ADDRESS_S). `seconds`: how
        long the session lasts (SESSION_SECONDS by default)."""
        email, address = (email or "").strip().lower(), sign_in_address(address)
        now = time.time()
        row = self._password_checked(email, password, now, address)
        with self.engine.begin() as conn:
            conn.execute(delete(SignInAttemptRow).where(_attempts_of(email, address)))
            _remember_address(conn, row.id, address, now)
            raw = self._new_session(conn, row.id, now, SESSION_SECONDS if seconds is None else seconds)
        return raw, User(row.id, row.email, row.name, row.is_admin)

    def forget_expired(self, now: float | None = None) -> int:
        """Delete ended sessions, failed sign-ins older than the rate limit's window (an address tried and
        never signed in would keep its rows for ever) and addresses known no more; how many rows went."""
        now = time.time() if now is None else now
        with self.engine.begin() as conn:
            sessions = conn.execute(delete(SessionRow).where(SessionRow.expires_at <= now)).rowcount
            attempts = conn.execute(delete(SignInAttemptRow).where(SignInAttemptRow.at <= now - SIGN_IN_WINDOW_S))
            known = conn.execute(delete(KnownSignInAddressRow)
                                 .where(KnownSignInAddressRow.at <= now - KNOWN_ADDRESS_S))
        return sessions + attempts.rowcount + known.rowcount

    @staticmethod
    def _new_session(conn, user_id: str, now: float, seconds: float) -> str:
        raw = secrets.token_urlsafe(32)
        conn.execute(SessionRow.__table__.insert().values(
            token_hash=_hash_token(raw), user_id=user_id, created_at=now, expires_at=now + seconds))
        return raw

    def claim_handoff(self, raw: str | None) -> str | None:
        """A full-length session for the user of a valid handoff session (one made to last at most
        HANDOFF_SECONDS), which ends: it works once. None for anything else, a full session included (a link
        holding someone's own session must not sign a visitor into their account)."""
        if not raw:
            return None
        now = time.time()
        handoff = and_(SessionRow.token_hash == _hash_token(raw), SessionRow.expires_at > now,
                       SessionRow.expires_at - SessionRow.created_at <= HANDOFF_SECONDS + 1)  # + rounding
        with self.engine.begin() as conn:
            user_id = conn.execute(select(SessionRow.user_id).where(handoff)).scalar()
            if user_id is None or conn.execute(delete(SessionRow).where(handoff)).rowcount != 1:
                return None  # unknown, expired, a full session, or another request claimed it first
            return self._new_session(conn, user_id, now, SESSION_SECONDS)

    def user_for_session(self, raw: str | None) -> User | None:
        if not raw:
            return None
        with self.engine.connect() as conn:  # a sign-in's handoff session is no session yet (see claim_handoff)
            row = conn.execute(select(UserRow).join(SessionRow, SessionRow.user_id == UserRow.id).where(
                SessionRow.token_hash == _hash_token(raw), SessionRow.expires_at > time.time(),
                SessionRow.expires_at - SessionRow.created_at > HANDOFF_SECONDS + 1)).first()
        return User(row.id, row.email, row.name, row.is_admin) if row else None

    def sign_out(self, raw: str, *, everywhere: bool = False) -> None:
        with self.engine.begin() as conn:
            if everywhere:
                user_id = conn.execute(select(SessionRow.user_id).where(
                    SessionRow.token_hash == _hash_token(raw))).scalar()
                if user_id:
                    conn.execute(delete(SessionRow).where(SessionRow.user_id == user_id))
            conn.execute(delete(SessionRow).where(SessionRow.token_hash == _hash_token(raw)))

    def _password_checked(self, email: str, password: str, now: float, address: str | None) -> Any:
        """The account row of `email` (lower-cased) when `password` is its password; else an AccountError, the
        failure kept in the database with `address` (as `sign_in_address` gave it). SignInThrottled, before any
        password is verified, when the window holds too many failures (`_throttled`; from an address known for the
        account, too many of its own there). Emails with and without an account count alike, so neither the
        limits nor their messages tell which emails have accounts."""
        if len(email) > MAX_EMAIL:  # no account has it; its row would fill the database (an event holds 1 MB)
            raise AccountError("wrong email or password")
        with self.engine.connect() as conn:
            failures = _recent_failures(conn, email, address, now)
            known = _known(conn, email, address, now)
            row = conn.execute(select(UserRow).where(UserRow.email == email)).first()
        refusal = _throttled(email, *failures, known=known)
        if refusal:
            raise SignInThrottled(refusal)
        verified = self._verify(row.password_hash if row else _unknown_account_hash(), password)
        if row is None or not verified:
            with self.engine.begin() as conn:  # its own transaction: the failure must stay counted
                conn.execute(SignInAttemptRow.__table__.insert().values(email=email, address=address, at=now))
            raise AccountError("wrong email or password")
        return row

    @staticmethod
    def _verify(password_hash: str, password: str) -> bool:
        from argon2.exceptions import VerificationError

        try:
            return _hasher().verify(password_hash, password or "")
        except (VerificationError, ValueError):
            return False

    # 3. Workspaces and members -----------------------------------------------------------------------------

    def create_workspace(self, owner_id: str, name: str) -> Workspace:
        name = (name or "").strip()
        if not name:
            raise AccountError("a workspace needs a name")
        with self.engine.begin() as conn:
            workspace_id = self._insert_workspace(conn, name, owner_id, personal=False, now=time.time())
        return Workspace(workspace_id, name[:120], False, "owner")

    def _insert_workspace(self, conn, name: str, owner_id: str, *, personal: bool, now: float) -> str:
        workspace_id = _new_id()
        conn.execute(WorkspaceRow.__table__.insert().values(
            id=workspace_id, name=name[:120], personal_of=owner_id if personal else None, created_at=now))
        conn.execute(MembershipRow.__table__.insert().values(
            workspace_id=workspace_id, user_id=owner_id, role="owner", created_at=now))
        return workspace_id

    def workspaces(self, user_id: str) -> list[Workspace]:
        """The user's workspaces, personal first, then by name."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(WorkspaceRow.id, WorkspaceRow.name, WorkspaceRow.personal_of,
                                       MembershipRow.role).join(
                MembershipRow, MembershipRow.workspace_id == WorkspaceRow.id).where(
                MembershipRow.user_id == user_id)).all()
        found = [Workspace(r.id, r.name, r.personal_of == user_id, r.role) for r in rows]
        return sorted(found, key=lambda w: (not w.personal, w.name.lower()))

    def owner_workspace_id(self) -> str | None:
        """The personal workspace of the install's first admin (where graphs made outside any workspace go)."""
        with self.engine.connect() as conn:
            return conn.execute(
                select(WorkspaceRow.id).join(UserRow, UserRow.id == WorkspaceRow.personal_of)
                .where(UserRow.is_admin.is_(True)).order_by(UserRow.created_at).limit(1)).scalar()

    def workspace_name(self, workspace_id: str) -> str:
        with self.engine.connect() as conn:
            return conn.execute(select(WorkspaceRow.name).where(WorkspaceRow.id == workspace_id)).scalar() or ""

    def personal_workspace(self, user_id: str) -> Workspace | None:
        """None only for someone removed from theirs before that was refused (see _keep_an_owner)."""
        return next((w for w in self.workspaces(user_id) if w.personal), None)

    def role(self, user_id: str | None, workspace_id: str | None) -> Role | None:
        """The user's role in the workspace; None for a non-member (or no user)."""
        if not user_id or not workspace_id:
            return None
        with self.engine.connect() as conn:
            return conn.execute(select(MembershipRow.role).where(
                MembershipRow.workspace_id == workspace_id, MembershipRow.user_id == user_id)).scalar()

    def members(self, workspace_id: str) -> list[Member]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(UserRow.id, UserRow.email, UserRow.name, MembershipRow.role,
                                       WorkspaceRow.personal_of).join(
                MembershipRow, MembershipRow.user_id == UserRow.id).join(
                WorkspaceRow, WorkspaceRow.id == MembershipRow.workspace_id).where(
                MembershipRow.workspace_id == workspace_id).order_by(UserRow.name)).all()
        return [Member(r.id, r.email, r.name, r.role, r.personal_of == r.id) for r in rows]

    def set_role(self, workspace_id: str, user_id: str, role: str) -> None:
        role = check_role(role)
        with self.engine.begin() as conn:
            self._keep_an_owner(conn, workspace_id, user_id, role)
            done = conn.execute(update(MembershipRow).where(
                MembershipRow.workspace_id == workspace_id, MembershipRow.user_id == user_id).values(role=role))
            if not done.rowcount:
                raise AccountError("not a member of this workspace")

    def remove_member(self, workspace_id: str, user_id: str) -> None:
        with self.engine.begin() as conn:
            self._keep_an_owner(conn, workspace_id, user_id, None)
            conn.execute(delete(MembershipRow).where(
                MembershipRow.workspace_id == workspace_id, MembershipRow.user_id == user_id))

    def delete_workspace(self, workspace_id: str) -> None:
        with self.engine.begin() as conn:
            if conn.execute(select(WorkspaceRow.personal_of).where(WorkspaceRow.id == workspace_id)).scalar():
                raise AccountError("a personal workspace cannot be deleted")
            conn.execute(delete(WorkspaceRow).where(WorkspaceRow.id == workspace_id))

    @staticmethod
    def _keep_an_owner(conn, workspace_id: str, user_id: str, new_role: str | None) -> None:
        # A write first, as in GraphStore._write: it locks the workspace's row (a write lock on SQLite) until the
        # transaction ends. Else two owners stepping down at once each count the other as the one who stays.
        conn.execute(update(WorkspaceRow).where(WorkspaceRow.id == workspace_id).values(id=WorkspaceRow.id))
        # A personal workspace is where its person's pages and API calls go by default: removed from it, they may
        # be in no workspace at all; demoted there, they no longer own their own.
        personal_of = conn.execute(select(WorkspaceRow.personal_of).where(WorkspaceRow.id == workspace_id)).scalar()
        if personal_of == user_id and new_role != "owner":
            raise AccountError("the person a personal workspace belongs to stays its owner")
        owners = conn.execute(select(MembershipRow.user_id).where(
            MembershipRow.workspace_id == workspace_id, MembershipRow.role == "owner")).scalars().all()
        if owners == [user_id] and new_role != "owner":
            raise AccountError("a workspace keeps at least one owner")

    # 4. Invitations ------------------------------------------------------------------------------------------

    def invite(self, workspace_id: str, role: str, created_by: str,
               expires_in_s: float = INVITATION_SECONDS) -> tuple[str, Invitation]:
        """(raw token for the link, invitation): single use, expires."""
        role, raw, now = check_role(role), secrets.token_urlsafe(32), time.time()
        invitation_id = _new_id()
        with self.engine.begin() as conn:
            conn.execute(InvitationRow.__table__.insert().values(
                id=invitation_id, token_hash=_hash_token(raw), workspace_id=workspace_id, role=role,
                created_by=created_by, created_at=now, expires_at=now + expires_in_s))
        return raw, Invitation(invitation_id, workspace_id, role, now, now + expires_in_s, None, None)

    def invitations(self, workspace_id: str) -> list[Invitation]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(InvitationRow).where(InvitationRow.workspace_id == workspace_id)
                                .order_by(InvitationRow.created_at.desc())).all()
        return [Invitation(r.id, r.workspace_id, r.role, r.created_at, r.expires_at, r.used_at, r.revoked_at)
                for r in rows]

    def revoke_invitation(self, workspace_id: str, invitation_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(InvitationRow).where(
                InvitationRow.id == invitation_id, InvitationRow.workspace_id == workspace_id,
                InvitationRow.used_at.is_(None)).values(revoked_at=time.time()))

    def invitation(self, raw: str) -> Invitation | None:
        """The pending invitation behind a link, or None (unknown, used, revoked or expired)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(InvitationRow).where(InvitationRow.token_hash == _hash_token(raw))).first()
        if row is None:
            return None
        found = Invitation(row.id, row.workspace_id, row.role, row.created_at, row.expires_at, row.used_at,
                           row.revoked_at)
        return found if found.pending else None

    def accept(self, raw: str, user_id: str) -> Workspace:
        """Join the workspace with the invitation's role; the link is used up (a second use is refused)."""
        with self.engine.begin() as conn:
            return self._accept(conn, raw, user_id, time.time())

    @staticmethod
    def _accept(conn, raw: str, user_id: str, now: float) -> Workspace:
        row = conn.execute(select(InvitationRow).where(InvitationRow.token_hash == _hash_token(raw))).first()
        # Used up in one conditional UPDATE: of two simultaneous accepts, exactly one changes the row.
        taken = row is not None and conn.execute(update(InvitationRow).where(
            InvitationRow.id == row.id, InvitationRow.used_at.is_(None), InvitationRow.revoked_at.is_(None),
            InvitationRow.expires_at > now).values(used_by=user_id, used_at=now)).rowcount == 1
        if not taken:
            raise AccountError("this invitation link is not valid any more (used, revoked or expired)")
        current = conn.execute(select(MembershipRow.role).where(
            MembershipRow.workspace_id == row.workspace_id, MembershipRow.user_id == user_id)).scalar()
        role = max(row.role, current or row.role, key=ROLES.index)  # an invitation never lowers a role
        if current is None:
            conn.execute(MembershipRow.__table__.insert().values(
                workspace_id=row.workspace_id, user_id=user_id, role=role, created_at=now))
        elif role != current:
            conn.execute(update(MembershipRow).where(
                MembershipRow.workspace_id == row.workspace_id, MembershipRow.user_id == user_id).values(role=role))
        name = conn.execute(select(WorkspaceRow.name).where(WorkspaceRow.id == row.workspace_id)).scalar_one()
        return Workspace(row.workspace_id, name, False, role)

    # 5. API tokens --------------------------------------------------------------------------------------------

    def create_api_token(self, user_id: str, workspace_id: str, name: str) -> tuple[str, ApiToken]:
        """(raw token, shown once; its record). The user must be a member of the workspace."""
        if self.role(user_id, workspace_id) is None:
            raise AccountError("not a member of this workspace")
        name = (name or "").strip() or "API token"
        raw, now, token_id = "nf_" + secrets.token_urlsafe(32), time.time(), _new_id()
        with self.engine.begin() as conn:
            conn.execute(ApiTokenRow.__table__.insert().values(
                id=token_id, token_hash=_hash_token(raw), name=name[:120], user_id=user_id,
                workspace_id=workspace_id, created_at=now))
        return raw, ApiToken(token_id, name[:120], workspace_id, now, None, None)

    def api_tokens(self, user_id: str, workspace_id: str | None = None) -> list[ApiToken]:
        query = select(ApiTokenRow).where(ApiTokenRow.user_id == user_id)
        if workspace_id:
            query = query.where(ApiTokenRow.workspace_id == workspace_id)
        with self.engine.connect() as conn:
            rows = conn.execute(query.order_by(ApiTokenRow.created_at.desc())).all()
        return [ApiToken(r.id, r.name, r.workspace_id, r.created_at, r.last_used_at, r.revoked_at) for r in rows]

    def revoke_api_token(self, user_id: str, token_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(ApiTokenRow).where(ApiTokenRow.id == token_id, ApiTokenRow.user_id == user_id)
                         .values(revoked_at=time.time()))

    def members_api_tokens(self, workspace_id: str, but: str) -> list[tuple[str, ApiToken]]:
        """(holder's name, token) of every token for `workspace_id` held by someone else than `but`: what the
        workspace's owners see and may revoke."""
        tokens = ApiTokenRow.__table__.c
        query = (select(tokens, UserRow.name.label("holder")).join(UserRow, UserRow.id == tokens.user_id)
                 .where(tokens.workspace_id == workspace_id, tokens.user_id != but)
                 .order_by(UserRow.name, tokens.created_at.desc()))
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [(r.holder, ApiToken(r.id, r.name, r.workspace_id, r.created_at, r.last_used_at, r.revoked_at))
                for r in rows]

    def revoke_workspace_api_token(self, workspace_id: str, token_id: str) -> None:
        """An owner's revocation: any member's token, but only one for this workspace."""
        with self.engine.begin() as conn:
            conn.execute(update(ApiTokenRow).where(ApiTokenRow.id == token_id,
                                                   ApiTokenRow.workspace_id == workspace_id)
                         .values(revoked_at=time.time()))

    def api_caller(self, raw: str | None) -> ApiCaller | None:
        """Who a bearer token speaks for (its user, workspace and current role); None if unknown or revoked."""
        if not raw:
            return None
        with self.engine.begin() as conn:
            row = conn.execute(select(ApiTokenRow).where(ApiTokenRow.token_hash == _hash_token(raw),
                                                         ApiTokenRow.revoked_at.is_(None))).first()
            if row is None:
                return None
            conn.execute(update(ApiTokenRow).where(ApiTokenRow.id == row.id).values(last_used_at=time.time()))
        role = self.role(row.user_id, row.workspace_id)
        user = self.user(row.user_id)
        return ApiCaller(user, row.workspace_id, role) if role and user else None


account_store = process_wide(AccountStore)
