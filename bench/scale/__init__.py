"""Costs at scale: one dataset driven through the HTTP API to 100,000 restatements (issue 14).

Run: `.venv/bin/python -m bench.scale [--rows 5000000] [--levels 1000,10000,50000,100000]
[--burst 2000] [--rate 100] [--in-flight 32] [--mix 0.9,0.05,0.05] [--quick]`.

The real service (PostgreSQL, Redis, `icebatch api` + `icebatch worker --beat`) with automatic
vacuum, expiry and materialization on, retention short; one dataset of `--rows` events ingested
through the API as a few batches. Restatements come in bursts (paced, at most `--in-flight`
open): GDPR deletes of one identity with rows, reverts and replays (corrected rows) of small side
batches, which are ingested through the API before each burst (that traffic is no restatement).
At each level of cumulative accepted restatements the load pauses, the jobs drain and the
materializer catches up, then:
  - tombstone commit latency: quiet GDPR probes, 202 -> tombstone in the current snapshot, and
    the same for every restatement of the bursts since the level before (p50, p99);
  - snapshot commit latency: small ingests, open -> 'success'; metadata.json bytes, snapshots,
    manifests of the current snapshot (data, delete);
  - the API's read of a 1% slice (`GET /rows`, offset in the middle), median of runs;
  - full scans at the current snapshot: `read_dataset` and plain Spark SQL against a twin table
    written from the model with the hidden rows physically absent (rows and sums of row hashes
    must be equal, else the run fails), and `visible.row_batches` against the twin in PyArrow;
  - the automatic maintenance jobs since the level before (vacuum durations, expiries), the
    metadata store's rows per table, the materialization lag of every tombstone commit since the
    level before (the observer's snapshot log: expiry removes them from the table's), and the
    live position delete files.
Exits 1 when a goal is not met, 2 when a read or a restatement went wrong.
"""

# The modules: `workload` (the rows and the model of what the dataset shows), `service` (the
# processes, the dataset), `bursts` (the load), `checkpoint` (a level's measurements), `scans`
# (the full scans and the twin), `report` (table, goals, JSON, PNG). The service's start, the
# pacing, the observer and the scans are bench.restatements' own.
