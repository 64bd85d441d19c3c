"""An idle keep-alive connection stays open longer than clients keep theirs
(ICEBATCH_API_KEEPALIVE_SECONDS): a client that reuses one near its own limit must not send on a
connection the API is closing (a reset, seen in CI as `Connection reset by peer` on a GET)."""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.fixtures.service import embedded_env, free_port


def test_the_api_keeps_idle_connections_longer_than_httpx_keeps_them() -> None:
    from app.config import Settings

    expiry = httpx.Limits().keepalive_expiry  # httpx's default, the SDK's too
    assert expiry is not None
    assert Settings().api_keepalive_seconds > expiry
    assert Settings().api_keepalive_seconds > 60  # a load balancer's idle timeout in front


def healthz(conn: http.client.HTTPConnection) -> int:
    conn.request("GET", "/healthz")
    answer = conn.getresponse()
    answer.read()
    return answer.status


def test_the_api_process_closes_an_idle_connection_after_its_setting(tmp_path: Path) -> None:
    env = {**os.environ, **embedded_env(), "ICEBATCH_HOME": str(tmp_path)}
    env["ICEBATCH_API_KEEPALIVE_SECONDS"] = "1"  # uvicorn's own default would keep it for 5 s
    port = free_port()
    argv = [sys.executable, "-m", "app.cli", "serve", "--port", str(port)]
    log = (tmp_path / "api.log").open("wb")
    api = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert api.poll() is None, (tmp_path / "api.log").read_text()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                assert healthz(conn) == 200
                break
            except OSError:
                conn.close()
                assert time.monotonic() < deadline, "the API did not start"
                time.sleep(0.2)
        sock = conn.sock
        assert healthz(conn) == 200
        assert conn.sock is sock  # the same connection, kept alive between requests
        time.sleep(2.5)
        sock.settimeout(0.2)  # open, recv would time out; closed, it returns b""
        assert sock.recv(1) == b""  # closed by the API, idle past its setting
        conn.close()
    finally:
        api.terminate()
        api.wait(timeout=30)
        log.close()
