"""Spark's own network: the standalone secret, and who turns authentication on where.

Spark itself is not started here: ``tests/integration/hosts/test_tls_capture.py`` (slow)
checks on the test hosts that Spark's traffic is encrypted and that a standalone master
refuses an application without its secret; ``tests/integration/spark/
test_spark_rpc_security.py`` (slow) runs a local-cluster with the secret off the command line.
"""

from __future__ import annotations

import shlex
import stat
from pathlib import Path

import pytest

from sparkstorm.cli.main import main
from sparkstorm.cli.spark_submit import app_file, spark_security
from sparkstorm.engine.spark.session import shared_secret
from sparkstorm.errors import ConfigError
from sparkstorm.tls.material import make_material
from sparkstorm.tls.spark_rpc import (
    SECRET_FILE_KEY,
    cluster_worker_settings,
    load_or_create_spark_secret,
    read_spark_secret,
    spark_secret_file,
)

ROOT = Path(__file__).resolve().parents[3]
TOPOLOGY = ROOT / "tests" / "chaos" / "topology" / "chaos.py"
STANDALONE = "spark://m:7077"


def test_the_cluster_material_holds_a_private_spark_secret(tmp_path: Path) -> None:
    make_material(tmp_path / "tls", ["10.0.0.1"])
    conf = {"storm.tls.dir": str(tmp_path / "tls")}
    path = spark_secret_file(conf)
    assert path == tmp_path / "tls" / "spark-secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(read_spark_secret(conf)) == 64, "32 random bytes, hex"


def test_a_missing_or_empty_secret_is_a_clear_error(tmp_path: Path) -> None:
    conf = {SECRET_FILE_KEY: str(tmp_path / "spark-secret")}
    with pytest.raises(ConfigError) as caught:
        read_spark_secret(conf)
    assert caught.value.code == "SPARK_SECRET_MISSING"
    (tmp_path / "spark-secret").write_text("\n")
    with pytest.raises(ConfigError) as caught:
        read_spark_secret(conf)
    assert caught.value.code == "SPARK_SECRET_MISSING"


def test_nimbus_makes_the_secret_once_but_never_an_explicitly_named_one(
        tmp_path: Path) -> None:
    conf = {"storm.tls.dir": str(tmp_path / "tls")}
    first = load_or_create_spark_secret(conf).read_text()
    assert load_or_create_spark_secret(conf).read_text() == first, "kept, as the token"
    named = {SECRET_FILE_KEY: str(tmp_path / "operators-secret")}
    assert not load_or_create_spark_secret(named).exists()


def test_tls_spark_secret_adds_the_secret_to_older_material(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "tls"
    folder.mkdir()
    assert main(["tls", "spark-secret", "--dir", str(folder)]) == 0
    secret = (folder / "spark-secret").read_text()
    assert main(["tls", "spark-secret", "--dir", str(folder)]) == 0
    assert (folder / "spark-secret").read_text() == secret
    assert "kept" in capsys.readouterr().out


def test_a_tls_cluster_worker_turns_spark_security_on_by_master() -> None:
    host = {"storm.tls.dir": "/etc/sparkstorm/tls"}
    assert cluster_worker_settings({"spark.master": STANDALONE}, host) == {
        "spark.authenticate": True, "spark.network.crypto.enabled": True,
        SECRET_FILE_KEY: "/etc/sparkstorm/tls/spark-secret"}
    assert cluster_worker_settings({"spark.master": "k8s://h:443"}, host) == {
        "spark.authenticate": True, "spark.network.crypto.enabled": True}
    assert cluster_worker_settings({"spark.master": "local[2]"}, host) == {}
    # the topology's own choice wins: off, or a secret of its own
    assert cluster_worker_settings({"spark.master": STANDALONE, "spark.authenticate": False,
                                    "spark.authenticate.secret": "s"}, host) == {
        "spark.network.crypto.enabled": True}


def test_the_session_reads_the_secret_only_for_a_shared_secret_master(tmp_path: Path) -> None:
    (tmp_path / "s").write_text("the-secret\n")
    conf = {SECRET_FILE_KEY: str(tmp_path / "s")}
    on = {"spark.authenticate": "true"}
    assert shared_secret(conf, {**on, "spark.master": STANDALONE}) == "the-secret"
    assert shared_secret(conf, {**on, "spark.master": "local-cluster[2,1,512]"}) == "the-secret"
    assert shared_secret(conf, {**on, "spark.master": "yarn"}) is None, "YARN makes its own"
    assert shared_secret(conf, {"spark.master": STANDALONE}) is None, "authentication off"
    assert shared_secret(conf, {**on, "spark.master": STANDALONE,
                                "spark.authenticate.secret": "given"}) is None


def test_spark_submit_turns_spark_security_on_and_passes_the_secret_by_path(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_material(tmp_path / "tls", [])
    spark_submit = tmp_path / "spark-submit"
    spark_submit.write_text("#!/bin/sh\nexit 3\n")
    spark_submit.chmod(0o755)
    assert main(["spark-submit", "--dry-run", str(TOPOLOGY), "--master", STANDALONE,
                 "--spark-submit", str(spark_submit), "--staging", str(tmp_path / "s"),
                 "-c", f"storm.tls.dir={tmp_path / 'tls'}"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()[-1]
    command = shlex.split(printed)
    spark, ours = (command[:command.index(str(app_file()))],
                   command[command.index(str(app_file())) + 1:])
    confs = [spark[i + 1] for i, arg in enumerate(spark) if arg == "--conf"]
    assert {"spark.authenticate=true", "spark.network.crypto.enabled=true"} <= set(confs)
    assert f"{SECRET_FILE_KEY}={tmp_path / 'tls' / 'spark-secret'}" in ours
    assert (tmp_path / "tls" / "spark-secret").read_text().strip() not in printed


def test_spark_submit_leaves_spark_security_alone_where_it_must() -> None:
    on = {"storm.tls.enabled": True, SECRET_FILE_KEY: "/nonexistent/spark-secret"}
    assert spark_security({}, "local[*]", on) == ([], [], [])
    assert spark_security({}, None, on) == ([], [], []), "spark-submit's defaults decide"
    assert spark_security({}, STANDALONE, {**on, "storm.tls.enabled": False}) == ([], [], [])
    assert spark_security({"spark.authenticate": False}, STANDALONE, on) == ([], [], [])
    confs, passed, notes = spark_security({}, STANDALONE, on)
    assert passed == [] and "spark-defaults.conf" in notes[0], "no file here: a note"
