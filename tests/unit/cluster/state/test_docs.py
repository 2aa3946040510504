"""The examples in the state store's docstrings run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["__init__", "base", "cluster_state", "errors", "layout", "records"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(
        "sparkstorm.cluster.state" + ("" if name == "__init__" else f".{name}"))
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
