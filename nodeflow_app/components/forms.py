"""Form pieces shared by pages."""

import reflex as rx


def labelled_input(label: str, name: str, kind: str = "text", *, testid: str, **props) -> rx.Component:
    """An input under its label, tied to it (`for`/`id`): screen readers name the input, a click on the label focuses
    it. `testid` is also the element id: one per page."""
    return rx.vstack(
        rx.el.label(rx.text(label, size="2", weight="medium"), html_for=testid),
        rx.input(name=name, id=testid, type=kind, width="100%", custom_attrs={"data-testid": testid}, **props),
        spacing="1", width="100%",
    )
