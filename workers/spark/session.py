"""One SparkSession per worker process, wired to the same Iceberg catalog as PyIceberg."""

from __future__ import annotations

import threading

from pyspark.sql import SparkSession

from app.config import Settings, get_settings

RUNTIME_JARS = (
    "iceberg-spark-runtime-3.5_2.12-1.10.2.jar",
    "iceberg-shaded-jackson.jar",
    "sqlite-jdbc.jar",
    "postgresql.jar",
)
_lock = threading.Lock()
_session: SparkSession | None = None


def jar_paths(settings: Settings) -> list[str]:
    paths = [settings.spark_jars_dir / name for name in RUNTIME_JARS]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise RuntimeError(f"missing Spark jars {missing}: run scripts/setup.sh")
    return [str(p) for p in paths]


def build_session(settings: Settings) -> SparkSession:
    """A session whose catalog `settings.catalog_name` is the metadata store's JDBC catalog."""
    prefix = f"spark.sql.catalog.{settings.catalog_name}"
    builder = (
        SparkSession.builder.appName("icebatch-worker")
        .master(settings.spark_master)
        .config("spark.jars", ",".join(jar_paths(settings)))
        .config("spark.driver.memory", settings.spark_driver_memory)
        .config(
            "spark.sql.extensions",
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        )
        .config(prefix, "org.apache.iceberg.spark.SparkCatalog")
        .config(f"{prefix}.type", "jdbc")
        .config(f"{prefix}.uri", settings.jdbc_url)
        .config(f"{prefix}.jdbc.schema-version", "V1")
        .config(f"{prefix}.cache-enabled", "false")
        .config(f"{prefix}.warehouse", settings.warehouse)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        .config("spark.sql.iceberg.check-nullability", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", "-Dderby.system.home=/tmp")
    )
    for key, value in settings.jdbc_properties.items():
        builder = builder.config(f"{prefix}.jdbc.{key}", value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    return session


def get_spark() -> SparkSession:
    """The process's session, started on first use and kept for the life of the worker."""
    global _session
    with _lock:
        if _session is None:
            _session = build_session(get_settings())
        return _session
