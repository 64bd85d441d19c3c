"""First contact: a newcomer's `icebatch up` in a fresh store to the first batch `success`, then
a warm small ingest end to end, measured the same way before and after a change.

    .venv/bin/python -m bench.first_contact [--warm 3] [--keep]

The run follows README's walk-through with the real CLI: it starts `icebatch up` on a free port
in a fresh `ICEBATCH_HOME` (embedded mode, Spark `local[2]` unless set) and, as soon as
`GET /healthz` answers, runs `icebatch keys create`, `icebatch datasets create` (the events
schema) and `icebatch batches upload events a.csv` (two rows). Every time is counted from the
start of the `icebatch up` process. "first success" is the batch's `completed_at` (the server's
clock, this machine's) minus that start; "CLI returned" is when the upload command exited.
Then `--warm` more two-row batches are uploaded with the CLI (end to end: the command's run,
CLI start-up and its polling included) and `--warm` more over HTTP (upload → COMPLETE → polled
every 0.1 s for `success`: no CLI). "job" is the ingest job's `finished_at - started_at`.
Last, the service is left idle for `--idle` seconds and the lines it logs meanwhile counted.

The baseline, measured in the same run, is the warm batch: the ratios say how much the first
batch's job costs against a later one's (the SparkSession start it pays), and how long a
newcomer waits for the first `success` against a warm ingest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from bench.common import ICEBATCH, free_port, local_run, start, stop, wait_for, work_dir

CSV = (
    "event_id,user_id,event_time,payload\n"
    "{a},u1,2024-01-01T10:00:00,hello\n{b},u2,2024-01-02T11:00:00,world\n"
)
SCHEMA = (
    '[{"name": "event_id", "type": "long", "required": true},'
    ' {"name": "user_id", "type": "string"},'
    ' {"name": "event_time", "type": "timestamp"},'
    ' {"name": "payload", "type": "string"}]'
)
PARTITION = '[{"column": "event_time", "transform": "day"}]'


def cli(env: dict[str, str], cwd: Path, *args: str) -> str:
    """Run `icebatch ARGS` in `cwd`: its stdout (raises, with stderr, when it fails)."""
    done = subprocess.run([ICEBATCH, *args], env=env, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"icebatch {' '.join(args)}: exit {done.returncode}: {done.stderr}")
    return done.stdout


def seconds(value: str) -> float:
    return datetime.fromisoformat(value).timestamp()


def job_seconds(client: httpx.Client, batch: dict[str, Any]) -> float:
    """The batch's ingest job's run (its batch's `success` commits a moment before it ends)."""
    while (job := client.get(f"/v1/jobs/{batch['job_id']}").raise_for_status().json())[
        "finished_at"
    ] is None:
        time.sleep(0.05)
    return seconds(job["finished_at"]) - seconds(job["started_at"])


def http_ingest(client: httpx.Client, dataset_id: str, body: str) -> dict[str, Any]:
    """One CSV batch over HTTP, polled every 0.1 s until it finishes: the batch."""
    batch_id = client.post("/v1/batches", json={"dataset_id": dataset_id, "format": "csv"})
    batch_id = batch_id.raise_for_status().json()["id"]
    client.put(f"/v1/batches/{batch_id}/files/b.csv", content=body.encode()).raise_for_status()
    client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"}).raise_for_status()
    while (batch := client.get(f"/v1/batches/{batch_id}").json())["status"] not in (
        "success",
        "failed",
    ):
        time.sleep(0.1)
    if batch["status"] != "success":
        raise RuntimeError(f"batch {batch_id} failed: {batch.get('errors')}")
    return dict(batch)


def row(name: str, values: list[float]) -> None:
    runs = " ".join(f"{v:.2f}" for v in values)
    print(f"| {name:<30} | {statistics.median(values):7.2f} | {runs}", flush=True)


def run(args: argparse.Namespace, work: Path) -> None:
    home, port = work / "home", free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "ICEBATCH_HOME": str(home), "ICEBATCH_URL": url, "PYTHONUNBUFFERED": "1"}
    env.pop("ICEBATCH_API_KEY", None)
    env["XDG_CONFIG_HOME"] = str(work / "config")  # no profile of the user's is read
    (work / "a.csv").write_text(CSV.format(a=1, b=2))
    began = time.time()
    procs = [start([ICEBATCH, "up", "--port", str(port)], env, work / "up.log")]
    try:
        with httpx.Client(base_url=url, timeout=120) as client:

            def api_up() -> bool:
                try:
                    return client.get("/healthz").status_code == 200
                except httpx.TransportError:
                    return False

            wait_for(api_up, "the API", procs, timeout=300)
            marks = {"API answers": time.time() - began}
            key = cli(env, work, "keys", "create", "--org", "acme").split()[-1]
            env["ICEBATCH_API_KEY"] = key
            client.headers["Authorization"] = f"Bearer {key}"
            marks["key created"] = time.time() - began
            cli(env, work, "datasets", "create", "--name", "events", "--schema", SCHEMA,
                "--partition", PARTITION, "--identity", "user_id")  # fmt: skip
            marks["dataset created"] = time.time() - began
            batch_id = cli(env, work, "batches", "upload", "events", "a.csv", "-q").strip()
            marks["first upload returned (CLI)"] = time.time() - began
            first = client.get(f"/v1/batches/{batch_id}").raise_for_status().json()
            assert first["status"] == "success", first
            assert first["row_count"] == 2, first
            marks["first success"] = seconds(first["completed_at"]) - began
            first_job = job_seconds(client, first)
            warm_cli, warm_http, warm_jobs = [], [], []
            for n in range(args.warm):
                path = work / f"w{n}.csv"
                path.write_text(CSV.format(a=10 + 2 * n, b=11 + 2 * n))
                t = time.perf_counter()
                warm_id = cli(env, work, "batches", "upload", "events", path.name, "-q").strip()
                warm_cli.append(time.perf_counter() - t)
                warm_jobs.append(job_seconds(client, client.get(f"/v1/batches/{warm_id}").json()))
            for n in range(args.warm):
                t = time.perf_counter()
                batch = http_ingest(client, first["dataset_id"], CSV.format(a=100 + n, b=200 + n))
                warm_http.append(time.perf_counter() - t)
                warm_jobs.append(job_seconds(client, batch))
            time.sleep(3)  # the last batch's lines are written
            before_idle = len((work / "up.log").read_text().splitlines())
            time.sleep(args.idle)  # nothing asked of it: what an idle `icebatch up` logs
            idle_lines = len((work / "up.log").read_text().splitlines()) - before_idle
    finally:
        stop(procs)
    lines = len((work / "up.log").read_text().splitlines())
    print(f"\nseconds since `icebatch up` started (fresh store; {lines} lines logged in all):")
    per_minute = idle_lines * 60 / args.idle
    print(f"  idle: {idle_lines} lines logged in {args.idle:.0f} s ({per_minute:.0f} a minute)")
    for name, value in marks.items():
        print(f"  {name:<30} {value:7.2f}")
    print("\n| measure                        |  median | all runs (s)")
    print("|--------------------------------|---------|-------------")
    row("first batch's job", [first_job])
    row("warm job", warm_jobs)
    row("warm ingest end to end (CLI)", warm_cli)
    row("warm ingest end to end (HTTP)", warm_http)
    warm_job, warm_e2e = statistics.median(warm_jobs), statistics.median(warm_http)
    print(f"ratio first job / warm job: {first_job / warm_job:.2f} (goal: about 1)")
    since_up = marks["first success"]
    print(f"ratio first success since up / warm ingest (HTTP): {since_up / warm_e2e:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warm", type=int, default=3, help="Warm batches per path (CLI, HTTP).")
    parser.add_argument("--idle", type=float, default=20, help="Seconds idle at the end.")
    parser.add_argument("--keep", action="store_true", help="Keep the run's folder (logs).")
    args = parser.parse_args()
    local_run()
    with work_dir("icebatch-first-contact-", args.keep) as work:
        run(args, work)


if __name__ == "__main__":
    main()
