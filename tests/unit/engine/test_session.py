"""The Spark settings of the engine's own session (no JVM is started)."""

from __future__ import annotations

from sparkstorm.engine.session import DRIVER_JVM_OPTIONS, session_settings


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
