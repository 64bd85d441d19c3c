"""Structured logs: one JSON object per line (or a console rendering), for the API and workers.

Every stdlib `logging` call goes through structlog's `ProcessorFormatter`, so third-party lines
(uvicorn, Celery, SQLAlchemy) come out in the same shape as ours. Each line carries the context
bound to it: the HTTP request id in the API (`app.request_context`), and the job's request id,
id and kind in a worker (`workers.runtime.run_job` binds them). Secrets never reach the output:
`redact` masks API keys, bearer tokens and passwords in URLs wherever they appear in a line.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Mapping
from typing import Any, TextIO

import structlog
from structlog.types import EventDict, Processor, WrappedLogger

from app.request_context import client_request_id, current_request_id

REDACTED = "[redacted]"
# an API key is `ib_<prefix>_<secret>` (app/auth.py): the prefix names it, the secret is masked
_API_KEY = re.compile(r"\b(ib_[A-Za-z0-9]+_)[A-Za-z0-9_-]{16,}")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+")
_URL_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^:/?#@\s\"']*:)[^@\s/\"']+@")
_SECRET_KEYS = re.compile(r"(?i)authorization|password|passwd|secret|api[_-]?key|cookie")
# chatty at INFO, and never what an operator looks for
_QUIET = ("py4j", "pyiceberg", "urllib3", "httpx", "httpcore", "kombu", "amqp", "alembic")
_UVICORN = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")


def redact_text(text: str) -> str:
    """`text` with API keys, bearer tokens and passwords in URLs masked. Each pattern runs only
    on text that holds its mark (every field of every line goes through here)."""
    if "bearer" in text.lower():
        text = _BEARER.sub(rf"\1{REDACTED}", text)
    if "@" in text:
        text = _URL_PASSWORD.sub(rf"\1{REDACTED}@", text)
    if "ib_" in text:
        text = _API_KEY.sub(rf"\1{REDACTED}", text)
    return text


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {
            k: REDACTED if _SECRET_KEYS.search(str(k)) else _redact_value(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_redact_value(v) for v in value]
    return value


def redact(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
    """Mask secrets in every field of the line (values of secret-named fields entirely)."""
    for key in list(event_dict):
        if key.startswith("_"):
            continue  # structlog's own bookkeeping (the stdlib record), never rendered
        if _SECRET_KEYS.search(key):
            event_dict[key] = REDACTED
        else:
            event_dict[key] = _redact_value(event_dict[key])
    return event_dict


def add_request_id(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
    """The HTTP request being served, when the line is logged inside one."""
    request_id = current_request_id()
    if request_id is not None:
        event_dict.setdefault("request_id", request_id)
        client_id = client_request_id()
        if client_id is not None:
            event_dict.setdefault("client_request_id", client_id)
    return event_dict


def access_fields(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
    """Uvicorn's access line as fields: client, method, path, status."""
    args = event_dict.pop("positional_args", None)  # a stdlib record's (pass_foreign_args)
    record = event_dict.get("_record")
    if record is not None and record.name == "uvicorn.access" and len(args or ()) == 5:
        client, method, path, _version, status = args
        event_dict.update({"client": client, "method": method, "path": path, "status": status})
    return event_dict


def _shared() -> list[Processor]:
    return [
        structlog.contextvars.merge_contextvars,
        add_request_id,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        access_fields,
    ]


def resolve_format(setting: str, stream: TextIO) -> str:
    """`json` or `console`: `auto` means console on a terminal, JSON anywhere else."""
    if setting in ("json", "console"):
        return setting
    return "console" if stream.isatty() else "json"


def formatter(fmt: str) -> structlog.stdlib.ProcessorFormatter:
    """The formatter of every handler: structlog's processors applied to stdlib records too."""
    renderer: Processor = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        # the trace is already text (format_exc_info), redacted like every field
        else structlog.dev.ConsoleRenderer(
            colors=False, exception_formatter=structlog.dev.plain_traceback
        )
    )
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_shared(),
        pass_foreign_args=True,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            redact,
            renderer,
        ],
    )


def configure_logging(
    fmt: str | None = None, level: str | None = None, stream: TextIO | None = None
) -> None:
    """Send every log line of this process, stdlib and structlog alike, to `stream` (stderr)
    in the configured format (`ICEBATCH_LOG_FORMAT`, `ICEBATCH_LOG_LEVEL`)."""
    from app.config import get_settings

    settings = get_settings()
    stream = stream or sys.stderr
    chosen = resolve_format(fmt or settings.log_format, stream)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter(chosen))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel((level or settings.log_level).upper())
    for name in _UVICORN:  # uvicorn installs its own handlers: ours, through the root, instead
        logger = logging.getLogger(name)
        logger.handlers = []
        logger.propagate = True
    for name in _QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.captureWarnings(True)
    structlog.configure(
        processors=[*_shared(), structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
