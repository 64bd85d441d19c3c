"""Restatement costs: Icebatch tombstones against Spark Iceberg DELETE and physically absent rows.

Run: `.venv/bin/python -m bench.restatements [--batches 50] [--rows-per-batch 100000]
[--duration 60] [--rate 200[,200:16,40]] [--parts abcd] [--quick]`.

One run, one fresh PostgreSQL database (the Iceberg JDBC/SQL catalog) and one temp warehouse;
the tables are written like Icebatch's ingest writes them (`create_table`, one Spark append per
batch with `_batch_id` set: hash-distributed by day, sorted by (day, _batch_id)):
  (a) revert one batch: an Icebatch tombstone commit (`app.lake.commit.commit`, catalog load
      included) against `DELETE FROM t WHERE _batch_id = ...` on twin tables in copy-on-write
      and merge-on-read mode, with the ingest layout (one append per batch) and with a compacted
      layout (all rows in one append: files span every batch);
  (b) a full-scan aggregate with 0 / 1k / 10k / 100k active GDPR tombstones against a twin table
      written without the hidden rows (Spark `read_dataset` and the PyArrow `visible.row_batches`
      path); every result is checked equal to the twin's (row count and sum of row hashes);
  (c) tombstone commit latency (commits of 10 tombstones) at 1k and at 100k active tombstones,
      on two tables with the same data files and the same number of snapshots;
  (d) the real service (PostgreSQL, Redis, `icebatch api` + `icebatch worker`): GDPR requests
      (1-3 user ids) at each RATE[:IN_FLIGHT] for `--duration` s; accepted (202) per second and
      the time from each 202 until its tombstones are in the table's current snapshot.
Baselines and Icebatch run in the same process, interleaved, best of `--runs`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import httpx
import numpy as np
import psycopg
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

T = TypeVar("T")
ICEBATCH = str(Path(sys.executable).with_name("icebatch"))
PG = os.environ.get("ICEBATCH_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
REDIS = os.environ.get("ICEBATCH_BENCH_REDIS", "redis://127.0.0.1:6379")
START = np.datetime64("2026-01-01T00:00:00", "us").astype(np.int64)
DAYS, USERS, UNIVERSE, NS = 4, 100_000, 1_000_000, "bench"
LEVELS = (0, 1_000, 10_000, 100_000)
DIAG = 10_000  # the level of part (b)'s diagnostic reads
ALPHABET = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _", "u1")
ARROW_SCHEMA = pa.schema(
    [pa.field("event_id", pa.int64(), nullable=False), ("user_id", pa.string())]
    + [("event_time", pa.timestamp("us")), ("payload", pa.string())]
)
COLUMNS = ["event_id", "user_id", "event_time", "payload", "_batch_id"]
SCHEMA = [{"name": "event_id", "type": "long", "required": True}] + [
    {"name": n, "type": t}
    for n, t in (("user_id", "string"), ("event_time", "timestamp"), ("payload", "string"))
]
DAY = [{"column": "event_time", "transform": "day"}]
DATASET = {"name": "events", "schema": SCHEMA, "partition": DAY, "identity_columns": ["user_id"]}
MODES = {
    "cow": "copy-on-write",
    "mor": "merge-on-read",
}
BEGAN = time.perf_counter()


def log(message: str) -> None:
    print(f"[{time.perf_counter() - BEGAN:7.1f}s] {message}", flush=True)


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    began = time.perf_counter()
    value = fn()
    return time.perf_counter() - began, value


def pct(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) by the nearest-rank rule; nan when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(np.ceil(q * len(ordered))) - 1))]


# ---------------------------------------------------------------- data


@dataclass
class Data:
    """The generated batches (Parquet files without `_batch_id`) and the identity universe."""

    folder: Path
    files: list[Path]
    batch_ids: list[str]
    identities: list[str]  # the org's identities; the first USERS of them have rows here
    order: np.ndarray  # the order in which tombstones are added (a permutation of identities)

    def tombstoned(self, count: int) -> list[str]:
        return [self.identities[i] for i in self.order[:count]]

    def hidden_users(self, count: int) -> list[str]:
        """The users with rows among the first `count` tombstoned identities."""
        return [self.identities[i] for i in self.order[:count] if i < USERS]


def make_identities(seed: int) -> list[str]:
    """UNIVERSE distinct ids like `u0f3a…`, random so that any subset spans the whole range."""
    rng = np.random.default_rng(seed)
    raw = np.unique(rng.integers(0, 2**60, int(UNIVERSE * 1.01), dtype=np.int64))
    rng.shuffle(raw)
    return [f"u{x:015x}" for x in raw[:UNIVERSE].tolist()]


def events(rows: int, first_id: int, users: pa.Array, rng: np.random.Generator) -> pa.Table:
    """`rows` events of the data users, `DAYS` days of event_time, an 80-120 byte payload."""
    user_idx = pa.array(rng.integers(0, len(users), rows, dtype=np.int32))
    micros = START + rng.integers(0, DAYS * 86_400_000_000, rows, dtype=np.int64)
    offsets = np.zeros(rows + 1, np.int32)
    np.cumsum(rng.integers(80, 121, rows, dtype=np.int32), out=offsets[1:])
    chars = ALPHABET[rng.integers(0, len(ALPHABET), int(offsets[-1]), dtype=np.uint8)]
    columns = {
        "event_id": pa.array(np.arange(first_id, first_id + rows, dtype=np.int64)),
        "user_id": users.take(user_idx),
        "event_time": pa.array(micros, pa.timestamp("us")),
        "payload": pa.StringArray.from_buffers(rows, pa.py_buffer(offsets), pa.py_buffer(chars)),
    }
    return pa.table(columns, schema=ARROW_SCHEMA)


def generate(folder: Path, batches: int, rows: int, seed: int) -> Data:
    folder.mkdir(parents=True)
    identities = make_identities(seed)
    users = pa.array(identities[:USERS])
    rng = np.random.default_rng(seed + 1)
    files = []
    for i in range(batches):
        path = folder / f"batch-{i:03d}.parquet"
        pq.write_table(events(rows, i * rows, users, rng), path)
        files.append(path)
    batch_ids = [str(uuid.UUID(bytes=rng.bytes(16), version=4)) for _ in range(batches)]
    order = rng.permutation(UNIVERSE)
    return Data(folder, files, batch_ids, identities, order)


def without_users(data: Data, hidden: list[str], folder: Path) -> list[Path]:
    """The batch files minus the rows of `hidden` users (the twin with rows physically absent)."""
    folder.mkdir(parents=True)
    drop = pa.array(hidden, pa.string())
    out = []
    for path in data.files:
        table = pq.read_table(path)
        kept = table.filter(pc.invert(pc.is_in(table["user_id"], value_set=drop)))
        pq.write_table(kept, folder / path.name)
        out.append(folder / path.name)
    return out


# ---------------------------------------------------------------- infrastructure


def create_database(prefix: str) -> str:
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name


def drop_database(name: str) -> None:
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def redis_database() -> Iterator[int]:
    """A Redis database number nobody else uses now (the tests' lock protocol, same keys)."""
    import redis

    client = redis.Redis.from_url(REDIS)
    for number in range(15, 1, -1):
        lock = f"icebatch-test-lock-{number}"
        if client.set(lock, os.getpid(), nx=True, ex=3600):
            break
    else:
        raise RuntimeError("no free Redis database")
    redis.Redis.from_url(f"{REDIS}/{number}").flushdb()
    try:
        yield number
    finally:
        redis.Redis.from_url(f"{REDIS}/{number}").flushdb()
        client.delete(lock)


def start(argv: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("ab") as out:
        return subprocess.Popen(
            argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM each process we started, then SIGKILL its group (the worker's Spark JVM)."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# ---------------------------------------------------------------- (a)-(c): the lake, in process


@dataclass
class Lake:
    spark: Any
    catalog: Any
    catalog_name: str

    def name(self, table: str) -> str:
        return f"{self.catalog_name}.{NS}.{table}"

    def load(self, table: str) -> Any:
        return self.catalog.load_table(f"{NS}.{table}")


def open_lake(home: Path, database: str) -> Lake:
    os.environ["ICEBATCH_HOME"] = str(home)
    os.environ["ICEBATCH_DATABASE_URL"] = f"{PG}/{database}"
    from app.cli import migrate
    from app.config import get_settings
    from app.lake.catalog import get_catalog
    from workers.spark.session import build_session

    migrate()
    settings = get_settings()
    return Lake(build_session(settings), get_catalog(), settings.catalog_name)


def create(lake: Lake, table: str, properties: dict[str, str] | None = None) -> Any:
    from app.lake.tables import create_table
    from app.lake.types import schema_from_specs

    created = create_table(lake.catalog, f"{NS}.{table}", schema_from_specs(SCHEMA), DAY)
    if properties:
        with created.transaction() as transaction:
            transaction.set_properties(properties)
    return created


def append(lake: Lake, table: str, path: Path, batch_id: str) -> None:
    """One batch as one append, as Icebatch's ingest writes it (hash by day, sorted by batch)."""
    from pyspark.sql import functions as F

    frame = lake.spark.read.parquet(str(path)).select(
        "event_id",
        "user_id",
        F.col("event_time").cast("timestamp_ntz").alias("event_time"),
        "payload",
        F.lit(batch_id).alias("_batch_id"),
    )
    writer = frame.writeTo(lake.name(table))
    writer = writer.option("snapshot-property.icebatch.operation", "ingest")
    writer.option("snapshot-property.icebatch.batch-id", batch_id).append()


def delete_modes(mode: str) -> dict[str, str]:
    return {f"write.{op}.mode": MODES[mode] for op in ("delete", "update", "merge")}


def file_stats(lake: Lake, table: str) -> str:
    files = lake.spark.sql(
        f"SELECT count(*) AS n, avg(record_count) AS r, sum(file_size_in_bytes) AS b "
        f"FROM {lake.name(table)}.data_files"
    ).collect()[0]
    return f"{files['n']} files, {files['r']:,.0f} rows/file, {files['b'] / 1e6:,.0f} MB"


@dataclass
class Levels:
    """Snapshots of the base table at 0, 1k, 10k, 100k active tombstones, and commit timings."""

    snapshots: dict[int, int] = field(default_factory=dict)  # level -> snapshot id
    commit_small: dict[int, list[float]] = field(default_factory=dict)  # level -> load+commit s
    commit_only: dict[int, list[float]] = field(default_factory=dict)  # level -> commit s
    history: int = 0  # snapshots of each table when part (c) starts
    commit_empty: dict[int, list[float]] = field(default_factory=dict)  # level -> load+commit s
    build_seconds: float = 0.0


def commit_tombstones(
    lake: Lake, table_name: str, namespace: str, ids: list[str], request: str
) -> tuple[float, float]:
    """Load the table and commit `ids` as tombstones of `namespace` (none: a commit that only
    adds a snapshot); seconds of load + commit, and of the commit alone."""
    from app.lake.commit import commit
    from app.lake.tombstones import NewTombstone

    began = time.perf_counter()
    table = lake.load(table_name)
    field_id = table.schema().find_field(namespace).field_id
    operation = "revert" if namespace == "_batch_id" else "gdpr"
    new = [NewTombstone(field_id, value, request, operation) for value in ids]
    props = {"icebatch.operation": operation, "icebatch.request-id": request}
    seconds, _ = timed(lambda: commit(table, files=[], new_tombstones=new, properties=props))
    return time.perf_counter() - began, seconds


def build_levels(lake: Lake, data: Data, chunk: int, small: int, count: int) -> Levels:
    """Commit GDPR tombstones on the base table in `chunk`s up to each level, recording the
    level's snapshot. Tombstones follow `data.order`, so level n's set is exactly the first n
    identities of it (the twins drop those identities' rows).

    Part (c) compares commits at 1k and 100k active tombstones with nothing else different:
    `low` is registered on the base table's metadata before any tombstone (same data files and
    manifests), gets the first 1k tombstones, then commits without tombstones until it has as
    many snapshots as the base table. Then `count` commits of `small` new tombstones go to each
    table, alternating, so both histories grow in step."""
    levels, done = Levels(), 0
    base = lake.load("events")
    levels.snapshots[0] = base.current_snapshot().snapshot_id
    low = lake.catalog.register_table(f"{NS}.low", base.metadata_location)
    with low.transaction() as transaction:  # its first metadata files are the base table's too
        transaction.set_properties({"write.metadata.delete-after-commit.enabled": "false"})
    began = time.perf_counter()
    for level in LEVELS[1:]:
        while done < level:
            take = min(chunk, level - done)
            ids = data.tombstoned(done + take)[done:]
            commit_tombstones(lake, "events", "user_id", ids, "build")
            done += take
        levels.snapshots[level] = lake.load("events").current_snapshot().snapshot_id
    levels.build_seconds = time.perf_counter() - began
    commit_tombstones(lake, "low", "user_id", data.tombstoned(LEVELS[1]), "build")
    while len(lake.load("low").snapshots()) < len(lake.load("events").snapshots()):
        commit_tombstones(lake, "low", "user_id", [], "pad")
    levels.history = len(lake.load("events").snapshots())
    for level in (LEVELS[1], LEVELS[-1]):
        levels.commit_small[level], levels.commit_only[level] = [], []
    for k in range(count):
        ids = data.tombstoned(done + small)[done:]
        done += small
        order = [("low", LEVELS[1]), ("events", LEVELS[-1])]
        for name, level in order if k % 2 == 0 else order[::-1]:
            whole, only = commit_tombstones(lake, name, "user_id", ids, "latency")
            levels.commit_small[level].append(whole)
            levels.commit_only[level].append(only)
        for name, level in order:  # control: a commit that adds a snapshot and no tombstone
            levels.commit_empty.setdefault(level, []).append(
                commit_tombstones(lake, name, "user_id", [], "control")[0]
            )
    return levels


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


def spark_scan(frame: Any) -> tuple[int, int]:
    """Materialize every column: row count and a sum of row hashes (equal rows, equal sums)."""
    from pyspark.sql import functions as F

    row = frame.agg(
        F.count(F.lit(1)).alias("n"), F.sum(F.xxhash64(*[F.col(c) for c in COLUMNS])).alias("h")
    ).collect()[0]
    return int(row["n"]), int(row["h"] or 0)


def arrow_scan(table: Any, snapshot: Any) -> tuple[int, int]:
    """Every column of every visible row through `visible.row_batches`: rows and bytes."""
    from app.lake import visible

    _, batches = visible.row_batches(table, snapshot)
    rows = size = 0
    for batch in batches:
        rows += batch.num_rows
        size += batch.nbytes
    return rows, size


def part_b(lake: Lake, levels: Levels, runs: int, arrow_runs: int) -> dict[str, Any]:
    """Full scans at each level: Icebatch (tombstones) vs the twin without the hidden rows."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from app.lake import visible as lake_visible
    from workers.spark.read import TID, _ids, read_dataset

    spark, out = lake.spark, {}
    base = lake.name("events")

    def ice_spark(level: int) -> Callable[[], tuple[int, int]]:
        snap = levels.snapshots[level]
        return lambda: spark_scan(read_dataset(spark, base, as_of=snap, catalog=lake.catalog))

    def plan_spark(level: int) -> Callable[[], tuple[int, int]]:
        """read_dataset's own work before Spark runs anything: load the table, build the
        tombstone filter, plan the files and pick those whose bounds may hold a tombstone."""
        snap = levels.snapshots[level]
        return lambda: (read_dataset(spark, base, as_of=snap, catalog=lake.catalog), (0, 0))[1]

    def twin_spark(level: int) -> Callable[[], tuple[int, int]]:
        if level == 0:
            query = f"SELECT * FROM {base} VERSION AS OF {levels.snapshots[0]}"
            return lambda: spark_scan(spark.sql(query))
        return lambda: spark_scan(spark.table(lake.name(f"absent_{level}")))

    def ice_arrow(level: int) -> Callable[[], tuple[int, int]]:
        def run() -> tuple[int, int]:
            table = lake.load("events")
            return arrow_scan(table, table.snapshot_by_id(levels.snapshots[level]))

        return run

    def twin_arrow(level: int) -> Callable[[], tuple[int, int]]:
        def run() -> tuple[int, int]:
            if level == 0:
                table = lake.load("events")
                return arrow_scan(table, table.snapshot_by_id(levels.snapshots[0]))
            table = lake.load(f"absent_{level}")
            return arrow_scan(table, table.current_snapshot())

        return run

    def with_file() -> tuple[int, int]:
        """Diagnostic: the plain scan plus Iceberg's `_file` metadata column, which
        read_dataset selects to join each row to its file's sequence number."""
        frame = spark.sql(f"SELECT *, _file FROM {base} VERSION AS OF {levels.snapshots[DIAG]}")
        row = frame.agg(
            F.count(F.lit(1)).alias("n"),
            F.sum(F.xxhash64(*[F.col(c) for c in [*COLUMNS, "_file"]])).alias("h"),
        ).collect()[0]
        return int(row["n"]), 0

    def anti_only() -> tuple[int, int]:
        """Diagnostic: the plain scan left-anti joined with the broadcast tombstone ids alone,
        no `_file` column and no per-file sequence join: valid here because every tombstone is
        newer than every data file (the case of a fast path)."""
        table = lake.load("events")
        snapshot = table.snapshot_by_id(levels.snapshots[DIAG])
        filt = lake_visible.tombstone_filter(table, snapshot)
        ns = next(n for n in filt.namespaces if n.column == "user_id")
        ids = _ids(spark, ns.ids, ns.max_seq, T.StringType()).select(TID)
        frame = spark.sql(f"SELECT * FROM {base} VERSION AS OF {levels.snapshots[DIAG]}")
        return spark_scan(frame.join(F.broadcast(ids), frame["user_id"] == ids[TID], "left_anti"))

    for engine, ice, twin, count in (
        ("spark", ice_spark, twin_spark, runs),
        ("arrow", ice_arrow, twin_arrow, arrow_runs),
    ):
        if count <= 0:
            continue
        times: dict[tuple[int, str], list[float]] = {}
        results: dict[tuple[int, str], tuple[int, int]] = {}
        for run in range(count):
            for level in LEVELS:
                pair = [("icebatch", ice(level)), ("absent", twin(level))]
                if engine == "spark":
                    pair.append(("planning", plan_spark(level)))
                if engine == "spark" and level == DIAG:
                    pair += [("scan + _file", with_file), ("anti join only", anti_only)]
                for side, fn in pair if run % 2 == 0 else pair[::-1]:
                    seconds, results[(level, side)] = timed(fn)
                    times.setdefault((level, side), []).append(seconds)
            log(f"  (b) {engine} run {run + 1} done")
        if engine == "spark" and results[(DIAG, "anti join only")] != results[(DIAG, "absent")]:
            raise RuntimeError("(b) the anti-join-only diagnostic read other rows")
        for level in LEVELS:
            ice_result, twin_result = results[(level, "icebatch")], results[(level, "absent")]
            # Spark: equal row counts and equal sums of row hashes; Arrow: equal row counts
            same = (
                ice_result == twin_result if engine == "spark" else ice_result[0] == twin_result[0]
            )
            if not same:
                raise RuntimeError(
                    f"(b) {engine} at {level}: tombstoned read {ice_result} != twin {twin_result}"
                )
        out[engine] = {"times": times, "rows": {lv: results[(lv, "absent")][0] for lv in LEVELS}}
    return out


def run_lake(args: argparse.Namespace, data: Data, work: Path, database: str) -> dict[str, Any]:
    lake = open_lake(work / "home", database)
    try:
        return lake_parts(args, data, work, lake)
    finally:
        lake.spark.stop()
        with contextlib.suppress(Exception):
            lake.catalog.engine.dispose()


def lake_parts(args: argparse.Namespace, data: Data, work: Path, lake: Lake) -> dict[str, Any]:
    parts, out = args.parts, dict[str, Any]()
    tables: dict[str, list[Path]] = {"events": data.files}
    if "a" in parts:
        tables |= {f"batch_{m}": data.files for m in MODES}
    if "b" in parts:
        for level in LEVELS[1:]:
            hidden = data.hidden_users(level)
            tables[f"absent_{level}"] = without_users(data, hidden, work / f"absent-{level}")
    log(f"writing {len(tables)} tables x {len(data.files)} appends: {', '.join(tables)}")
    setup = time.perf_counter()
    for name in tables:
        create(lake, name, delete_modes(name[-3:]) if name.startswith("batch_") else None)
    for i, batch_id in enumerate(data.batch_ids):
        for name, files in tables.items():
            append(lake, name, files[i], batch_id)
        if (i + 1) % 10 == 0:
            log(f"  appended batch {i + 1}/{len(data.batch_ids)}")
    twins = [f"batch_{m}" for m in MODES] if "a" in parts else []
    if "a" in parts and args.compacted:
        for mode in MODES:
            create(lake, f"compact_{mode}", delete_modes(mode))
            frame = lake.spark.table(lake.name("events")).select(*COLUMNS)
            frame.writeTo(lake.name(f"compact_{mode}")).append()
            twins.append(f"compact_{mode}")
    out["setup_seconds"] = time.perf_counter() - setup
    out["layout"] = {name: file_stats(lake, name) for name in [*tables, *twins]}
    for name, stats in out["layout"].items():
        log(f"  {name}: {stats}")
    levels = build_levels(lake, data, args.build_chunk, args.small_commit, args.commits)
    out["levels"] = levels
    log(
        f"(c) commits of {args.small_commit} at 1k: median "
        f"{statistics.median(levels.commit_small[LEVELS[1]]):.3f}s, at 100k: median "
        f"{statistics.median(levels.commit_small[LEVELS[-1]]):.3f}s "
        f"(levels built in {levels.build_seconds:.1f}s)"
    )
    if "a" in parts:
        log("(a) revert one batch: Icebatch tombstone vs Spark DELETE on the twins")
        out["a"] = part_a(lake, data, args.runs, twins)
    if "b" in parts:
        log("(b) full scans: tombstones vs rows physically absent")
        out["b"] = part_b(lake, levels, args.runs, args.arrow_runs)
    return out


# ---------------------------------------------------------------- (d): the service over HTTP


@dataclass
class Request:
    values: list[str]
    due: float = 0.0
    sent: float = 0.0
    answered: float = 0.0
    status: int = 0  # 0: still queued in the client when the window closed; -1: HTTP error
    job_id: str = ""
    error: str = ""


class Observer(threading.Thread):
    """Polls the catalog row of the table; on each new metadata location, reads the tombstone
    list and records when each tombstone id was first seen in the current snapshot."""

    def __init__(self, catalog: Any, database_url: str, identifier: str, every: float) -> None:
        super().__init__(name="observer", daemon=True)
        self.catalog, self.identifier, self.every = catalog, identifier, every
        self.database_url = database_url
        self.first_seen: dict[str, float] = {}
        self.segments: set[str] = set()
        self.commits: list[dict[str, Any]] = []
        self.halt = threading.Event()

    def run(self) -> None:
        from app.lake import tombstones

        namespace, table = self.identifier.split(".")
        query = (
            "SELECT metadata_location FROM iceberg_tables "
            "WHERE table_namespace = %s AND table_name = %s"
        )
        last: str | None = None
        seen_snapshots: set[int] = set()
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            while not self.halt.is_set():
                row = conn.execute(query, (namespace, table)).fetchone()
                now = time.perf_counter()
                if row and row[0] != last:
                    last = row[0]
                    loaded = self.catalog.load_table(self.identifier)
                    for snap in loaded.snapshots():
                        if snap.snapshot_id in seen_snapshots:
                            continue
                        seen_snapshots.add(snap.snapshot_id)
                        props = snap.summary.additional_properties if snap.summary else {}
                        if props.get("icebatch.operation") == "gdpr":
                            self.commits.append(props)
                    location = tombstones.list_location(loaded, loaded.current_snapshot())
                    listed = tombstones.read_list(loaded.io, location)
                    for segment in listed.segments:
                        if segment.path in self.segments:
                            continue
                        self.segments.add(segment.path)
                        ids = tombstones.read_segment(loaded.io, segment.path).column("id")
                        for value in ids.to_pylist():
                            self.first_seen.setdefault(value, now)
                self.halt.wait(self.every)


async def fire(
    urls: list[str],
    key: str,
    dataset_id: str,
    requests: list[Request],
    rate: float,
    cap: int,
    duration: float,
) -> None:
    """Open loop: request i is due at i / rate, at most `cap` in flight (round robin over the
    API processes); a request still waiting for a slot when `duration` is over is not sent."""
    limits = httpx.Limits(max_connections=cap, max_keepalive_connections=cap)
    headers = {"Authorization": f"Bearer {key}"}
    gate = asyncio.Semaphore(cap)
    clients = [
        httpx.AsyncClient(base_url=u, headers=headers, timeout=60, limits=limits) for u in urls
    ]
    began = time.perf_counter()

    async def one(i: int, request: Request) -> None:
        async with gate:
            if time.perf_counter() > began + duration:
                return
            request.sent = time.perf_counter()
            body = {"dataset_ids": [dataset_id], "column": "user_id", "values": request.values}
            try:
                response = await clients[i % len(clients)].post("/v1/privacy/jobs", json=body)
            except httpx.HTTPError as exc:
                request.status, request.error = -1, type(exc).__name__
                return
            request.answered = time.perf_counter()
            request.status = response.status_code
            if response.status_code == 202:
                request.job_id = response.json()["id"]
            else:
                request.error = response.text[:200]

    try:
        tasks = []
        for i, request in enumerate(requests):
            request.due = began + i / rate
            delay = request.due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(i, request)))
        await asyncio.gather(*tasks)
    finally:
        for client in clients:
            await client.aclose()


def upload_batches(client: httpx.Client, dataset_id: str, groups: list[list[Path]]) -> float:
    """Ingest each group of files as one batch through the API; total seconds."""
    began = time.perf_counter()
    for files in groups:
        batch = client.post("/v1/batches", json={"dataset_id": dataset_id, "format": "parquet"})
        batch_id = batch.raise_for_status().json()["id"]
        for path in files:
            with path.open("rb") as handle:
                client.put(f"/v1/batches/{batch_id}/files/{path.name}", content=handle.read())
        client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"}).raise_for_status()
        deadline = time.monotonic() + 600
        while (state := client.get(f"/v1/batches/{batch_id}").json())["status"] not in (
            "success",
            "failed",
        ):
            if time.monotonic() > deadline:
                raise TimeoutError(f"batch {batch_id} did not finish")
            time.sleep(0.2)
        if state["status"] != "success":
            raise RuntimeError(f"batch {batch_id} failed: {state.get('errors')}")
    return time.perf_counter() - began


def wait_until(check: Callable[[], bool], what: str, procs: list[Any], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if any(p.poll() is not None for p in procs):
            raise RuntimeError(f"a process exited while waiting for {what}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.2)


def pending_jobs(database_url: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")
        return int(row.fetchone()[0])  # type: ignore[index]


def job_latencies(database_url: str, privacy_ids: set[str]) -> dict[str, Any]:
    """Per privacy job: its dataset job's finished_at - the privacy job's created_at (both
    written by the service, same clock), and the jobs' states."""
    query = (
        "SELECT p.id, j.state, EXTRACT(EPOCH FROM j.finished_at - p.created_at) "
        "FROM privacy_jobs p JOIN restatements r ON r.privacy_job_id = p.id "
        "JOIN jobs j ON j.id = r.job_id"
    )
    with psycopg.connect(database_url) as conn:
        rows = [r for r in conn.execute(query).fetchall() if r[0] in privacy_ids]
    done = [float(r[2]) for r in rows if r[2] is not None and r[1] == "succeeded"]
    states: dict[str, int] = {}
    for r in rows:
        states[r[1]] = states.get(r[1], 0) + 1
    return {"seconds": done, "states": states}


def cpu_seconds(groups: dict[int, str]) -> dict[str, float]:
    """CPU seconds (user + system) so far of our process groups (a group holds the worker's
    JVM too), of this process, and of every postgres and redis-server process."""
    tick = os.sysconf("SC_CLK_TCK")
    out = dict.fromkeys([*groups.values(), "bench client", "postgres", "redis"], 0.0)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        comm = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        seconds = (int(fields[11]) + int(fields[12])) / tick
        group = int(fields[2])
        if group in groups:
            out[groups[group]] += seconds
        elif int(entry.name) == os.getpid():
            out["bench client"] += seconds
        elif comm in ("postgres", "redis-server"):
            out["postgres" if comm == "postgres" else "redis"] += seconds
    return out


def machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


TASK_DONE = re.compile(r"Task icebatch\.restate\[[^\]]+\] succeeded in ([0-9.eE-]+)s")


def worker_tasks(text: str) -> dict[str, float]:
    """From the worker's log: restate tasks, the seconds they took, and the tasks that took
    over 20 ms (those that committed a group; the others found their job already done)."""
    took = [float(m) for m in TASK_DONE.findall(text)]
    long = [t for t in took if t > 0.02]
    return {
        "tasks": len(took),
        "task_seconds": sum(took),
        "long_tasks": len(long),
        "long_seconds": sum(long),
        "skipped": text.count("is not queued"),
    }


@dataclass
class Service:
    """The running service of part (d) and what its runs share."""

    urls: list[str]
    key: str
    dataset_id: str
    identifier: str
    database_url: str
    procs: list[subprocess.Popen[bytes]]
    groups: dict[int, str]
    worker_log: Path
    observer: Observer
    users: Iterator[int]
    rng: np.random.Generator


def load_run(
    svc: Service, data: Data, rate: float, duration: float, cap: int, drain: float
) -> dict[str, Any]:
    """Fire GDPR requests at `rate` for `duration` seconds; wait for every job; the figures."""
    total = int(rate * duration)
    requests = [
        Request([data.identities[next(svc.users)] for _ in range(int(svc.rng.integers(1, 4)))])
        for _ in range(total)
    ]
    log_offset = svc.worker_log.stat().st_size
    first_commit = len(svc.observer.commits)
    cpu_before, ticks_before = cpu_seconds(svc.groups), machine_ticks()
    began = time.perf_counter()
    asyncio.run(fire(svc.urls, svc.key, svc.dataset_id, requests, rate, cap, duration))
    window = time.perf_counter() - began
    cpu_after, ticks_after = cpu_seconds(svc.groups), machine_ticks()
    accepted = [r for r in requests if r.status == 202]
    log(f"(d) {rate:.0f}/s: {len(accepted)} of {total} accepted in {window:.1f}s; draining")
    drain_began = time.perf_counter()
    wait_until(lambda: pending_jobs(svc.database_url) == 0, "the jobs", svc.procs, drain)
    drained = time.perf_counter() - drain_began
    time.sleep(max(0.3, svc.observer.every * 4))
    with svc.worker_log.open("rb") as handle:
        handle.seek(log_offset)
        tasks = worker_tasks(handle.read().decode(errors="replace"))
    visible_after: list[float] = []
    missing = 0
    for r in accepted:
        seen = [svc.observer.first_seen.get(v) for v in r.values]
        if any(s is None for s in seen):
            missing += 1
            continue
        visible_after.append(max(0.0, max(s for s in seen if s is not None) - r.answered))
    commits = svc.observer.commits[first_commit:]
    statuses: dict[str, int] = {}
    for r in requests:
        label = {0: "not sent", -1: f"error {r.error}"}.get(r.status, str(r.status))
        statuses[label] = statuses.get(label, 0) + 1
    busy = (ticks_after[0] - ticks_before[0]) / max(1, ticks_after[1] - ticks_before[1])
    return {
        "rate": rate,
        "in_flight": cap,
        "offered": total,
        "window": window,
        "accepted": len(accepted),
        "accepted_per_s": len(accepted) / window,
        "statuses": statuses,
        "post_latency": [r.answered - r.sent for r in accepted],
        "visible": visible_after,
        "missing": missing,
        "jobs": job_latencies(svc.database_url, {r.job_id for r in accepted}),
        "drain_seconds": drained,
        "group_sizes": [int(c.get("icebatch.request-count", 0)) for c in commits],
        "cpu": {k: cpu_after[k] - cpu_before.get(k, 0.0) for k in cpu_after},
        "machine_busy": busy,
        "worker": tasks,
        "values": [v for r in accepted for v in r.values],
    }


def run_service(args: argparse.Namespace, data: Data, work: Path) -> dict[str, Any]:
    database = create_database("icebatch_bench_svc")
    try:
        with redis_database() as redis_db:
            return service_part(args, data, work / "service", database, redis_db)
    finally:
        drop_database(database)


def service_part(
    args: argparse.Namespace, data: Data, home: Path, database: str, redis_db: int
) -> dict[str, Any]:
    from app.config import Settings
    from app.lake import visible
    from app.lake.catalog import make_catalog

    home.mkdir(parents=True)
    database_url = f"{PG}/{database}"
    env = {
        **os.environ,
        "ICEBATCH_HOME": str(home),
        "ICEBATCH_DATABASE_URL": database_url,
        "ICEBATCH_BROKER_URL": f"{REDIS}/{redis_db}",
        "ICEBATCH_WAREHOUSE": "",
        "PYTHONUNBUFFERED": "1",
    }
    argv = [ICEBATCH, "keys", "create", "--org", "bench"]
    key = subprocess.run(argv, env=env, capture_output=True, check=True).stdout.split()[-1]
    procs: list[subprocess.Popen[bytes]] = []
    urls: list[str] = []
    headers = {"Authorization": f"Bearer {key.decode()}"}
    try:
        for i in range(args.api_processes):  # one at a time: each runs the migrations first
            port = free_port()
            procs.append(start([ICEBATCH, "api", "--port", str(port)], env, home / f"api{i}.log"))
            urls.append(f"http://127.0.0.1:{port}")

            def api_up(url: str = urls[-1]) -> bool:
                with contextlib.suppress(httpx.TransportError):
                    return httpx.get(f"{url}/readyz", timeout=2).status_code == 200
                return False

            wait_until(api_up, "the API", procs, 120)
        worker_log = home / "worker.log"
        argv = [ICEBATCH, "worker", "--concurrency", str(args.worker_concurrency)]
        procs.append(start(argv, env, worker_log))
        wait_until(lambda: " ready." in worker_log.read_text(), "the worker", procs, 120)
        with httpx.Client(base_url=urls[0], headers=headers, timeout=300) as client:
            created = client.post("/v1/datasets", json=DATASET).raise_for_status().json()
            dataset_id, identifier = created["id"], created["table"].split(".", 1)[1]
            files = data.files[: args.service_files] if args.service_files else data.files
            size = max(1, len(files) // args.service_batches)
            groups = [files[i : i + size] for i in range(0, len(files), size)]
            log(f"(d) ingesting {len(files)} files as {len(groups)} batches through the API")
            ingest_seconds = upload_batches(client, dataset_id, groups)
        catalog = make_catalog(Settings(home=home, database_url=database_url))
        table = catalog.load_table(identifier)
        table_rows = sum(
            int(s.summary.additional_properties.get("added-records", 0))
            for s in table.snapshots()
            if s.summary
        )
        log(f"(d) table ready: {table_rows:,} rows ingested in {ingest_seconds:.1f}s")
        observer = Observer(catalog, database_url, identifier, args.poll)
        observer.start()
        rng = np.random.default_rng(args.seed + 7)
        names = {p.pid: f"api{i + 1}" for i, p in enumerate(procs[:-1])}
        svc = Service(
            urls,
            key.decode(),
            dataset_id,
            identifier,
            database_url,
            procs,
            {**names, procs[-1].pid: "worker"},
            worker_log,
            observer,
            iter(rng.permutation(USERS).tolist()),
            rng,
        )
        runs = []
        try:
            for rate, cap in args.rates:
                cap = cap or args.in_flight
                runs.append(load_run(svc, data, rate, args.duration, cap, args.drain_timeout))
        finally:
            observer.halt.set()
            observer.join()
        table = catalog.load_table(identifier)
        values = sorted({v for run in runs for v in run.pop("values")})
        check_seconds, leftover = timed(
            lambda: visible.count_by_value(table, table.current_snapshot(), "user_id", values)
        )
        # what the committer's rows-hidden count costs a group of 10 ids (after each commit)
        probe = [data.identities[next(svc.users)] for _ in range(10)]
        probe_seconds = min(
            timed(
                lambda: visible.count_by_value(table, table.current_snapshot(), "user_id", probe)
            )[0]
            for _ in range(3)
        )
        return {
            "table_rows": table_rows,
            "files": len(files),
            "batches": len(groups),
            "ingest_seconds": ingest_seconds,
            "runs": runs,
            "check_values": len(values),
            "leftover_rows": sum(leftover.values()),
            "check_seconds": check_seconds,
            "probe_seconds": probe_seconds,
            "snapshots": len(table.snapshots()),
        }
    finally:
        stop(procs)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ---------------------------------------------------------------- report


def ratio_line(name: str, ice: float, base: float, goal: float | None) -> str:
    ratio = ice / base if base else float("nan")
    verdict = ""
    if goal is not None:
        verdict = f" (goal <= {goal}: {'met' if ratio <= goal else 'NOT met'})"
    return f"{name}: {ratio:.3f}x{verdict}"


def report(args: argparse.Namespace, lake: dict[str, Any], svc: dict[str, Any] | None) -> None:
    print()
    if "levels" in lake:
        levels: Levels = lake["levels"]
        print(f"setup (not measured): {lake['setup_seconds']:.0f}s of appends; layouts:")
        for name, stats in lake["layout"].items():
            print(f"  {name:<14} {stats}")
    if "a" in lake:
        times = lake["a"]["times"]
        best = {k: min(v) for k, v in times.items()}
        print("\n(a) revert one batch (seconds, best of runs; all runs listed)")
        print(f"| {'method':<32} | {'best':>6} | {'median':>6} | all runs | what it did")
        print(f"|{'-' * 34}|{'-' * 8}|{'-' * 8}|{'-' * 10}|{'-' * 40}")
        labels = {
            "icebatch": "Icebatch tombstone commit",
            "batch_cow": "DELETE copy-on-write (ingest)",
            "batch_mor": "DELETE merge-on-read (ingest)",
            "compact_cow": "DELETE copy-on-write (compacted)",
            "compact_mor": "DELETE merge-on-read (compacted)",
        }
        for key, values in times.items():
            what = lake["a"]["effects"].get(key, "1 tombstone, no data file touched")
            runs = " ".join(f"{x:.2f}" for x in values)
            print(
                f"| {labels[key]:<32} | {best[key]:>6.3f} | {statistics.median(values):>6.3f} "
                f"| {runs} | {what}"
            )
        for key, goal in (("cow", 0.1), ("mor", 0.5)):
            for layout in ("batch", "compact"):
                if f"{layout}_{key}" in best:
                    print(
                        ratio_line(
                            f"ratio Icebatch / DELETE {MODES[key]} ({layout} layout)",
                            best["icebatch"],
                            best[f"{layout}_{key}"],
                            goal,
                        )
                    )
    if "b" in lake:
        for engine, result in lake["b"].items():
            times = result["times"]
            what = "read_dataset(...).agg(count, sum(xxhash64(*)))"
            if engine == "arrow":
                what = "visible.row_batches(...), every column materialized"
            print(f"\n(b) full scan, {engine}: {what} (seconds, best of runs)")
            plan = engine == "spark"
            print(
                f"| {'tombstones':>10} | {'rows read':>10} | {'icebatch':>8} | {'absent':>8} "
                f"| {'ratio':>6} |{' planning |' if plan else ''} all runs icebatch / absent"
            )
            print(
                f"|{'-' * 12}|{'-' * 12}|{'-' * 10}|{'-' * 10}|{'-' * 8}|"
                f"{'-' * 10 + '|' if plan else ''}{'-' * 28}"
            )
            for level in LEVELS:
                ice, twin = min(times[(level, "icebatch")]), min(times[(level, "absent")])
                runs = " ".join(f"{x:.2f}" for x in times[(level, "icebatch")])
                runs += " / " + " ".join(f"{x:.2f}" for x in times[(level, "absent")])
                print(
                    f"| {level:>10,} | {result['rows'][level]:>10,} | {ice:>8.2f} | {twin:>8.2f} "
                    f"| {ice / twin:>5.2f}x |"
                    + (f" {min(times[(level, 'planning')]):>8.2f} |" if plan else "")
                    + f" {runs}"
                )
            for name in ("scan + _file", "anti join only"):
                if (DIAG, name) in times:
                    values = times[(DIAG, name)]
                    print(
                        f"  diagnostic at {DIAG:,}: {name:<14} best {min(values):.2f}s "
                        f"(runs {' '.join(f'{x:.2f}' for x in values)})"
                    )
            ice, twin = min(times[(10_000, "icebatch")]), min(times[(10_000, "absent")])
            print(ratio_line(f"ratio at 10k tombstones ({engine})", ice, twin, 1.2))
    if "levels" in lake:
        levels = lake["levels"]
        low, high = LEVELS[1], LEVELS[-1]
        print(f"\n(c) tombstone commit of {args.small_commit} ids, {args.commits} commits each")
        print(
            "  (seconds: load + commit; 'commit only' leaves out the catalog load; 'no tombstone' "
            "is a control commit that adds a snapshot only)"
        )
        print(
            f"| {'active':>8} | {'snapshots':>9} | {'median':>6} | {'p90':>6} | {'max':>6} "
            f"| commit only, median | no tombstone, median |"
        )
        print(f"|{'-' * 10}|{'-' * 11}|{'-' * 8}|{'-' * 8}|{'-' * 8}|{'-' * 21}|{'-' * 22}|")
        for level in (low, high):
            values = levels.commit_small[level]
            print(
                f"| {level:>8,} | {levels.history:>9} | {statistics.median(values):>6.3f} "
                f"| {pct(values, 0.9):>6.3f} | {max(values):>6.3f} "
                f"| {statistics.median(levels.commit_only[level]):>19.3f} "
                f"| {statistics.median(levels.commit_empty[level]):>20.3f} |"
            )
        print(
            ratio_line(
                "ratio median at 100k / at 1k (load + commit)",
                statistics.median(levels.commit_small[high]),
                statistics.median(levels.commit_small[low]),
                1.5,
            )
        )
    if svc is not None:
        report_service(svc)


def report_service(svc: dict[str, Any]) -> None:
    print(
        f"\n(d) service: a {svc['table_rows']:,}-row table ({svc['files']} files ingested through "
        f"the API as {svc['batches']} batches in {svc['ingest_seconds']:.0f}s); GDPR requests of "
        f"1-3 user ids each"
    )
    for run in svc["runs"]:
        visible_after, post, jobs = run["visible"], run["post_latency"], run["jobs"]
        print(
            f"- offered {run['rate']:.0f}/s, at most {run['in_flight']} in flight, for "
            f"{run['window']:.1f}s ({run['offered']} requests): {run['statuses']}"
        )
        print(
            f"  accepted (202) {run['accepted']} = {run['accepted_per_s']:.1f}/s; POST latency "
            f"p50 {pct(post, 0.5):.3f}s p99 {pct(post, 0.99):.3f}s"
        )
        print(
            f"  202 -> tombstones in the current snapshot: p50 {pct(visible_after, 0.5):.2f}s, "
            f"p99 {pct(visible_after, 0.99):.2f}s, max {max(visible_after, default=0):.2f}s "
            f"({run['missing']} never seen)"
        )
        print(
            f"  job created -> job succeeded (server clock): p50 {pct(jobs['seconds'], 0.5):.2f}s, "
            f"p99 {pct(jobs['seconds'], 0.99):.2f}s; states {jobs['states']}; backlog drained "
            f"{run['drain_seconds']:.1f}s after the window"
        )
        sizes, work = run["group_sizes"], run["worker"]
        print(
            f"  {len(sizes)} group commits, requests per commit median "
            f"{statistics.median(sizes) if sizes else 0:.0f}, max {max(sizes, default=0)}; worker: "
            f"{work['tasks']} tasks in {work['task_seconds']:.1f}s, {work['long_tasks']} over "
            f"20 ms ({work['long_seconds']:.1f}s), {work['skipped']} found their job done"
        )
        cpu = ", ".join(f"{k} {v:.1f}" for k, v in run["cpu"].items())
        print(
            f"  CPU seconds in the window: {cpu}; machine busy {run['machine_busy'] * 100:.0f}% "
            f"of {len(os.sched_getaffinity(0))} cores"
        )
        p99 = pct(visible_after, 0.99)
        print(
            f"  goal accepted >= 200/s: {'met' if run['accepted_per_s'] >= 200 else 'NOT met'}; "
            f"goal p99 visible <= 2 s: {'met' if p99 <= 2 and not run['missing'] else 'NOT met'}"
        )
    print(
        f"  check: {svc['check_values']} deleted user ids, {svc['leftover_rows']} of their rows "
        f"still visible (count_by_value, {svc['check_seconds']:.1f}s); {svc['snapshots']} snapshots"
    )
    print(
        f"  the committer's rows-hidden count for a group of 10 ids (visible.count_by_value on "
        f"this table, best of 3): {svc['probe_seconds']:.2f}s"
    )


def parse_rates(text: str) -> list[tuple[float, int | None]]:
    out: list[tuple[float, int | None]] = []
    for item in text.split(","):
        rate, _, cap = item.partition(":")
        out.append((float(rate), int(cap) if cap else None))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batches", type=int, default=50)
    parser.add_argument("--rows-per-batch", type=int, default=100_000)
    parser.add_argument("--duration", type=float, default=60.0, help="(d) seconds of requests")
    parser.add_argument(
        "--rate",
        dest="rates",
        type=parse_rates,
        default=[(200.0, None)],
        help="(d) GDPR requests per second, RATE or RATE:IN_FLIGHT (a client-side cap on "
        "concurrent requests, default --in-flight); a comma list runs each in turn",
    )
    parser.add_argument("--runs", type=int, default=3, help="(a), (b) runs per side")
    parser.add_argument("--arrow-runs", type=int, default=2, help="(b) PyArrow runs; 0 skips")
    parser.add_argument("--commits", type=int, default=20, help="(c) commits per level")
    parser.add_argument("--small-commit", type=int, default=10, help="(c) tombstones a commit")
    parser.add_argument(
        "--build-chunk", type=int, default=2_000, help="tombstones per build commit"
    )
    parser.add_argument("--no-compacted", dest="compacted", action="store_false")
    parser.add_argument("--parts", default="abcd", help="which parts to run, e.g. 'abc' or 'd'")
    parser.add_argument("--api-processes", type=int, default=1)
    parser.add_argument("--worker-concurrency", type=int, default=1)
    parser.add_argument("--service-batches", type=int, default=5, help="(d) ingest batches")
    parser.add_argument("--service-files", type=int, default=0, help="(d) files (0: all)")
    parser.add_argument("--in-flight", type=int, default=128, help="(d) concurrent requests")
    parser.add_argument("--poll", type=float, default=0.05, help="(d) observer poll seconds")
    parser.add_argument("--drain-timeout", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=20261121)
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = parser.parse_args()
    if args.quick:
        args.batches, args.rows_per_batch, args.duration, args.rates = (
            6,
            20_000,
            8.0,
            [(40.0, None)],
        )
        args.runs, args.arrow_runs, args.commits, args.service_batches = 1, 1, 5, 2
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("ICEBATCH_SPARK_MASTER", "local[2]")
    for key in ("ICEBATCH_DATABASE_URL", "ICEBATCH_BROKER_URL", "ICEBATCH_WAREHOUSE"):
        os.environ.pop(key, None)
    master = os.environ["ICEBATCH_SPARK_MASTER"]
    memory = os.environ.get("ICEBATCH_SPARK_DRIVER_MEMORY", "4g")
    load = "/".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"machine: nproc={len(os.sched_getaffinity(0))}, Spark master {master}, driver memory "
        f"{memory}, load average at start {load}; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        flush=True,
    )
    work = Path(tempfile.mkdtemp(prefix="icebatch-bench-restate-"))
    database = create_database("icebatch_bench") if set(args.parts) & set("abc") else None
    try:
        rows = args.batches * args.rows_per_batch
        log(f"generating {args.batches} batches x {args.rows_per_batch:,} rows = {rows:,} rows")
        data = generate(work / "batches", args.batches, args.rows_per_batch, args.seed)
        lake = run_lake(args, data, work, database) if database else {}
        svc = run_service(args, data, work) if "d" in args.parts else None
        print(
            f"\nrun: {' '.join(sys.argv[1:]) or '(defaults)'}; {rows:,} rows in {args.batches} "
            f"batches; total {time.perf_counter() - BEGAN:.0f}s"
        )
        report(args, lake, svc)
    finally:
        if database:
            drop_database(database)
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
