"""The Knowledge page: collections of the workspace, their documents and chunks, uploads and a search box."""

import reflex as rx

from nodeflow_app.components import dialogs
from nodeflow_app.components.forms import labelled_input
from nodeflow_app.components.header import header
from nodeflow_app.components.loading import until_loaded
from nodeflow_app.components.theme import APP_BG, BORDER, PANEL_BG
from nodeflow_app.state.knowledge_state import UPLOAD_ID, ChunkRow, CollectionRow, DocumentRow, KnowledgeState

ACCEPTED = {
    "text/plain": [".txt"], "text/markdown": [".md", ".markdown"], "text/html": [".html", ".htm"],
    "application/pdf": [".pdf"], "text/csv": [".csv"], "application/json": [".json"],
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": [".docx"],
}


def _testid(value) -> dict:
    return {"data-testid": value}


def collection_item(row: CollectionRow) -> rx.Component:
    chosen = KnowledgeState.selected == row.name
    return rx.box(
        rx.text(row.name, weight="medium", size="2"),
        rx.text(row.documents, rx.cond(row.documents == 1, " document · ", " documents · "), row.chunks,
                rx.cond(row.chunks == 1, " chunk", " chunks"), size="1", color_scheme="gray"),
        rx.text(row.embedding, size="1", color_scheme="gray"),
        on_click=KnowledgeState.select(row.name),
        padding="10px 12px",
        border_radius="var(--radius-3)",
        cursor="pointer",
        background=rx.cond(chosen, "var(--accent-a4)", "transparent"),
        _hover={"background": "var(--gray-a3)"},
        width="100%",
        custom_attrs={"data-testid": f"collection-{row.name}"},
    )


def collections_column() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.heading("Collections", size="4"),
            rx.box(flex="1"),
            rx.icon_button(rx.icon("plus", size=16), variant="soft", aria_label="New collection",
                           on_click=KnowledgeState.set_create_open(True), custom_attrs=_testid("new-collection")),
            width="100%", align="center",
        ),
        until_loaded(KnowledgeState.loaded, rx.cond(
            KnowledgeState.collections.length() > 0,
            rx.vstack(rx.foreach(KnowledgeState.collections, collection_item), spacing="1", width="100%"),
            rx.text("No collections yet. Create one, then upload files into it.", size="2", color_scheme="gray"),
        ), KnowledgeState.load_error, KnowledgeState.load, padding="24px"),
        width="280px", flex_shrink="0", padding="16px", spacing="3", border_right=BORDER, background=PANEL_BG,
        height="100%", overflow_y="auto",
    )


def upload_zone() -> rx.Component:
    return rx.vstack(
        rx.upload(
            rx.vstack(
                rx.icon("upload", size=22, color="var(--gray-10)"),
                rx.text("Drop files here or click to choose", size="2"),
                rx.text("PDF, DOCX, HTML, Markdown, text, CSV, JSON · up to 50 MB each", size="1",
                        color_scheme="gray"),
                align="center", spacing="1",
            ),
            id=UPLOAD_ID,
            multiple=True,
            accept=ACCEPTED,
            on_drop=KnowledgeState.upload(rx.upload_files_chunk(
                upload_id=UPLOAD_ID, on_upload_progress=KnowledgeState.set_upload_progress)),
            border="1px dashed var(--gray-a7)", border_radius="var(--radius-3)", padding="18px", width="100%",
            cursor="pointer", custom_attrs=_testid("knowledge-upload"),
        ),
        rx.cond(KnowledgeState.indexing.length() > 0,
                rx.vstack(
                    rx.progress(value=KnowledgeState.upload_progress, width="100%",
                                custom_attrs=_testid("upload-progress")),
                    rx.foreach(KnowledgeState.indexing,
                               lambda line: rx.text(line, size="1", custom_attrs=_testid("indexing-status"))),
                    rx.cond(KnowledgeState.busy, rx.hstack(rx.spinner(size="1"), rx.text("Indexing…", size="1"))),
                    width="100%", spacing="1")),
        width="100%", spacing="2",
    )


def document_row(row: DocumentRow) -> rx.Component:
    return rx.table.row(
        rx.table.row_header_cell(rx.link(row.source, on_click=KnowledgeState.open_document(row.source),
                                          cursor="pointer", custom_attrs={"data-testid": f"document-{row.source}"})),
        rx.table.cell(row.title),
        rx.table.cell(row.chunks),
        rx.table.cell(rx.icon_button(rx.icon("trash-2", size=14), variant="ghost", color_scheme="red",
                                     aria_label="Delete document", on_click=KnowledgeState.ask_delete(row.source),
                                     custom_attrs={"data-testid": f"delete-document-{row.source}"}),
                      text_align="right"),
        align="center",
    )


def documents_table() -> rx.Component:
    return rx.cond(
        KnowledgeState.documents.length() > 0,
        rx.table.root(
            rx.table.header(rx.table.row(rx.table.column_header_cell("Document"), rx.table.column_header_cell("Title"),
                                         rx.table.column_header_cell("Chunks", width="90px"),
                                         rx.table.column_header_cell("", width="50px"))),
            rx.table.body(rx.foreach(KnowledgeState.documents, document_row)),
            variant="surface", width="100%", custom_attrs=_testid("documents-table"),
        ),
        rx.text("No documents in this collection yet.", size="2", color_scheme="gray"),
    )


def chunk_card(row: ChunkRow) -> rx.Component:
    return rx.box(
        rx.hstack(rx.text(row.source, size="1", weight="medium"), rx.text(row.where, size="1", color_scheme="gray"),
                  rx.box(flex="1"), rx.cond(row.score != "", rx.badge(row.score, variant="soft")), width="100%"),
        rx.text(row.text, size="2", white_space="pre-wrap", margin_top="4px"),
        padding="10px 12px", border=BORDER, border_radius="var(--radius-3)", width="100%",
        custom_attrs=_testid("chunk"),
    )


def search_box() -> rx.Component:
    return rx.vstack(
        rx.form(
            rx.hstack(
                rx.input(rx.input.slot(rx.icon("search", size=16)), name="query", placeholder="Search this collection",
                         aria_label="Search this collection", default_value=KnowledgeState.query, width="100%",
                         custom_attrs=_testid("knowledge-query")),
                rx.button("Search", type="submit", variant="soft", custom_attrs=_testid("knowledge-search")),
                width="100%",
            ),
            on_submit=KnowledgeState.run_search, reset_on_submit=False, width="100%",
        ),
        rx.cond(KnowledgeState.searched,
                rx.cond(KnowledgeState.results.length() > 0,
                        rx.vstack(rx.foreach(KnowledgeState.results, chunk_card), spacing="2", width="100%",
                                  custom_attrs=_testid("search-results")),
                        rx.text("Nothing found.", size="2", color_scheme="gray"))),
        width="100%", spacing="2",
    )


def collection_view() -> rx.Component:
    return rx.cond(
        KnowledgeState.selected != "",
        rx.vstack(
            rx.hstack(
                rx.heading(KnowledgeState.selected, size="6", custom_attrs=_testid("collection-title")),
                rx.box(flex="1"),
                rx.button(rx.icon("trash-2", size=14), "Delete collection", variant="soft", color_scheme="red",
                          on_click=KnowledgeState.ask_delete(""), custom_attrs=_testid("delete-collection")),
                width="100%", align="center",
            ),
            upload_zone(),
            documents_table(),
            rx.divider(),
            search_box(),
            spacing="4", width="100%", max_width="960px", margin_x="auto", padding="24px",
        ),
        rx.center(rx.text("Create a collection to upload documents into.", color_scheme="gray"), padding="64px",
                  width="100%"),
    )


def create_dialog() -> rx.Component:
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title("New collection"),
            rx.form(
                rx.vstack(
                    labelled_input("Name", "name", testid="collection-name", placeholder="handbook", auto_focus=True),
                    rx.text("Letters, digits, - and _ (no spaces); graphs name it in their Knowledge nodes.",
                            size="1", color_scheme="gray"),
                    labelled_input("Embedding model (optional)", "embedding", testid="collection-embedding",
                                   placeholder="openai:text-embedding-3-small"),
                    rx.text("Without one, search is full text only; with one, hybrid (meaning and words).",
                            size="1", color_scheme="gray"),
                    rx.cond(KnowledgeState.create_error != "",
                            rx.text(KnowledgeState.create_error, size="2", color_scheme="red",
                                    custom_attrs=_testid("collection-error"))),
                    rx.hstack(rx.dialog.close(rx.button("Cancel", type="button", variant="soft", color_scheme="gray")),
                              rx.button("Create", type="submit", custom_attrs=_testid("collection-create")),
                              justify="end", width="100%"),
                    spacing="2",
                ),
                on_submit=KnowledgeState.create_collection, reset_on_submit=False,
            ),
            max_width="460px",
        ),
        open=KnowledgeState.create_open, on_open_change=KnowledgeState.set_create_open,
    )


def chunks_dialog() -> rx.Component:
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(KnowledgeState.chunks_source),
            rx.vstack(rx.foreach(KnowledgeState.chunks, chunk_card), spacing="2", max_height="65vh",
                      overflow_y="auto", margin_y="12px", custom_attrs=_testid("document-chunks")),
            rx.hstack(rx.dialog.close(rx.button("Close", variant="soft")), justify="end"),
            max_width="760px",
        ),
        open=KnowledgeState.chunks_open, on_open_change=KnowledgeState.set_chunks_open,
    )


def delete_dialog() -> rx.Component:
    return dialogs.delete_dialog(
        "Delete", "“", rx.cond(KnowledgeState.delete_source != "", KnowledgeState.delete_source,
                               KnowledgeState.selected),
        "” and its chunks will be deleted. This cannot be undone.",
        on_confirm=KnowledgeState.confirm_delete, open_=KnowledgeState.delete_open,
        on_open_change=KnowledgeState.set_delete_open, prefix="knowledge-")


def knowledge_page() -> rx.Component:
    return rx.vstack(
        header(),
        rx.hstack(
            collections_column(),
            # The collections column says what failed, with its Retry; this side waits for it.
            rx.box(until_loaded(KnowledgeState.loaded, collection_view(), KnowledgeState.load_error), flex="1",
                   height="100%", overflow_y="auto", background=APP_BG),
            spacing="0", width="100%", flex="1", min_height="0",
        ),
        create_dialog(), chunks_dialog(), delete_dialog(),
        spacing="0", height="100vh", width="100vw", overflow="hidden",
    )
