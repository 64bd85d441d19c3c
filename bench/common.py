"""What the benchmarks share: the events dataset and its generator, the `icebatch` processes
(start, stop, wait), the API key and the machine line printed at the start of a run."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

ICEBATCH = str(Path(sys.executable).with_name("icebatch"))
START = np.datetime64("2026-01-01T00:00:00", "us").astype(np.int64)
ALPHABET = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _", "u1")
ARROW_SCHEMA = pa.schema(
    [pa.field("event_id", pa.int64(), nullable=False), ("user_id", pa.string())]
    + [("event_time", pa.timestamp("us")), ("payload", pa.string())]
)
SCHEMA = [{"name": "event_id", "type": "long", "required": True}] + [
    {"name": n, "type": t}
    for n, t in (("user_id", "string"), ("event_time", "timestamp"), ("payload", "string"))
]
DAY = [{"column": "event_time", "transform": "day"}]
DATASET = {"name": "events", "schema": SCHEMA, "partition": DAY, "identity_columns": ["user_id"]}
Procs = list[subprocess.Popen[bytes]]


def events(
    rows: int, first_id: int, users: pa.Array, days: int, rng: np.random.Generator
) -> pa.Table:
    """`rows` events of `users`, `days` days of event_time, a random 80-120 byte payload;
    event ids from `first_id` on."""
    user_idx = pa.array(rng.integers(0, len(users), rows, dtype=np.int32))
    micros = START + rng.integers(0, days * 86_400_000_000, rows, dtype=np.int64)
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


def machine_line(master: str, suffix: str = "") -> None:
    """Print the CPUs, the Spark master and driver memory, and the load average at start."""
    memory = os.environ.get("ICEBATCH_SPARK_DRIVER_MEMORY", "4g")
    load = "/".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"machine: nproc={len(os.sched_getaffinity(0))}, Spark master {master}, driver memory "
        f"{memory}, load average at start {load}{suffix}",
        flush=True,
    )


def local_run() -> None:
    """Spark on loopback, `local[2]` unless set; none of the environment's metadata store,
    broker or warehouse (a run makes its own); then the machine line, with the time."""
    from datetime import UTC, datetime

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("ICEBATCH_SPARK_MASTER", "local[2]")
    for key in ("ICEBATCH_DATABASE_URL", "ICEBATCH_BROKER_URL", "ICEBATCH_WAREHOUSE"):
        os.environ.pop(key, None)
    now = datetime.now(UTC)
    machine_line(os.environ["ICEBATCH_SPARK_MASTER"], f"; {now:%Y-%m-%d %H:%M} UTC")


@contextlib.contextmanager
def work_dir(prefix: str, keep: bool) -> Iterator[Path]:
    """A temp dir for the run, removed at its end unless `keep` (then its path is printed)."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield work
    finally:
        if keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def create_key(env: dict[str, str]) -> str:
    """A new API key of the org `bench` (`icebatch keys create`)."""
    argv = [ICEBATCH, "keys", "create", "--org", "bench"]
    key = subprocess.run(argv, env=env, capture_output=True, check=True).stdout.split()[-1]
    return key.decode()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(argv: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("ab") as out:
        return subprocess.Popen(
            argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def stop(procs: Procs) -> None:
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


def wait_for(check: Callable[[], bool], what: str, procs: Procs, timeout: float = 120) -> None:
    """Poll `check` every 0.2 s; fail if one of `procs` exits or `timeout` s pass first."""
    deadline = time.monotonic() + timeout
    while not check():
        if any(p.poll() is not None for p in procs):
            raise RuntimeError(f"a process exited while waiting for {what}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.2)


def worker_ready(log_path: Path) -> Callable[[], bool]:
    """True once the Celery worker logging to `log_path` says it is ready."""
    return lambda: " ready." in log_path.read_text()
