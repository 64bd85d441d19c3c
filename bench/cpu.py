"""CPU time of processes, read from Linux's /proc: a benchmark's own process trees and the
PostgreSQL server's processes, to print the CPU a phase took per event. PostgreSQL's figure
counts every process of the server (its backends, WAL writer, checkpointer, autovacuum), so it is
the run's only while nothing else uses the server."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
PROC = Path("/proc")


def cpu_seconds(pid: int) -> float | None:
    """The user and system CPU seconds of `pid` (its threads included); None once it is gone."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # from the state on: utime, stime are 12th, 13th
    return (int(fields[11]) + int(fields[12])) / TICK


def tree(pid: int) -> list[int]:
    """`pid` and its descendants."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in (PROC / str(current) / "task").glob("*/children"):
            try:
                todo.extend(int(child) for child in task.read_text().split())
            except OSError:
                continue
    return found


def named_threads_seconds(pid: int, prefixes: tuple[str, ...]) -> float:
    """CPU seconds of the threads of `pid` whose name starts with one of `prefixes` (a JVM's
    `C1 CompilerThre`, `C2 CompilerThre`: its JIT compilers)."""
    total = 0.0
    for task in (PROC / str(pid) / "task").glob("*"):
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        if name.startswith(prefixes):
            fields = stat.rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / TICK
    return total


def java(pids: list[int]) -> list[int]:
    """The JVMs among `pids`."""
    found = []
    for pid in pids:
        try:
            if (PROC / str(pid) / "comm").read_text().strip() == "java":
                found.append(pid)
        except OSError:
            continue
    return found


def postgres() -> list[int]:
    """Every process named `postgres` (the server and its backends)."""
    pids = []
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "postgres":
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


class Meter:
    """CPU seconds of named groups of processes since the meter started (or was reset). A
    process that exits between two readings loses what it used since the first."""

    def __init__(self, groups: dict[str, Callable[[], list[int]]]) -> None:
        self.groups = groups
        self.start = self._read()

    def _read(self) -> dict[str, dict[int, float]]:
        readings: dict[str, dict[int, float]] = {}
        for name, pids in self.groups.items():
            readings[name] = {}
            for pid in pids():
                seconds = cpu_seconds(pid)
                if seconds is not None:
                    readings[name][pid] = seconds
        return readings

    def reset(self) -> None:
        self.start = self._read()

    def used(self) -> dict[str, float]:
        """CPU seconds of each group since the start; a process new since then counts whole."""
        now = self._read()
        return {
            name: sum(s - self.start[name].get(pid, 0.0) for pid, s in now[name].items())
            for name in self.groups
        }


def per_event(used: dict[str, float], events: int) -> str:
    """`API 61 us, PostgreSQL 40 us` per event."""
    return ", ".join(f"{name} {seconds / events * 1e6:,.0f} us" for name, seconds in used.items())


class PhaseCpu:
    """Where a phase's CPU went, in cores: the API, PostgreSQL, the workers (their
    Python and Spark processes; the JVMs' JIT compiler and garbage collector threads apart)
    and this load generator."""

    JIT = ("C1 CompilerThre", "C2 CompilerThre")
    GC = ("GC Thread", "G1 ")  # G1's parallel workers, concurrent markers, refiners

    def __init__(self, api_pid: int, worker_pids: list[int]) -> None:
        self.workers = lambda: [pid for w in worker_pids for pid in tree(w)]
        self.meter = Meter(
            {
                "API": lambda: tree(api_pid),
                "PostgreSQL": postgres,
                "workers": self.workers,
                "load generator": lambda: [os.getpid()],
            }
        )
        self.jit, self.gc = self._threads(self.JIT), self._threads(self.GC)

    def _threads(self, prefixes: tuple[str, ...]) -> dict[int, float]:
        return {pid: named_threads_seconds(pid, prefixes) for pid in java(self.workers())}

    def line(self, seconds: float, events: int) -> str:
        used = self.meter.used()
        jit = sum(s - self.jit.get(pid, 0.0) for pid, s in self._threads(self.JIT).items())
        gc = sum(s - self.gc.get(pid, 0.0) for pid, s in self._threads(self.GC).items())
        cores = ", ".join(f"{name} {value / seconds:.2f}" for name, value in used.items())
        return (
            f"cpu over the phase ({seconds:.0f} s), cores: {cores} (of the workers', the JIT "
            f"compilers {jit / seconds:.2f}, the garbage collectors {gc / seconds:.2f}); "
            f"per event: {per_event(used, events)}"
        )
