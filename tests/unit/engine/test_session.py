"""The Spark settings of the engine's own session (no JVM is started)."""

from __future__ import annotations

import pytest

from sparkstorm.engine.executor.process_memory import LEAN_MALLOC
from sparkstorm.engine.spark.session import DRIVER_JVM_OPTIONS, DRIVER_MEMORY, session_settings


def test_the_engine_chooses_the_driver_jvm_options() -> None:
    settings = session_settings({"spark.master": "local[2]"})
    assert settings["spark.driver.extraJavaOptions"] == DRIVER_JVM_OPTIONS
    assert settings["spark.master"] == "local[4]"  # overlapping windows, the default


def test_a_spark_key_overrides_the_engine_default() -> None:
    conf = {"spark.driver.extraJavaOptions": "-XX:+UseG1GC", "topology.window.overlap": False}
    settings = session_settings(conf)
    assert settings["spark.driver.extraJavaOptions"] == "-XX:+UseG1GC"
    assert settings["spark.master"] == "local[*]"


def test_a_nested_spark_conf_overrides_it_too() -> None:
    conf = {"topology.spark.conf": {"spark.driver.extraJavaOptions": "-Xss4m"}}
    assert session_settings(conf)["spark.driver.extraJavaOptions"] == "-Xss4m"


def test_the_engine_bounds_the_driver_heap_unless_told_otherwise() -> None:
    assert session_settings({})["spark.driver.memory"] == DRIVER_MEMORY == "512m"
    assert session_settings({"spark.driver.memory": "2g"})["spark.driver.memory"] == "2g"


def test_python_workers_get_the_lean_malloc_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    settings = session_settings({})
    for key, value in LEAN_MALLOC.items():
        assert settings[f"spark.executorEnv.{key}"] == value
    # an operator's own value (in the environment the JVM and its workers inherit) wins
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    assert "spark.executorEnv.MALLOC_ARENA_MAX" not in session_settings({})


def test_the_jvm_keeps_its_temporary_files_in_spark_local_dir() -> None:
    settings = session_settings({"spark.local.dir": "/w/spark-local,/disk2"})
    assert settings["spark.driver.extraJavaOptions"] == \
        f"{DRIVER_JVM_OPTIONS} -Djava.io.tmpdir=/w/spark-local"
    # the user's own temp folder for the JVM wins; without spark.local.dir nothing is added
    own = {"spark.local.dir": "/w", "spark.driver.extraJavaOptions": "-Djava.io.tmpdir=/t"}
    assert session_settings(own)["spark.driver.extraJavaOptions"] == "-Djava.io.tmpdir=/t"
    assert "java.io.tmpdir" not in session_settings({})["spark.driver.extraJavaOptions"]
