"""The workspace page: members and roles, invitation links (owners), team workspaces, your API tokens;
and the invitation page a link opens."""

import reflex as rx

from nodeflow_app.components.addresses import address
from nodeflow_app.components.forms import labelled_input
from nodeflow_app.components.header import header
from nodeflow_app.components.loading import until_loaded
from nodeflow_app.components.theme import APP_BG, BORDER, PANEL_BG
from nodeflow_app.state.auth_state import AuthState
from nodeflow_app.state.workspace_state import EXPIRIES, InvitationView, MemberRow, TokenView, WorkspaceState

ROLES = ["viewer", "editor", "owner"]


def _testid(value) -> dict:
    return {"data-testid": value}


def _section(title: str, *children: rx.Component) -> rx.Component:
    return rx.vstack(rx.heading(title, size="4"), *children, spacing="3", width="100%", padding="20px",
                     background=PANEL_BG, border=BORDER, border_radius="var(--radius-4)")


def member_row(member: MemberRow) -> rx.Component:
    owner = (AuthState.role == "owner") & ~member.personal  # nobody leaves their own personal workspace
    return rx.table.row(
        rx.table.cell(member.name), rx.table.cell(member.email),
        rx.table.cell(rx.cond(
            owner,
            rx.select(ROLES, value=member.role, on_change=lambda role: WorkspaceState.set_role(member.user_id, role),
                      size="1", custom_attrs={"data-testid": f"role-{member.email}",
                                              "aria-label": f"Role of {member.email}"}),
            rx.badge(member.role, variant="soft"))),
        rx.table.cell(rx.cond(owner, rx.icon_button(rx.icon("user-minus", size=14), variant="ghost", color_scheme="red",
                                                    aria_label="Remove member",
                                                    on_click=WorkspaceState.remove_member(member.user_id),
                                                    custom_attrs={"data-testid": f"remove-{member.email}"}))),
        custom_attrs={"data-testid": f"member-{member.email}"},
    )


def invitation_row(invitation: InvitationView) -> rx.Component:
    return rx.table.row(
        rx.table.cell(rx.badge(invitation.role, variant="soft")), rx.table.cell(invitation.expires),
        rx.table.cell(invitation.status),
        rx.table.cell(rx.cond(invitation.status == "pending",
                              rx.button("Revoke", size="1", variant="soft", color_scheme="red",
                                        on_click=WorkspaceState.revoke_invitation(invitation.id),
                                        custom_attrs=_testid("revoke-invitation")))),
    )


def token_row(token: TokenView) -> rx.Component:
    return rx.table.row(
        rx.table.cell(token.name), rx.table.cell(token.created), rx.table.cell(token.last_used),
        rx.table.cell(rx.cond(token.revoked, rx.text("revoked", color_scheme="gray", size="2"),
                              rx.button("Revoke", size="1", variant="soft", color_scheme="red",
                                        on_click=WorkspaceState.revoke_token(token.id)))),
        custom_attrs={"data-testid": f"token-{token.name}"},
    )


def member_token_row(token: TokenView) -> rx.Component:
    return rx.table.row(
        rx.table.cell(token.holder), rx.table.cell(token.name), rx.table.cell(token.created),
        rx.table.cell(token.last_used),
        rx.table.cell(rx.cond(token.revoked, rx.text("revoked", color_scheme="gray", size="2"),
                              rx.button("Revoke", size="1", variant="soft", color_scheme="red",
                                        on_click=WorkspaceState.revoke_member_token(token.id),
                                        custom_attrs=_testid("revoke-member-token")))),
        custom_attrs={"data-testid": f"member-token-{token.name}"},
    )


def members_tokens_section() -> rx.Component:
    return rx.box(_section(
        "Members' API tokens",
        rx.text("Tokens the other members made for this workspace; revoke one to cut its access at once.", size="2",
                color_scheme="gray"),
        rx.cond(WorkspaceState.member_tokens.length() > 0,
                rx.table.root(rx.table.body(rx.foreach(WorkspaceState.member_tokens, member_token_row)),
                              width="100%"),
                rx.text("None yet.", size="2", color_scheme="gray")),
    ), width="100%", custom_attrs=_testid("members-tokens"))


def shown_once(value, label: str, testid: str) -> rx.Component:
    return rx.cond(value != "", rx.callout(
        rx.vstack(rx.text(label, size="2"),
                  rx.code(value, custom_attrs=_testid(testid), style={"word_break": "break-all"}),
                  rx.button("Copy", size="1", variant="soft", on_click=rx.set_clipboard(value)), spacing="1"),
        color_scheme="green", width="100%"))


def invitations_section() -> rx.Component:
    return _section(
        "Invite people",
        rx.form(rx.hstack(
            # rx.select gives its trigger (the button a screen reader names) only `custom_attrs`
            rx.select(ROLES, default_value="viewer", name="role",
                      custom_attrs={"data-testid": "invite-role", "aria-label": "Role"}),
            rx.select(list(EXPIRIES), default_value="7 days", name="expiry",
                      custom_attrs={"aria-label": "Link expires after"}),
            rx.button("Create invitation link", type="submit", custom_attrs=_testid("invite-create")),
        ), on_submit=WorkspaceState.invite, reset_on_submit=False),
        shown_once(WorkspaceState.new_link, "Send this link (single use; shown once):", "invite-link"),
        rx.table.root(rx.table.body(rx.foreach(WorkspaceState.invitations, invitation_row)), width="100%"),
    )


def workspace_sections() -> rx.Component:
    """Members, invitations, API tokens, a new team: once the page's lists loaded."""
    return rx.vstack(
        _section("Members", rx.table.root(rx.table.body(rx.foreach(WorkspaceState.members, member_row)),
                                          width="100%", custom_attrs=_testid("members"))),
        rx.cond(AuthState.role == "owner", invitations_section()),
        _section(
            "API tokens",
            rx.text("For the HTTP API and the MCP endpoint, acting as you in this workspace.", size="2",
                    color_scheme="gray"),
            address("MCP endpoint", "/api/mcp/" + AuthState.workspace_id, "mcp-url", size="2"),
            rx.text(rx.link("API reference", href="/api/v1/docs", is_external=True), " · ",
                    rx.code("Authorization: Bearer <token>"), size="2", color_scheme="gray"),
            rx.form(rx.hstack(rx.input(name="name", placeholder="Token name", aria_label="Token name",
                                       custom_attrs=_testid("token-name")),
                              rx.button("Create token", type="submit", custom_attrs=_testid("token-create"))),
                    on_submit=WorkspaceState.create_token),
            shown_once(WorkspaceState.new_token, "Your new token (shown once):", "token-value"),
            rx.table.root(rx.table.body(rx.foreach(WorkspaceState.tokens, token_row)), width="100%"),
        ),
        rx.cond(AuthState.role == "owner", members_tokens_section()),
        _section(
            "New team workspace",
            rx.form(rx.hstack(rx.input(name="name", placeholder="Team name", aria_label="Team name",
                                       custom_attrs=_testid("team-name")),
                              rx.button("Create", type="submit", custom_attrs=_testid("team-create"))),
                    on_submit=WorkspaceState.create_workspace),
        ),
        spacing="4", width="100%",
    )


def workspace_page() -> rx.Component:
    return rx.vstack(
        header(),
        rx.box(rx.vstack(
            rx.heading(AuthState.workspace_name, size="6", custom_attrs=_testid("workspace-title")),
            rx.text("Your role: ", AuthState.role, size="2", color_scheme="gray"),
            until_loaded(WorkspaceState.loaded, workspace_sections(), WorkspaceState.load_error, WorkspaceState.load),
            spacing="4", width="100%", max_width="900px", margin_x="auto", padding="32px 24px",
        ), flex="1", width="100%", overflow_y="auto", background=APP_BG),
        spacing="0", height="100vh", width="100vw", overflow="hidden",
    )


def invitation_page() -> rx.Component:
    field = lambda label, name, kind="text": labelled_input(label, name, kind, testid=f"invite-{name}")  # noqa: E731
    return rx.center(rx.vstack(
        rx.heading("Join ", WorkspaceState.invite_workspace, size="5", custom_attrs=_testid("invite-title")),
        rx.cond(WorkspaceState.message != "", rx.callout(WorkspaceState.message, color_scheme="red", width="100%",
                                                         custom_attrs=_testid("invite-error"))),
        rx.cond(  # only a valid link offers to join (open_invitation names its workspace): a dead one, no sign-up
            WorkspaceState.invite_workspace != "",
            rx.cond(
                AuthState.user_name != "",
                rx.button("Join as ", AuthState.user_name, on_click=WorkspaceState.accept(None),
                          custom_attrs=_testid("invite-accept")),
                rx.form(rx.vstack(
                    rx.text("New here? Make an account; have one? Give its email and password.", size="2",
                            color_scheme="gray"),
                    field("Name", "name"), field("Email", "email", "email"),
                    field("Password", "password", "password"),
                    rx.button("Join", type="submit", width="100%", custom_attrs=_testid("invite-accept")),
                    spacing="2", width="100%"), on_submit=WorkspaceState.accept, reset_on_submit=False,
                    width="100%"),
            ),
        ),
        spacing="3", width="400px", padding="28px", background=PANEL_BG, border=BORDER,
        border_radius="var(--radius-4)"), height="100vh", width="100vw", background=APP_BG)
