"""Log lines: JSON objects from stdlib and structlog loggers alike, the request id of the HTTP
request they were logged in, and no secret in any field."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.logs import REDACTED, configure_logging, redact_text, resolve_format
from app.request_context import RequestIdMiddleware

KEY = "ib_k3y0prefix_" + "S3cr3t-" * 6


@pytest.fixture
def lines() -> Iterator[io.StringIO]:
    """This process's logging, configured as the product does, into a buffer; put back after."""
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    stream = io.StringIO()
    configure_logging("json", "DEBUG", stream)
    yield stream
    root.handlers, root.level = saved
    structlog.reset_defaults()
    structlog.contextvars.clear_contextvars()


def parsed(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_stdlib_and_structlog_lines_are_json_with_context(lines: io.StringIO) -> None:
    with structlog.contextvars.bound_contextvars(job_id="j1", request_id="r1"):
        logging.getLogger("workers.something").info("rows %s of %d", "a", 3)
        structlog.get_logger("app.x").warning("native", count=2)
    logging.getLogger("outside").error("no context")
    first, second, third = parsed(lines)
    assert first == {
        "event": "rows a of 3",
        "level": "info",
        "logger": "workers.something",
        "job_id": "j1",
        "request_id": "r1",
        "timestamp": first["timestamp"],
    }
    assert first["timestamp"].endswith("Z")
    assert second["event"] == "native"
    assert (second["count"], second["job_id"], second["logger"]) == (2, "j1", "app.x")
    assert "job_id" not in third
    assert third["level"] == "error"


def test_secrets_never_reach_a_line(lines: io.StringIO) -> None:
    log = logging.getLogger("leaky")
    log.info("connecting to %s", "postgresql://icebatch:hunter2@db:5432/icebatch")
    log.info("header Authorization: Bearer %s", KEY)
    structlog.get_logger("leaky").info("request", authorization=f"Bearer {KEY}", headers={"x": KEY})
    try:
        raise ValueError(f"bad key {KEY} for redis://:hunter2@cache:6379/0")
    except ValueError:
        log.exception("failed")
    text = lines.getvalue()
    assert "hunter2" not in text
    assert "S3cr3t" not in text
    records = parsed(lines)
    assert records[0]["event"] == f"connecting to postgresql://icebatch:{REDACTED}@db:5432/icebatch"
    assert records[1]["event"] == f"header Authorization: Bearer {REDACTED}"
    assert records[2]["authorization"] == REDACTED
    assert records[2]["headers"] == {"x": f"ib_k3y0prefix_{REDACTED}"}
    assert "ValueError: bad key ib_k3y0prefix_" in records[3]["exception"]


def test_redact_text_leaves_ordinary_text_alone() -> None:
    plain = "table ib_pg.org_1.events, url http://127.0.0.1:8000/v1/jobs?limit=5 user@example"
    assert redact_text(plain) == plain


def test_a_line_logged_during_a_request_carries_its_request_id(lines: io.StringIO) -> None:
    api = FastAPI()

    @api.get("/work")
    def work() -> dict[str, str]:
        logging.getLogger("app.endpoint").info("working")
        return {}

    api.add_middleware(RequestIdMiddleware)
    with TestClient(api) as client:
        ids = [client.get("/work").headers["x-request-id"] for _ in range(2)]
    logged = [r["request_id"] for r in parsed(lines) if r["event"] == "working"]
    assert logged == ids
    assert len(set(ids)) == 2


def test_an_unhandled_error_is_logged_with_its_request_id(lines: io.StringIO) -> None:
    api = FastAPI()

    @api.get("/boom")
    def boom() -> None:
        raise RuntimeError("boom")

    api.add_middleware(RequestIdMiddleware)
    with TestClient(api, raise_server_exceptions=False) as client:
        response = client.get("/boom")
    assert response.status_code == 500
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["x-request-id"] in response.json()["detail"]
    (line,) = [r for r in parsed(lines) if r["event"] == "unhandled error in GET /boom"]
    assert line["level"] == "error"
    assert line["request_id"] == response.headers["x-request-id"]
    with TestClient(api) as client, pytest.raises(RuntimeError, match="boom"):
        client.get("/boom")  # the error still reaches the server (and the tests)
    assert "RuntimeError: boom" in line["exception"]


def test_an_access_line_has_its_fields(lines: io.StringIO) -> None:
    access = logging.getLogger("uvicorn.access")
    access.info('%s - "%s %s HTTP/%s" %d', "10.0.0.1:5000", "GET", "/v1/jobs?limit=2", "1.1", 200)
    (line,) = parsed(lines)
    assert (line["method"], line["path"], line["status"]) == ("GET", "/v1/jobs?limit=2", 200)
    assert line["event"] == '10.0.0.1:5000 - "GET /v1/jobs?limit=2 HTTP/1.1" 200'
    assert "positional_args" not in line


def test_console_format_is_redacted_too(lines: io.StringIO) -> None:
    stream = io.StringIO()
    configure_logging("console", "INFO", stream)
    with structlog.contextvars.bound_contextvars(request_id="r1"):
        try:
            raise ValueError(KEY)
        except ValueError:
            logging.getLogger("app.x").exception("to %s", "redis://:hunter2@cache:6379/0")
    text = stream.getvalue()
    assert f"to redis://:{REDACTED}@cache:6379/0" in text
    assert "request_id=r1" in text
    assert "ValueError: ib_k3y0prefix_" in text
    assert "S3cr3t" not in text
    assert "hunter2" not in text
    assert lines.getvalue() == ""  # the buffer of the JSON configuration was replaced


def test_auto_format_is_console_on_a_terminal_only() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert resolve_format("auto", Terminal()) == "console"
    assert resolve_format("auto", io.StringIO()) == "json"
    assert resolve_format("console", io.StringIO()) == "console"
