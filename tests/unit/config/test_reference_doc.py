"""docs/configuration.md is what scripts/config_reference.py makes of config/keys.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from sparkstorm.config.keys import KEYS

ROOT = Path(__file__).resolve().parents[3]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "config_reference", ROOT / "scripts" / "config_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_configuration_md_is_current() -> None:
    expected = _script().render()
    assert (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8") == expected, (
        "docs/configuration.md is not what src/sparkstorm/config/keys.py generates; run "
        "make docs and commit docs/configuration.md")


def test_every_key_is_in_the_reference_once_under_a_group() -> None:
    script = _script()
    text = script.render()
    for name in KEYS:
        assert text.count(f"| `{name}` |") == 1, name
    groups = script.groups()
    assert len(groups) > 5, "the groups come from keys.py's '# --- group ---' comments"
    assert sum(len(keys) for _, keys in groups) == len(KEYS)
