"""Where the CPU of a run goes, by kind of process: the kernel's process accounting (BSD `acct`,
version 3 records, one per process as it exits) joined with `ps` samples for command lines.

    .venv/bin/python scripts/cpu_accounting.py start /tmp/acct   # on; ps sampled to /tmp/acct.ps
    CI=true bash .ci/run                                         # or any command
    .venv/bin/python scripts/cpu_accounting.py stop              # accounting and sampling off
    .venv/bin/python scripts/cpu_accounting.py report /tmp/acct  # CPU seconds by kind

Needs root and a kernel with BSD process accounting (/proc/sys/kernel/acct). A process that
exited before its first `ps` sample (under a second) counts as `unnamed`. docs/testing.md says
what a CI run of 2026-12-06 showed.
"""

from __future__ import annotations

import collections
import ctypes
import os
import re
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

# struct acct_v3 (linux/acct.h): flag, version, tty, exitcode, uid, gid, pid, ppid, btime,
# etime (float), utime, stime, mem, io, rw, minflt, majflt, swaps (comp_t), comm[16]
RECORD = struct.Struct("<BBHIIIIIIfHHHHHHHH16s")
TICKS = os.sysconf("SC_CLK_TCK")


def seconds(comp: int) -> float:
    """A comp_t (13-bit mantissa, 3-bit base-8 exponent) of clock ticks, in seconds."""
    return ((comp & 0x1FFF) << (3 * (comp >> 13))) / TICKS


def records(path: Path) -> Iterator[tuple[int, float]]:
    """(pid, CPU seconds) of every process the file recorded."""
    data = path.read_bytes()
    for offset in range(0, len(data) - RECORD.size + 1, RECORD.size):
        fields = RECORD.unpack_from(data, offset)
        yield fields[6], seconds(fields[10]) + seconds(fields[11])


def kind(command: str | None) -> str:
    if command is None:
        return "unnamed"
    program = command.split()[0].rsplit("/", 1)[-1]
    if program == "java":
        return "java: Spark executor" if "ExecutorBackend" in command else "java: Spark driver"
    if "pyspark.daemon" in command:
        return "python: Spark's Python workers"
    if "multiprocessing" in command:
        return "python: uvicorn's API processes"
    if "exec(eval(sys.stdin.readline()))" in command or "pytest" in command:
        return "python: pytest"
    found = re.search(r"bin/icebatch (\w+)", command)
    if found:
        return f"icebatch {found.group(1)}"
    return program


def commands(log: Path) -> dict[int, str]:
    """Each pid's first command line in the `ps` samples."""
    seen: dict[int, str] = {}
    for line in log.read_text(errors="replace").splitlines():
        pid, _, command = line.strip().partition(" ")
        if pid.isdigit():
            seen.setdefault(int(pid), command)
    return seen


def report(path: Path) -> None:
    names = commands(Path(f"{path}.ps"))
    cpu: collections.defaultdict[str, float] = collections.defaultdict(float)
    count: collections.Counter[str] = collections.Counter()
    for pid, used in records(path):
        name = kind(names.get(pid))
        cpu[name] += used
        count[name] += 1
    total = sum(cpu.values())
    print(f"{total:.0f} s of CPU in {sum(count.values())} processes")
    for name, used in sorted(cpu.items(), key=lambda item: -item[1])[:20]:
        print(f"{used:9.1f} s {100 * used / total:5.1f} % {count[name]:6d} x  {name}")


def switch(path: Path | None) -> None:
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    if libc.acct(str(path).encode() if path else None) != 0:
        sys.exit(f"acct: {os.strerror(ctypes.get_errno())}")


def main(argv: list[str]) -> None:
    match argv:
        case ["start", path]:
            Path(path).write_bytes(b"")
            switch(Path(path))
            sampler = f"while :; do ps -eo pid=,args= >> {path}.ps; sleep 1; done"
            subprocess.Popen(["bash", "-c", sampler], start_new_session=True)
        case ["stop"]:
            switch(None)
            subprocess.run(["pkill", "-f", "ps -eo pid=,args="], check=False)
        case ["report", path]:
            report(Path(path))
        case _:
            sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
