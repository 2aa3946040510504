"""Pytest setup shared by the tests and the doctests of ``src/sparkstorm``."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _doctest_temporary_folders(request: pytest.FixtureRequest) -> Iterator[None]:
    """A doctest's ``tempfile.mkdtemp()`` folders go under its ``tmp_path``.

    The examples make their folders as a reader would (``tempfile.mkdtemp()``); without
    this, every run of the suite left them in ``/tmp``.
    """
    if type(request.node).__name__ != "DoctestItem":
        yield
        return
    folder: Path = request.getfixturevalue("tmp_path")
    previous, tempfile.tempdir = tempfile.tempdir, str(folder)
    try:
        yield
    finally:
        tempfile.tempdir = previous
