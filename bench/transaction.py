"""One small append's commit against the table's history: PyIceberg's own transaction (its
staged metadata deep-copied on every read) and the product's (`app/lake/transaction.py`, once
per staged state), on the same table at growing snapshot counts, in one run.

Run: `.venv/bin/python -m bench.transaction [--levels 100,300,600] [--runs 9]`.
The table is a dataset's (bench.common: its schema, day partitions) in a SQLite catalog; each
commit appends one file of 10 rows, as a small batch's commit does (the file is written before
the clock starts). At each level the two transactions alternate, `--runs` commits each; the
median seconds and the ratio are printed.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.manifest import DataFile
from pyiceberg.table import Table

from app.lake import tables
from app.lake.transaction import begin
from app.lake.types import schema_from_specs
from bench import common
from bench.common import DAY, SCHEMA, work_dir
from workers.uploads import small


def _files(table: Table, first: int) -> list[DataFile]:
    """10 rows of one day written as the small-batch path writes them (not timed)."""
    users = pa.array([f"user_{i:05d}" for i in range(100)])
    events = common.events(10, first, users, 1, np.random.default_rng(first))
    return small.data_files(table, events, f"b{first}")


def _append(open_transaction: Callable[[Table], Any], table: Table, first: int) -> float:
    """The seconds of one commit of a small batch's file, as `small.append` commits it."""
    files = _files(table, first)
    began = time.perf_counter()
    with open_transaction(table) as transaction:
        update = transaction.update_snapshot(snapshot_properties={"icebatch.operation": "ingest"})
        with update.fast_append() as producer:
            for data_file in files:
                producer.append_data_file(data_file)
    return time.perf_counter() - began


def run(folder: Path, levels: list[int], runs: int) -> None:
    catalog = SqlCatalog(
        "bench", uri=f"sqlite:///{folder}/c.db", warehouse=(folder / "wh").as_uri()
    )
    schema = schema_from_specs(list(SCHEMA))
    table = tables.create_table(catalog, "bench.events", schema, list(DAY))
    first = 0
    print(f"{'snapshots':>9} {'pyiceberg s':>12} {'icebatch s':>11} {'ratio':>6}", flush=True)
    for level in levels:
        while len(table.snapshots()) < level:
            _append(begin, table, first)
            first += 10
        plain, ours = [], []
        for _ in range(runs):
            plain.append(_append(Table.transaction, table, first))
            ours.append(_append(begin, table, first + 10))
            first += 20
        p, o = statistics.median(plain), statistics.median(ours)
        print(f"{len(table.snapshots()):>9} {p:>12.3f} {o:>11.3f} {p / o:>5.1f}×", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    common.machine_line("none (PyIceberg only)")
    with work_dir("icebatch-bench-transaction-", args.keep) as folder:
        run(folder, args.levels or [100, 300, 600], args.runs)


if __name__ == "__main__":
    main()
