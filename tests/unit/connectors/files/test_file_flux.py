"""The file connectors declared in Flux files by their Python class names (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkstorm.errors import SparkstormError
from sparkstorm.flux import load_flux_file

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "flux" / "files_pipeline.yaml"


def test_the_example_declares_the_spout_and_the_sink_from_their_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FILES_ROOT", str(tmp_path))
    spec = load_flux_file(EXAMPLE, env_filter=True).spec
    events, out = spec.component("events"), spec.component("out")
    assert events.outputs[0].fields == ("user", "event")  # the spout's fields
    assert events.par == 2
    assert events.config["topology.connector"]["source_dir"] == f"{tmp_path}/in"
    assert events.config["topology.connector"]["lock_dir"] == f"{tmp_path}/in/.lock"
    assert out.config["topology.connector"]["extension"] == ".csv"
    assert out.component.endswith("FileBolt")


def test_a_flux_file_with_a_wrong_setting_is_refused_at_its_line(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    monkeypatch.setenv("FILES_ROOT", str(tmp_path))
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace('format: "csv"', 'format: "xml"'))
    with pytest.raises(SparkstormError) as caught:
        load_flux_file(bad, env_filter=True)
    assert caught.value.code == "FILE_CONFIG_INVALID"
    assert "bad.yaml:" in str(caught.value) and "'out'" in str(caught.value)
    missing = tmp_path / "missing.yaml"
    missing.write_text(EXAMPLE.read_text().replace("bad_dir:", "unused_dir:"))
    with pytest.raises(SparkstormError) as caught:
        load_flux_file(missing, env_filter=True)
    assert caught.value.code == "FILE_CONFIG_INVALID"
