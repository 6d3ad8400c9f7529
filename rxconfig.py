"""Reflex configuration. Every key can be overridden by REFLEX_<KEY> (REFLEX_DB_URL, REFLEX_REDIS_URL...)."""

import os

import reflex as rx

from nodeflow_app.settings import DEFAULT_DB_URL, ensure_data_dir

ensure_data_dir()

config = rx.Config(
    app_name="nodeflow_app",
    telemetry_enabled=False,
    db_url=DEFAULT_DB_URL,
    show_built_with_reflex=False,
    # SPEC 11: in-process state by default. Reflex's own default (disk) pickles each tab's state
    # on the event loop, ~100 ms for a 1,000-node graph. With REFLEX_REDIS_URL, Reflex picks Redis.
    **({} if os.environ.get("REFLEX_REDIS_URL") else {"state_manager_mode": rx.constants.StateManagerMode.MEMORY}),
    # The sitemap plugin is on by default; NodeFlow is an app, not a site.
    disable_plugins=[rx.plugins.SitemapPlugin],
    plugins=[
        rx.plugins.RadixThemesPlugin(
            theme=rx.theme(appearance="dark", accent_color="violet", gray_color="slate", radius="medium"),
        ),
    ],
)
