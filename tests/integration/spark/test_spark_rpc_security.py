"""Spark's own network authenticated and encrypted, on a real Spark with executor JVMs.

``local-cluster[2,1,1024]`` runs a standalone master, a worker and two executor JVMs, which
need the shared secret as a standalone cluster's do. A driver made by ``get_spark`` with
``spark.authenticate``, ``spark.network.crypto.enabled`` and the secret file runs a
shuffle between the executors (their block transfers authenticated and encrypted), while
no process of the machine has the secret on its command line. Under ``spark-submit``
(``submitted_spark``), the driver reads the same file when spark-submit turned
authentication on.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sparkstorm.tls.spark_rpc import write_spark_secret

# slow (a local-cluster starts three more JVMs: 40-80 s here): tests/unit/tls/
# test_spark_rpc.py covers who turns Spark's security on and where the secret comes from;
# tests/integration/hosts/test_tls_capture.py (slow too) captures it between hosts
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

DRIVER = textwrap.dedent("""
    import json, subprocess, sys
    from sparkstorm.engine.spark.session import get_spark, stop_spark_jvm
    from sparkstorm.testing.polling import wait_for
    conf = {"spark.master": "local-cluster[2,1,1024]", "spark.ui.enabled": False,
            "spark.executor.memory": "1g", "spark.authenticate": True,
            "spark.network.crypto.enabled": True, "storm.spark.secret.file": sys.argv[1]}
    spark, _ = get_spark(conf, "rpc-security-test")
    try:
        sc = spark.sparkContext
        status = sc._jsc.sc().getExecutorMemoryStatus
        wait_for(lambda: status().size() == 3, 120, message="the driver and two executors")
        moved = (sc.parallelize(range(4000), 4).map(lambda i: (i % 4, i))
                 .partitionBy(4, lambda key: key).glom().map(len).collect())
        seen = subprocess.run(["ps", "-eww", "-o", "args"], capture_output=True,
                              text=True).stdout
        settings = dict(sc.getConf().getAll())
        print(json.dumps({"moved": moved, "executors": status().size() - 1, "seen": seen,
                          "settings": {k: settings.get(k) for k in (
                              "spark.authenticate", "spark.network.crypto.enabled")}}))
    finally:
        stop_spark_jvm()
""")


def test_a_local_cluster_shuffles_with_the_secret_off_every_command_line(
        tmp_path: Path) -> None:
    import json

    secret = tmp_path / "spark-secret"
    write_spark_secret(secret)
    run = subprocess.run([sys.executable, "-c", DRIVER, str(secret)], capture_output=True,
                         text=True, timeout=280, check=False, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["moved"] == [1000, 1000, 1000, 1000]
    assert found["executors"] == 2, "both executor JVMs registered with the secret"
    assert found["settings"] == {"spark.authenticate": "true",
                                 "spark.network.crypto.enabled": "true"}
    assert "local-cluster" in found["seen"], "ps saw the driver's JVM"
    assert secret.read_text().strip() not in found["seen"], "the secret on a command line"


SUBMITTED = textwrap.dedent("""
    import sys
    from sparkstorm.engine.spark.session import submitted_spark
    spark = submitted_spark({"storm.spark.secret.file": sys.argv[1]}, "rpc-security-submit")
    sc = spark.sparkContext
    pairs = sc.parallelize(range(1000), 2).map(lambda i: (i % 2, 1)).reduceByKey(
        lambda a, b: a + b).collect()
    print("RESULT", sorted(pairs), sc.getConf().get("spark.authenticate"))
    spark.stop()
""")


def test_a_spark_submitted_driver_reads_the_secret_file(tmp_path: Path) -> None:
    import os

    secret = tmp_path / "spark-secret"
    write_spark_secret(secret)
    app = tmp_path / "app.py"
    app.write_text(SUBMITTED)
    spark_submit = Path(sys.executable).parent / "spark-submit"
    run = subprocess.run(
        [str(spark_submit), "--master", "local-cluster[1,1,1024]",
         "--conf", "spark.authenticate=true", "--conf", "spark.network.crypto.enabled=true",
         "--conf", "spark.ui.enabled=false",
         "--conf", f"spark.pyspark.driver.python={sys.executable}", str(app), str(secret)],
        capture_output=True, text=True, timeout=280, check=False, cwd=tmp_path,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "RESULT [(0, 500), (1, 500)] true" in run.stdout
