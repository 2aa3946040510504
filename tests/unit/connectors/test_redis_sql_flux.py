"""The Redis and SQL bolts declared in a Flux file by their Python class names (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkstorm.errors import SparkstormError
from sparkstorm.flux import load_flux_file

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "flux" / "redis_sql_pipeline.yaml"


@pytest.fixture
def urls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6379/2")
    monkeypatch.setenv("DATABASE_URL", "postgresql+psycopg://app@127.0.0.1:5432/app")


@pytest.mark.usefixtures("urls")
def test_the_example_declares_both_bolts_and_their_streams_from_their_config() -> None:
    spec = load_flux_file(EXAMPLE, env_filter=True).spec
    define, save = spec.component("define"), spec.component("save")
    assert [(s.name, s.fields) for s in define.outputs] == [
        ("default", ("word", "definition")), ("errors", ("code", "error", "values"))]
    assert define.config["topology.connector"]["url"] == "redis://127.0.0.1:6379/2"
    assert save.config["topology.connector"]["columns"] == {"word": "word",
                                                            "definition": "definition"}
    assert [(i.source, i.stream) for i in spec.component("problems").inputs] == [
        ("define", "errors"), ("save", "errors")]


@pytest.mark.usefixtures("urls")
@pytest.mark.parametrize(("old", "new", "code"), [
    ('data_type: "hash"', 'data_type: "geo"', "REDIS_CONFIG_INVALID"),
    ('table: "word_definitions"', 'table: "word definitions"', "SQL_CONFIG_INVALID"),
])
def test_a_wrong_setting_is_refused_at_the_bolts_line(tmp_path: Path, old: str, new: str,
                                                      code: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace(old, new))
    with pytest.raises(SparkstormError) as caught:
        load_flux_file(bad, env_filter=True)
    assert caught.value.code == code
    assert "bad.yaml:" in str(caught.value)
