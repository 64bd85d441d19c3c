"""Icebatch as real processes on loopback, for end-to-end tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import httpx

BIN = Path(sys.executable).parent / "icebatch"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(condition: Callable[[], Any], timeout: float, what: str, every: float = 0.3) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Service:
    """`icebatch` processes sharing one environment; logs go to files under `home`."""

    def __init__(self, env: dict[str, str], home: Path) -> None:
        self.home = home
        self.env = {**os.environ, **env, "ICEBATCH_HOME": str(home), "PYTHONUNBUFFERED": "1"}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.logfiles: dict[str, IO[bytes]] = {}
        self.logpaths: dict[str, Path] = {}
        self.starts = 0

    def _spawn(
        self, name: str, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        self.starts += 1
        self.logpaths[name] = self.home / f"{name}-{self.starts}.log"
        log = self.logpaths[name].open("wb")
        process = subprocess.Popen(
            [str(BIN), *args],
            env={**self.env, **(env or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: the JVM dies with it
        )
        self.processes[name] = process
        self.logfiles[name] = log
        return process

    def cli(self, *args: str) -> str:
        done = subprocess.run(
            [str(BIN), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return done.stdout

    def create_key(self, org: str) -> str:
        return self.cli("keys", "create", "--org", org).strip().splitlines()[-1]

    def start_up(self) -> None:
        self._spawn("up", "up", "--port", str(self.port))
        self.wait_ready()

    def start_api(self) -> None:
        self._spawn("api", "api", "--port", str(self.port))
        self.wait_ready()

    def start_worker(self, name: str = "worker", env: dict[str, str] | None = None) -> None:
        """A worker process; give each of several at once its own `name`; `env` adds to ours."""
        self._spawn(name, "worker", env=env)

    def log(self, name: str) -> str:
        """The whole log of the running (or last) process called `name`."""
        return self.logpaths[name].read_text(errors="replace")

    def wait_ready(self) -> None:
        def ready() -> bool:
            try:
                return httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(ready, 60, "the API to be ready")

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        process = self.processes.pop(name)
        os.killpg(process.pid, sig)
        process.wait(timeout=30)
        self.logfiles.pop(name).close()

    def stop(self) -> None:
        for name in list(self.processes):
            process = self.processes[name]
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait(timeout=10)
            del self.processes[name]
            self.logfiles.pop(name).close()

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-3000:] for p in self.home.glob("*.log"))

    def client(self, key: str) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=60
        )
