"""Every error of the `icebatch` CLI as one line on stderr (what is wrong, what to do, the
request id when there is one) and an exit code of `Exit`: never a traceback (ICEBATCH_DEBUG=1
shows it for a bug report)."""

from __future__ import annotations

import os
import sys
from enum import IntEnum
from typing import Any


class Exit(IntEnum):
    """The `icebatch` commands' exit codes (README: "Exit codes")."""

    OK = 0
    FAILED = 1  # the batch or job ended failed (or an unexpected error: a bug)
    INVALID = 2  # usage, or the API refused the input (400, 409, 410, 413, 422)
    NOT_FOUND = 3
    DENIED = 4  # no key, a wrong one (401), or one whose scope is too small (403)
    UNAVAILABLE = 5  # unreachable, 429/503 after retries, or a server error


class MigrationFailed(Exception):
    """The metadata store was reached, and bringing it to the newest schema failed."""


_HINTS = {
    401: "check the key: --api-key, ICEBATCH_API_KEY or `icebatch login` "
    "(a new one: `icebatch keys create --org ORG`)",
    403: "use a key of a larger scope (`icebatch keys create --scope write|admin`)",
    404: "check the id or name (the `list` commands show them)",
    429: "your organization is over its fair-use rate: try again in a moment",
}


def code_for_status(status: int) -> Exit:
    """The exit code of an API answer that is not a success."""
    if status == 404:
        return Exit.NOT_FOUND
    if status in (401, 403):
        return Exit.DENIED
    if status in (429, 503) or status >= 500:
        return Exit.UNAVAILABLE
    return Exit.INVALID


def describe(exc: BaseException) -> tuple[str, Exit]:
    """The one line saying what went wrong and what to do, and the exit code."""
    from icebatch_client import IcebatchError

    if isinstance(exc, IcebatchError):
        hint = _HINTS.get(exc.status) or (
            "the service is unavailable: try again later" if exc.status >= 500 else ""
        )
        line = f"{exc.status} {exc.detail}" + (f"; {hint}" if hint else "")
        line += f" (request {exc.request_id})" if exc.request_id else ""
        return line, code_for_status(exc.status)
    httpx = sys.modules.get("httpx")
    if httpx is not None and isinstance(exc, httpx.HTTPError):
        request: Any = getattr(exc, "_request", None)
        where = f" at {request.url.scheme}://{request.url.netloc.decode()}" if request else ""
        return (
            f"cannot reach the API{where} ({exc}): is it running? "
            "(check --url, ICEBATCH_URL or `icebatch login`)",
            Exit.UNAVAILABLE,
        )
    if isinstance(exc, TimeoutError):
        return f"{exc}: wait longer (--timeout) or follow it with `icebatch jobs watch`", (
            Exit.UNAVAILABLE
        )
    if isinstance(exc, ValueError):
        return f"{exc}", Exit.INVALID
    if isinstance(exc, MigrationFailed):
        return f"{exc} (ICEBATCH_DEBUG=1 shows the traceback)", Exit.FAILED
    if type(exc).__name__ == "OperationalError" and type(exc).__module__.startswith("sqlalchemy"):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return (
            f"cannot reach the metadata store ({first}): is the database up? "
            "(check ICEBATCH_DATABASE_URL)",
            Exit.UNAVAILABLE,
        )
    if isinstance(exc, OSError):
        return f"{exc}", Exit.INVALID
    return (
        f"unexpected {type(exc).__name__}: {exc} (a bug: run again with ICEBATCH_DEBUG=1 for "
        "the traceback and report it)",
        Exit.FAILED,
    )


def print_error(line: str) -> None:
    """`error: line` on stderr, one line whatever the terminal's width."""
    import sys

    from rich.console import Console
    from rich.text import Text

    one = " ".join(part.strip() for part in line.splitlines() if part.strip())
    stderr = Console(stderr=True, width=None if sys.stderr.isatty() else 250)
    stderr.print(Text("error", style="bold red") + Text(f": {one}"), soft_wrap=True)


def guarded(command: Any) -> None:
    """Run the CLI (a typer app): a usage error, or an exception that escaped a command, ends
    as one line and an exit code."""
    import click

    try:
        code = command(standalone_mode=False)  # click's errors come here, not to its panels
    except click.UsageError as exc:  # a bad option or argument: exit 2
        where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
        print_error(exc.format_message() + where)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        print_error(exc.format_message())
        sys.exit(exc.exit_code)
    except click.Abort:
        print_error("aborted")
        sys.exit(int(Exit.FAILED))
    except Exception as exc:  # noqa: BLE001 (the guard of last resort: no traceback)
        if os.environ.get("ICEBATCH_DEBUG"):
            raise
        line, code = describe(exc)
        print_error(line)
        sys.exit(int(code))
    sys.exit(code if isinstance(code, int) else 0)  # a command returns None, or typer.Exit's code
