"""The connection banner: says when the page lost the server and when it is back.

It replaces Reflex's default overlay (a pulsing icon and, after two failed attempts, an error toast).
While the socket is down Reflex keeps every event the page makes in its queue and sends them, in
order, once it reconnects (state.js `processEvent` waits for a connected socket); the reconnect
also re-runs the page's on_load. So the banner can promise that edits made meanwhile are kept.
"""

from __future__ import annotations

import reflex as rx
from reflex_base.vars.base import Var, VarData
from reflex_components_core.core.banner import connect_error_var_data, has_connection_errors
from reflex_components_sonner.toast import toast_ref

BANNER_TESTID = "connection-lost"
RESTORED_TOAST_ID = "connection-restored"
RESTORED_TEXT = "Connected to the server again"


class ConnectionRestoredToast(rx.Fragment):
    """Shows a toast when the connection comes back after it was lost (nothing on the first connect)."""

    def add_hooks(self) -> list[str | Var]:
        return [
            Var("const nodeflowWasDown = useRef(false);",
                _var_data=VarData.merge(connect_error_var_data, VarData(imports={"react": ["useRef", "useEffect"]}))),
            Var(f"""useEffect(() => {{
  if (connectErrors.length > 0) {{
    nodeflowWasDown.current = true;
  }} else if (nodeflowWasDown.current) {{
    nodeflowWasDown.current = false;
    {toast_ref}?.success("{RESTORED_TEXT}", {{id: "{RESTORED_TOAST_ID}", duration: 4000,
      description: "What you did meanwhile is sent now."}});
  }}
}}, [connectErrors]);""", _var_data=toast_ref._get_all_var_data()),
        ]


def connection_banner() -> rx.Component:
    return rx.cond(
        has_connection_errors,
        rx.hstack(
            rx.spinner(size="2"),
            rx.text(rx.text.strong("Connection to the server lost. "),
                    "Reconnecting ... your edits are kept and will be sent when it is back.", size="2"),
            align="center",
            justify="center",
            spacing="3",
            position="fixed",
            top="0",
            left="0",
            right="0",
            z_index="10000",
            padding="8px 16px",
            background="var(--amber-3)",
            color="var(--amber-12)",
            border_bottom="1px solid var(--amber-7)",
            role="alert",
            custom_attrs={"data-testid": BANNER_TESTID},
        ),
    )


def _connection_status() -> rx.Component:
    return rx.fragment(connection_banner(), ConnectionRestoredToast.create())


def connection_status() -> rx.Component:
    """The app's overlay: the banner while disconnected, a toast when connected again.

    A memo component of its own, as Reflex's default overlay is: its hooks read the event loop's
    context, so they must run inside that context's provider, not in the app wrap around it."""
    from reflex_base.components.memo import memo

    return rx.fragment(memo(_connection_status)())
