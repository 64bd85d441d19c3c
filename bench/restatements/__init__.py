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

# This docstring is the command line's description (`__main__`). The modules: `shared`
# (constants, log, timing), `data` (the generated batches and the twins' files), `infra` (the
# PostgreSQL and Redis databases), `lake` (the tables, in process), `revert` (a), `reads` (b),
# `commits` (c), `parts` (runs (a)-(c) in one SparkSession), `service` with `load` and `observe`
# (d), `report` (the printed tables).
