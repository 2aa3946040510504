"""Reading the UI's pages in the browser tests.

Cells by their API values or their text, the action dialog's question, opening a page and waiting
for its next refresh.
"""

from __future__ import annotations

import time
from typing import Any

VALUE = "c => [c.dataset.field, c.dataset.value ?? c.textContent.trim()]"
"""A cell's API value: its ``data-value`` (the text shows it formatted for people), else its
text."""


def cells(page: Any, row_selector: str) -> dict[str, str]:
    """The ``data-field`` cells of one table row, as the API values they show."""
    values = page.eval_on_selector_all(f"{row_selector} td[data-field]",
                                       f"cells => cells.map({VALUE})")
    return dict(values)


def texts(page: Any, row_selector: str) -> dict[str, str]:
    """The ``data-field`` cells of one table row, as the text people see."""
    values = page.eval_on_selector_all(
        f"{row_selector} td[data-field]",
        "cells => cells.map(c => [c.dataset.field, c.textContent.trim()])")
    return dict(values)


def cells_and_texts(page: Any, row_selector: str) -> tuple[dict[str, str], dict[str, str]]:
    """:func:`cells` and :func:`texts` of one row, read at once.

    A page refreshing between two reads would give them from two different answers.
    """
    values = page.eval_on_selector_all(
        f"{row_selector} td[data-field]",
        f"cells => cells.map(c => [c.dataset.field, ({VALUE})(c)[1], c.textContent.trim()])")
    return ({field: value for field, value, _ in values},
            {field: text for field, _, text in values})


def table(page: Any, table: str, key: str) -> dict[str, dict[str, str]]:
    """Every row of a table by its ``data-<key>``, as ``data-field`` API values."""
    rows = page.eval_on_selector_all(
        f"#{table} tbody tr", f"""rows => rows.map(r => [r.dataset.{key},
            Object.fromEntries([...r.querySelectorAll('td[data-field]')].map({VALUE}))])""")
    return dict(rows)


def question(page: Any) -> str:
    """The question of the page's action dialog (open)."""
    page.wait_for_selector("#token-dialog[open]")
    return str(page.text_content("#confirm-question"))


def open_page(page: Any, url: str) -> None:
    response = page.goto(url)
    assert response.status == 200, url
    page.wait_for_selector("body[data-refreshed]")


def fresh(page: Any) -> None:
    """Wait for a refresh of the page that ended after now.

    The page stamps ``data-refreshed`` once it has drawn an answer, so that refresh may have
    read the API just before now: callers compare inside a retry (``wait_for``).
    """
    page.wait_for_function(f"() => +document.body.dataset.refreshed > {time.time() * 1000}")
