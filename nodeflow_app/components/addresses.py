"""A whole address with a copy button (a webhook's, the workspace's MCP endpoint): callers need the full URL, with
this site's host, as n8n shows it."""

from __future__ import annotations

import reflex as rx

MONO = "var(--code-font-family, ui-monospace, SFMono-Regular, Menlo, monospace)"


def full_url(path: rx.Var) -> rx.Var:
    """This site's origin (as the browser reached it) and `path`; the path alone until the page is hydrated: a page
    prerendered at build time (the workspace page is) has no window, and its first render in the browser must be
    the prerendered one (a mismatch made React render the page again, and a form sent meanwhile was lost)."""
    # The path's var data too: shown in the page, the Var needs the state hook the path reads from.
    return rx.cond(rx.State.is_hydrated,
                   rx.Var(_js_expr=f"(window.location.origin + {path._js_expr})", _var_type=str,
                          _var_data=path._get_all_var_data()),
                   path)


def address(label: str, path: rx.Var, testid: str, size: str = "1") -> rx.Component:
    """`label` above the whole URL of `path` (`data-testid=testid`) and its copy button (`testid-copy`)."""
    return rx.vstack(
        rx.text(label, size=size, color_scheme="gray"),
        rx.hstack(
            rx.code(full_url(path), size=size, style={"fontFamily": MONO, "wordBreak": "break-all"},
                    custom_attrs={"data-testid": testid}),
            rx.icon_button(rx.icon("copy", size=12), size="1", variant="ghost", aria_label=f"Copy the {label}",
                           on_click=rx.set_clipboard(full_url(path)), custom_attrs={"data-testid": f"{testid}-copy"}),
            align="center", spacing="2", width="100%",
        ),
        spacing="1", width="100%",
    )
