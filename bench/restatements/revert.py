"""Part (a): revert one batch, an Icebatch tombstone commit against a Spark DELETE on the twin
tables (copy-on-write and merge-on-read, ingest and compacted layouts)."""

from __future__ import annotations

import time
from typing import Any

from bench.restatements.data import Data
from bench.restatements.lake import Lake, commit_tombstones
from bench.restatements.shared import log, timed


def spark_delete(lake: Lake, table: str, batch_id: str) -> tuple[float, str]:
    """Seconds of a Spark DELETE of one batch, and what the snapshot it made did."""
    seconds, _ = timed(
        lambda: lake.spark.sql(f"DELETE FROM {lake.name(table)} WHERE _batch_id = '{batch_id}'")
    )
    summary = lake.load(table).current_snapshot().summary
    props = summary.additional_properties if summary else {}

    def get(key: str) -> int:
        return int(props.get(key, 0))

    what = (
        f"-{get('deleted-data-files')} +{get('added-data-files')} data files, "
        f"+{get('added-position-delete-files')} delete files; rows: "
        f"{get('deleted-records'):,} removed with their files, "
        f"{get('added-position-deletes'):,} position deletes"
    )
    return seconds, what


def part_a(lake: Lake, data: Data, runs: int, twins: list[str]) -> dict[str, Any]:
    """Revert one batch per run on each table, interleaved; `twins` are the DELETE tables."""
    times: dict[str, list[float]] = {"icebatch": [], **{t: [] for t in twins}}
    effects: dict[str, str] = {}
    for run in range(runs):
        batch_id = data.batch_ids[(run * 7 + 3) % len(data.batch_ids)]
        began = time.perf_counter()
        commit_tombstones(lake, "events", "_batch_id", [batch_id], "revert")
        times["icebatch"].append(time.perf_counter() - began)
        for twin in twins:
            seconds, effects[twin] = spark_delete(lake, twin, batch_id)
            times[twin].append(seconds)
        log("  (a) run " + str(run + 1) + ": " + fmt_runs({k: v[-1:] for k, v in times.items()}))
    return {"times": times, "effects": effects}


def fmt_runs(times: dict[str, list[float]]) -> str:
    return ", ".join(f"{k} {' '.join(f'{x:.2f}' for x in v)}" for k, v in times.items())
