"""One SparkSession per worker process, wired to the same Iceberg catalog as PyIceberg."""

from __future__ import annotations

import logging
import os
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
from py4j.protocol import Py4JError, Py4JJavaError
from pyspark import SparkContext
from pyspark.sql import DataFrame, SparkSession, SQLContext
from pyspark.sql.pandas.types import from_arrow_schema

from app.config import Settings, get_settings
from workers.outage import is_outage
from workers.spark import shipping
from workers.spark.executors import ExecutorWatch

RUNTIME_JARS = (
    "iceberg-spark-runtime-3.5_2.12-1.10.2.jar",
    "iceberg-shaded-jackson.jar",
    "sqlite-jdbc.jar",
    "postgresql.jar",
)
log = logging.getLogger(__name__)
# the JVM's log lines as JSON, like the worker's own (app/logs.py)
LOG4J2_CONFIG = Path(__file__).resolve().parent / "log4j2.properties"
_lock = threading.Lock()
_session: SparkSession | None = None
_watch: ExecutorWatch | None = None


def jar_paths(settings: Settings) -> list[str]:
    paths = [settings.spark_jars_dir / name for name in RUNTIME_JARS]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise RuntimeError(f"missing Spark jars {missing}: run scripts/setup.sh")
    return [str(p) for p in paths]


def extra_jars(settings: Settings) -> list[str]:
    return [jar.strip() for jar in settings.spark_extra_jars.split(",") if jar.strip()]


def catalog_conf(settings: Settings) -> dict[str, str]:
    """Spark settings of the Iceberg JDBC catalog named like PyIceberg's, on the same database."""
    prefix = f"spark.sql.catalog.{settings.catalog_name}"
    conf = {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "jdbc",
        f"{prefix}.uri": settings.jdbc_url,
        f"{prefix}.jdbc.schema-version": "V1",
        # PyIceberg creates the catalog tables (`icebatch migrate`). Iceberg's own check leaves
        # a metadata ResultSet open on SQLite, pinning a stale read snapshot on that pooled
        # connection: later commits then fail with SQLITE_BUSY_SNAPSHOT.
        f"{prefix}.jdbc.init-catalog-tables": "false",
        f"{prefix}.cache-enabled": "false",
        f"{prefix}.warehouse": settings.warehouse,
    }
    for key, value in settings.jdbc_properties.items():
        conf[f"{prefix}.jdbc.{key}"] = value
    return conf


def on_cluster(settings: Settings) -> bool:
    """Whether tasks run on executors apart from this process (anything but `local[...]`)."""
    return not settings.spark_master.startswith("local")


def cluster_conf(settings: Settings) -> dict[str, str]:
    """What a cluster's executors get; Icebatch's settings first, `spark_conf` over them."""
    conf = {
        "spark.executor.memory": settings.spark_executor_memory,
        "spark.executor.cores": str(settings.spark_executor_cores),
    }
    if settings.spark_cores_max:
        conf["spark.cores.max"] = str(settings.spark_cores_max)
    if settings.spark_driver_host:
        conf["spark.driver.host"] = settings.spark_driver_host
    if settings.spark_java_options:
        conf["spark.executor.extraJavaOptions"] = settings.spark_java_options
    return conf


def build_session(settings: Settings) -> SparkSession:
    """The process's SparkSession: Iceberg runtime, UTC, microsecond timestamps."""
    # Python tasks (rewrites, exports) import Icebatch: locally they run on this interpreter;
    # on a cluster, on the executors' Python (PySpark reads the variable, not a Spark setting,
    # when it starts the context)
    if settings.spark_executor_python:
        os.environ["PYSPARK_PYTHON"] = settings.spark_executor_python
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.appName("icebatch-worker")
        .master(settings.spark_master)
        .config("spark.jars", ",".join(jar_paths(settings) + extra_jars(settings)))
        .config("spark.driver.memory", settings.spark_driver_memory)
        .config(
            "spark.sql.extensions",
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        )
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        # a replay's staged files are plain Parquet written by Spark, which Iceberg reads in the
        # proleptic Gregorian calendar its own writer uses: no rebase (Spark's default refuses
        # timestamps before 1900 that an ingest of the same rows, through Iceberg, accepts)
        .config("spark.sql.parquet.datetimeRebaseModeInWrite", "CORRECTED")
        .config("spark.sql.parquet.int96RebaseModeInWrite", "CORRECTED")
        .config("spark.sql.iceberg.check-nullability", "false")
        .config("spark.sql.shuffle.partitions", str(settings.spark_shuffle_partitions))
        .config("spark.sql.adaptive.enabled", "true")
        # pandas frames cross to the JVM as Arrow, with no Python worker (small_frame)
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config(
            "spark.driver.extraJavaOptions",
            f"-Dderby.system.home=/tmp -Dlog4j2.configurationFile={LOG4J2_CONFIG.as_uri()} "
            + settings.spark_java_options,
        )
    )
    extra = cluster_conf(settings) if on_cluster(settings) else {}
    for key, value in {**catalog_conf(settings), **extra, **settings.spark_conf}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    if on_cluster(settings):
        # the jars went with `spark.jars`; Icebatch's Python goes as one content-named zip
        session.sparkContext.addPyFile(str(shipping.build()))
    return session


def get_spark() -> SparkSession:
    """The process's session, started on first use and kept for the life of the worker — or of
    its JVM: when that died (killed, out of memory), the job that was using it failed and is
    retried, and the next call starts a fresh session in a new JVM.

    The catalog of the current settings is (re)declared on each call: a catalog Spark has not
    loaded yet picks it up, which lets one test session serve several metadata stores.
    """
    global _session, _watch
    with _lock:
        settings = get_settings()
        if _session is not None and not jvm_alive():
            log.warning("the Spark JVM of this worker is gone; starting a new SparkSession")
            _discard(_session)
            _session = None
            if _watch is not None:
                _watch.stop()
                _watch = None
        if _session is None:
            _session = build_session(settings)
            if on_cluster(settings):
                _watch = ExecutorWatch(
                    _session.sparkContext, settings.spark_executor_wait_seconds
                ).start()
        for key, value in catalog_conf(settings).items():
            if _session.conf.get(key, None) != value:
                _session.conf.set(key, value)
        # the calling thread's active session (the JVM keeps one per thread): Spark resolves a
        # catalog name through it, and a thread with none, e.g. a job's when the warm-up thread
        # built the session, sees only `spark_catalog` (tests/workers/spark/test_session_threads)
        jvm: Any = _session._jvm
        jvm.org.apache.spark.sql.SparkSession.setActiveSession(_session._jsparkSession)
        _load_catalog(_session, settings.catalog_name)
        return _session


def _load_catalog(session: SparkSession, name: str) -> None:
    """Load the Iceberg catalog now, so that a metadata store outage fails here as what it is.

    Spark swallows a catalog's failure to initialize (the JDBC catalog connects to the store)
    and reads the catalog's name as a namespace of its session catalog: a job whose JVM started
    while the store was away failed on `REQUIRES_SINGLE_PART_NAMESPACE`, which the worker's
    outage handling cannot know, and spent an attempt. Loading the catalog raises the JDBC
    error. Any other failure (a store not migrated yet, as the class-data-sharing workload's)
    is left to where the catalog is used."""
    try:
        session._jsparkSession.sessionState().catalogManager().catalog(name)
    except Py4JJavaError as exc:
        if is_outage(exc):
            raise
        log.debug("the Iceberg catalog %s did not load", name, exc_info=True)


def jvm_alive() -> bool:
    """Whether the JVM behind this process's SparkContext still answers."""
    gateway = SparkContext._gateway
    if gateway is None:
        return False
    process = getattr(gateway, "proc", None)  # the java child PySpark launched
    if process is not None and process.poll() is not None:
        return False
    try:
        gateway.jvm.java.lang.System.currentTimeMillis()
    except Py4JError:
        return False
    return True


def _discard(session: SparkSession) -> None:
    """Forget a session whose JVM died, so the next builder launches a new JVM. PySpark's own
    `stop()` needs the JVM to answer; this does what it can without it."""
    context = session.sparkContext
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "unable to cleanly shutdown"
        try:
            context.stop()
        except (Py4JError, OSError):
            # py4j may raise a bare ConnectionRefusedError past PySpark's guard; its JVM
            # context is forgotten by then, so a second stop() does the Python half only
            context.stop()
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
    SQLContext._instantiatedContext = None
    gateway, SparkContext._gateway, SparkContext._jvm = SparkContext._gateway, None, None
    if gateway is not None:
        try:
            gateway.shutdown()
        except Py4JError:
            log.debug("closing the dead JVM's gateway failed", exc_info=True)
        process = getattr(gateway, "proc", None)
        if process is not None:
            process.kill()
            process.wait(timeout=30)  # reap it


def small_frame(spark: SparkSession, table: pa.Table) -> DataFrame:
    """A DataFrame of a small Arrow table built in the driver (ids, mappings): sent to the JVM
    as Arrow, where a list of rows would start Python workers to decode it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # PySpark 3.5's LooseVersion
        return spark.createDataFrame(table.to_pandas(), schema=from_arrow_schema(table.schema))
