"""A worker's CPU priority holds against an API in another session. Linux shares the CPU between
sessions first (autogroup) and by nice only inside one, so a worker that leads its own session
(started by a supervisor, systemd or `setsid`) lowers its session's share; one inside another
session (`icebatch up`'s, a shell's) lowers its own nice only, never its session's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

AUTOGROUP = Path("/proc/self/autogroup")

pytestmark = pytest.mark.skipif(not AUTOGROUP.exists(), reason="the kernel has no autogroup")

PROBE = """
import json, os
from app.cli.server import worker_priority
worker_priority()
print(json.dumps([os.nice(0), open("/proc/self/autogroup").read()]))
"""


def session_nice(text: str) -> str:
    """The nice in "/autogroup-42 nice 0"; "root" for the empty text of a session in the root
    group (one never started by `setsid`, as under a container's init), which has no nice."""
    group = text.split()
    return group[-1] if group else "root"


def priorities(*, own_session: bool, nice: str) -> tuple[int, str]:
    """(the process's nice, its session's nice) after `worker_priority` in a new process."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**os.environ, "ICEBATCH_WORKER_NICE": nice},
        capture_output=True,
        text=True,
        check=True,
        start_new_session=own_session,
        timeout=60,
    )
    process, group = json.loads(done.stdout)
    return process, session_nice(group)


def test_a_worker_leading_its_session_lowers_the_session_share() -> None:
    wanted = max(7, os.nice(0))
    assert priorities(own_session=True, nice=str(wanted)) == (wanted, str(wanted))


def test_a_worker_in_another_session_leaves_that_session_alone() -> None:
    ours = session_nice(AUTOGROUP.read_text())
    assert priorities(own_session=False, nice="7") == (max(7, os.nice(0)), ours)


def test_nice_zero_changes_neither() -> None:
    assert priorities(own_session=True, nice="0") == (os.nice(0), "0")
