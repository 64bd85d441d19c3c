"""What runs inside Spark tasks says once where it runs: on a cluster, an operator (and the
cluster test) reads in an executor's stderr which host ran which Icebatch code, from where."""

from __future__ import annotations

import os
import sys

from workers.spark.shipping import origin

_announced: set[str] = set()


def announce(task: str) -> None:
    """One stderr line per task kind and Python worker process (the executor's log keeps it)."""
    if task in _announced:
        return
    _announced.add(task)
    sys.stderr.write(
        f"icebatch task {task}: pid {os.getpid()}, host address "
        f"{os.environ.get('SPARK_LOCAL_IP', '?')}, code from {origin('app')}\n"
    )
    sys.stderr.flush()
