"""A level's full scans: the service's dataset through Icebatch's readers (`read_dataset` in
Spark, `visible.row_batches` in PyArrow) and through plain Spark SQL (Iceberg's own reader, no
Icebatch code), against a twin table written from the model with the hidden rows physically
absent. Every result must equal the twin's (rows, and in Spark the sum of row hashes)."""

from __future__ import annotations

import shutil
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.restatements.lake import Lake, append, create
from bench.restatements.reads import arrow_scan, spark_scan
from bench.restatements.shared import log, timed
from bench.scale.service import Service
from bench.scale.workload import Workload


def write_twin(lake: Lake, workload: Workload, name: str, folder: Path) -> float:
    """The twin: one append per base batch (its visible rows) and one of the live side rows."""

    def write() -> None:
        create(lake, name)
        for path in workload.twin_files(folder):
            append(lake, name, path, None)

    seconds, _ = timed(write)
    shutil.rmtree(folder, ignore_errors=True)
    return seconds


def full_scans(
    lake: Lake, svc: Service, workload: Workload, level: int, work: Path, runs: int
) -> dict[str, Any]:
    """Best of `runs` (interleaved) of each reader at the current snapshot and of the twin."""
    from app.lake import visible
    from workers.spark.read import read_dataset

    twin = f"absent_{level}"
    twin_seconds = write_twin(lake, workload, twin, work / f"twin-{level}")
    table = svc.table()
    snapshot = table.current_snapshot()
    at = snapshot.snapshot_id
    name = f"{lake.catalog_name}.{svc.identifier}"
    planning: list[float] = []  # read_dataset's own work before Spark's scan (Python)

    def icebatch_spark() -> tuple[int, int]:
        seconds, frame = timed(lambda: read_dataset(lake.spark, name, at, catalog=lake.catalog))
        planning.append(seconds)
        return spark_scan(frame)

    sides: dict[str, Callable[[], tuple[int, int]]] = {
        "icebatch spark": icebatch_spark,
        "plain spark sql": lambda: spark_scan(
            lake.spark.sql(f"SELECT * FROM {name} VERSION AS OF {at}")
        ),
        "absent spark": lambda: spark_scan(lake.spark.table(lake.name(twin))),
        "icebatch arrow": lambda: arrow_scan(svc.table(), snapshot),
        "absent arrow": lambda: arrow_scan(lake.load(twin), lake.load(twin).current_snapshot()),
    }
    times: dict[str, list[float]] = {side: [] for side in sides}
    results: dict[str, tuple[int, int]] = {}
    order = list(sides)
    for run in range(runs):
        for side in order if run % 2 == 0 else order[::-1]:
            seconds, results[side] = timed(sides[side])
            times[side].append(seconds)
    twin_table = lake.load(twin)  # its files: the layout the scans are compared with
    twin_files = len(visible.plan(twin_table, twin_table.current_snapshot()))
    lake.spark.sql(f"DROP TABLE {lake.name(twin)} PURGE")
    expected = results["absent spark"]
    for side in ("icebatch spark", "plain spark sql"):
        if results[side] != expected:
            raise RuntimeError(f"level {level}: {side} read {results[side]} != twin {expected}")
    if (
        results["icebatch arrow"][0] != results["absent arrow"][0]
        or expected[0] != results["absent arrow"][0]
    ):
        raise RuntimeError(
            f"level {level}: arrow read {results['icebatch arrow'][0]} rows, twin "
            f"{results['absent arrow'][0]}, twin in Spark {expected[0]}"
        )
    best = {side: min(values) for side, values in times.items()}
    log(
        f"  full scans ({expected[0]:,} rows; the twin in {twin_files} data files): "
        + ", ".join(f"{side} {seconds:.2f}s" for side, seconds in best.items())
        + f" (read_dataset before the scan: median {statistics.median(planning):.3f}s)"
    )
    return {
        "rows": expected[0],
        "snapshot_id": at,
        "times": times,
        "best": best,
        "twin_write": twin_seconds,
        "twin_files": twin_files,
        "read_dataset_planning": planning,
    }
