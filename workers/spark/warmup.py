"""Warm the worker's SparkSession when the worker starts, so that its first job does not pay the
JVM's start and first use (about 10 s on 2 cores) inside a user's batch.

`start()` runs it in a thread of its own: the worker takes tasks meanwhile (the beat's passes
run), but a job waits for the warm-up to end before it claims its row (`wait()`, called by
`workers.runtime.run_job`), so it neither races the warm-up for the cores nor counts the JVM's
start in its own time. The session is the process's one (`workers.spark.session`): the warm-up
only builds it earlier. With a local master it then runs a tiny ingest-shaped job (a CSV read, a
day-partitioned Iceberg write and a read back) on a throwaway JDBC catalog in a temp folder,
which loads the classes and code paths a first ingest needs; on a cluster it builds the session
only (the executors are the cluster's). `ICEBATCH_SPARK_WARM_UP=false` turns it off.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from app.config import get_settings

if TYPE_CHECKING:  # pyspark is imported by the warm-up itself, not by the job runtime
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)
_done = threading.Event()
_done.set()  # no warm-up under way
CATALOG = "icebatch_warm_up"
CSV = "event_id,user_id,event_time\n1,u1,2024-01-01T10:00:00\n2,u2,2024-01-02T11:00:00\n"


def workload(spark: SparkSession, folder: Path) -> int:
    """A two-row CSV appended to a day-partitioned Iceberg table of a throwaway JDBC catalog
    (SQLite) in `folder`, then counted: the rows read back."""
    prefix = f"spark.sql.catalog.{CATALOG}"
    conf = {  # a JDBC catalog like the real one (its driver, its commits), on its own file
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "jdbc",
        f"{prefix}.uri": f"jdbc:sqlite:{folder / 'catalog.db'}",
        f"{prefix}.jdbc.schema-version": "V1",
        f"{prefix}.cache-enabled": "false",
        f"{prefix}.warehouse": (folder / "warehouse").as_uri(),
    }
    for key, value in conf.items():
        spark.conf.set(key, value)
    source = folder / "rows.csv"
    source.write_text(CSV)
    table = f"{CATALOG}.warm.events"
    spark.sql(
        f"CREATE TABLE {table} (event_id bigint, user_id string, event_time timestamp) "
        "USING iceberg PARTITIONED BY (days(event_time))"
    )
    frame = spark.read.options(header=True).schema(
        "event_id string, user_id string, event_time string"
    )
    rows = frame.csv(str(source)).selectExpr(
        "cast(event_id AS bigint) AS event_id",
        "user_id",
        "cast(event_time AS timestamp) AS event_time",
    )
    rows.writeTo(table).append()
    return int(spark.table(table).count())


def warm_up() -> None:
    """Build the session (and, locally, run the workload); log how long it took. A failure
    only warns: the first job builds the session as before."""
    from workers.spark.session import get_spark, on_cluster

    began = time.monotonic()
    try:
        spark = get_spark()
        if not on_cluster(get_settings()):
            folder = Path(tempfile.mkdtemp(prefix="icebatch-warm-up-"))
            try:
                workload(spark, folder)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    except Exception:
        log.warning("warming the SparkSession failed; the first job will start it", exc_info=True)
        return
    finally:
        _done.set()
    log.info("SparkSession warm after %.1f s", time.monotonic() - began)


def start() -> threading.Thread | None:
    """Warm the session in a daemon thread, unless `spark_warm_up` is off: the thread."""
    if not get_settings().spark_warm_up:
        return None
    _done.clear()
    thread = threading.Thread(target=warm_up, name="spark-warm-up", daemon=True)
    thread.start()
    return thread


def wait() -> None:
    """Return once no warm-up is under way (at once when none was started)."""
    if not _done.is_set():
        log.info("waiting for the SparkSession warm-up")
        _done.wait()
