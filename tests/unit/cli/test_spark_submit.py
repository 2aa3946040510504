"""``sparkstorm spark-submit``: the command line it prints, without running Spark.

Every test runs it with ``--dry-run`` (or builds the submission alone) and reads the
command line it printed; the code zip it names must hold the topology's folder.
"""

from __future__ import annotations

import shlex
import stat
import sys
import zipfile
from pathlib import Path

import pytest

from sparkstorm.cli.main import main
from sparkstorm.cli.pack_env import LEFT_OUT, dependencies, sparkstorm_source
from sparkstorm.cli.spark_submit import app_file, find_spark_submit, python_confs
from sparkstorm.spark_app.errors import SparkAppError

ROOT = Path(__file__).resolve().parents[3]
TOPOLOGY = ROOT / "tests" / "chaos" / "topology" / "chaos.py"


@pytest.fixture
def spark_submit(tmp_path: Path) -> Path:
    """A stand-in spark-submit: the dry runs print its path, never run it."""
    path = tmp_path / "bin" / "spark-submit"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\nexit 3\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def _dry_run(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["spark-submit", "--dry-run", *argv]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    return shlex.split(out[-1])


def test_client_mode_ships_code_and_environment_and_keeps_the_driver_s_python(
        tmp_path: Path, spark_submit: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "env.tar.gz"
    archive.write_bytes(b"")
    staging = tmp_path / "staging"
    command = _dry_run(capsys, str(TOPOLOGY), "--master", "spark://a:7077", "--archive",
                       str(archive), "--spark-submit", str(spark_submit), "--staging",
                       str(staging), "-c", "chaos.count=10", "-c", "spark.executor.cores=3",
                       "-c", "topology.workers=2", "--", "--queue", "q1")
    command = [c for c in command if "=" not in c or not c.startswith("SPARK_HOME=")]
    assert command[0] == str(spark_submit)
    app = command.index(str(app_file()))
    spark, ours = command[:app], command[app + 1:]
    assert spark[spark.index("--master") + 1] == "spark://a:7077"
    assert spark[spark.index("--deploy-mode") + 1] == "client"
    assert spark[spark.index("--archives") + 1] == f"{archive}#sparkstorm-env"
    confs = [spark[i + 1] for i, c in enumerate(spark) if c == "--conf"]
    assert "spark.pyspark.python=./sparkstorm-env/bin/python" in confs
    assert any(c.startswith("spark.pyspark.driver.python=") for c in confs)
    assert "spark.executor.cores=3" in confs
    assert spark[-2:] == ["--queue", "q1"], "what follows -- goes to spark-submit as is"
    code = Path(spark[spark.index("--py-files") + 1])
    assert code.parent == staging and zipfile.ZipFile(code).namelist() == ["chaos.py"]
    assert ours[0] == str(TOPOLOGY)
    assert ours[ours.index("--code") + 1] == code.name
    topology_conf = [ours[i + 1] for i, c in enumerate(ours) if c == "-c"
                     and not ours[i + 1].startswith("storm.spark.secret.file=")]  # this host's
    assert topology_conf == ["chaos.count=10", "topology.workers=2"], "spark.* went to --conf"
    assert app_file().name == "__main__.py" and app_file().is_file()


def test_cluster_mode_names_the_topology_inside_the_shipped_code(
        tmp_path: Path, spark_submit: Path, capsys: pytest.CaptureFixture[str]) -> None:
    command = _dry_run(capsys, str(TOPOLOGY), "--deploy-mode", "cluster", "--spark-submit",
                       str(spark_submit), "--staging", str(tmp_path / "s"))
    ours = command[command.index(str(app_file())) + 1:]
    assert ours[0] == "chaos.py"
    assert not any(c.startswith("spark.pyspark.driver.python") for c in command)


def test_without_an_archive_it_says_what_the_executors_need(
        tmp_path: Path, spark_submit: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spark-submit", str(TOPOLOGY), "--spark-submit", str(spark_submit),
                 "--staging", str(tmp_path / "s"), "--dry-run"]) == 0
    captured = capsys.readouterr()
    assert "--archives" not in captured.out
    assert "no --archive" in captured.err


def test_a_missing_archive_or_spark_submit_is_an_error(
        tmp_path: Path, spark_submit: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spark-submit", str(TOPOLOGY), "--archive", str(tmp_path / "none.tgz"),
                 "--spark-submit", str(spark_submit), "--dry-run"]) == 2
    assert "ENV_ARCHIVE_NOT_FOUND" in capsys.readouterr().err
    with pytest.raises(SparkAppError) as caught:
        find_spark_submit(str(tmp_path / "no-spark-submit"))
    assert caught.value.code == "SPARK_SUBMIT_NOT_FOUND"


def test_an_invalid_topology_is_refused_before_anything_is_shipped(
        tmp_path: Path, spark_submit: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spark-submit", str(tmp_path / "missing.py"), "--spark-submit",
                 str(spark_submit), "--staging", str(tmp_path / "s"), "--dry-run"]) == 2
    assert "TOPOLOGY_FILE_NOT_FOUND" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_the_packed_environment_leaves_pyspark_to_spark() -> None:
    wanted = [d.split(">")[0].split("<")[0].split("=")[0].strip().lower()
              for d in dependencies()]
    assert "msgpack" in wanted and not set(LEFT_OUT) & set(wanted)
    assert Path(sparkstorm_source(), "src", "sparkstorm").is_dir(), "this checkout"


def test_which_python_the_driver_and_the_executors_run() -> None:
    shipped = python_confs({}, "env.tgz", cluster=False, master="yarn")
    assert shipped == ["--archives", "env.tgz#sparkstorm-env",
                       "--conf", "spark.pyspark.python=./sparkstorm-env/bin/python",
                       "--conf", f"spark.pyspark.driver.python={sys.executable}"]
    assert python_confs({}, None, cluster=False, master="local[2]") == [
        "--conf", f"spark.pyspark.python={sys.executable}",
        "--conf", f"spark.pyspark.driver.python={sys.executable}"], "one machine: ours"
    assert python_confs({}, None, cluster=True, master="yarn") == [], "the cluster's own"
    assert python_confs({"spark.pyspark.python": "/opt/py", "spark.pyspark.driver.python":
                         "/opt/py"}, None, cluster=False, master="local") == [], "-c wins"


def test_the_code_zip_leaves_out_staging_folders_inside_the_code(
        tmp_path: Path, spark_submit: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "chaos.py").write_text(TOPOLOGY.read_text())
    (code / "sparkstorm-submit-old").mkdir()  # an earlier dry run's folder
    (code / "sparkstorm-submit-old" / "env.tar.gz").write_bytes(b"x" * 100)
    (code / "here").mkdir()
    monkeypatch.chdir(code)
    command = _dry_run(capsys, "chaos.py", "--staging", "here", "--spark-submit",
                       str(spark_submit))
    shipped = Path(command[command.index("--py-files") + 1])
    assert shipped.parent == code / "here"
    assert zipfile.ZipFile(shipped).namelist() == ["chaos.py"]
