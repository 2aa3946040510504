"""PySpark's JVM view remembers its class lookups (``engine.spark.session.cache_jvm_lookups``).

A real local JVM: the cached view must answer exactly as py4j's own does, for classes,
static methods, constructors and packages, and the RDDs built through it must run.
"""

from __future__ import annotations

from typing import Any

from py4j.java_gateway import JavaClass, JavaPackage
from pyspark import SparkContext

from sparkstorm.engine.spark.session import CachedLookupJVMView, cache_jvm_lookups


def test_cached_view_answers_as_py4j_does(spark: Any) -> None:
    cache_jvm_lookups()
    view = SparkContext._jvm
    assert isinstance(view, CachedLookupJVMView)
    first = view.PythonUtils
    assert isinstance(first, JavaClass)
    assert view.PythonUtils is first  # asked of the JVM once
    assert first.toSeq is first.toSeq  # a static method: asked once too
    items = view.java.util.ArrayList()  # a package stays a package: not remembered
    items.add("a")
    seq = view.PythonUtils.toSeq(items)  # the cached member calls the JVM as before
    assert (seq.size(), seq.apply(0)) == (1, "a")
    assert isinstance(view.java, JavaPackage)
    assert view.java is not view.java


def test_cached_view_is_installed_once(spark: Any) -> None:
    cache_jvm_lookups()
    view = SparkContext._jvm
    cache_jvm_lookups()
    assert SparkContext._jvm is view


def test_rdds_built_through_the_cached_view_run(spark: Any) -> None:
    cache_jvm_lookups()
    sc = spark.sparkContext
    pairs = sc.parallelize([(n % 3, n) for n in range(30)], 2).partitionBy(3, lambda k: k)
    assert sorted(pairs.glom().map(lambda part: sorted({k for k, _ in part})).collect()) == [
        [0], [1], [2]]
