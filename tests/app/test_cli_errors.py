"""The `icebatch` CLI as a process, on errors caught before or without an API: one line on
stderr (what is wrong, what to do), the exit code README lists, never a traceback; and a client
command that does not import the server stack (its start-up)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fixtures.service import BIN

UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing listens there
# what a client command must not import: the server stack and the SDK's optional halves
HEAVY = (
    "pyspark",
    "pyiceberg",
    "pyarrow",
    "sqlalchemy",
    "alembic",
    "structlog",
    "fastapi",
    "celery",
    "pydantic_settings",
    "app.config",
    "app.db",
    "icebatch_client.aio",
)


def icebatch(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ICEBATCH_")}
    return subprocess.run(
        [str(BIN), *args],
        env={**clean, "ICEBATCH_CONFIG": str(tmp_path / "none.toml"), **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: "), done.stderr
    return lines[0]


def test_an_unknown_extension_names_the_format_option(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("event_id\n1\n")
    done = icebatch(
        tmp_path, "--url", UNREACHABLE, "--api-key", "ib_x_y", "batches", "upload", "events",
        "data.txt",
    )  # fmt: skip
    assert done.returncode == 2
    line = one_error_line(done)
    assert "'data.txt'" in line
    assert "--format csv, json or parquet" in line
    assert "format=" not in line
    # a usage error (click's) is one line too, naming the command's help
    usage = icebatch(tmp_path, "batches", "list", "--limit", "many")
    assert usage.returncode == 2
    assert one_error_line(usage) == (
        "error: Invalid value for '--limit': 'many' is not a valid integer. "
        "(see `icebatch batches list --help`)"
    )


def test_no_key_exits_4_and_no_url_exits_2(tmp_path: Path) -> None:
    no_key = icebatch(tmp_path, "--url", UNREACHABLE, "batches", "list")
    assert no_key.returncode == 4
    assert "no API key: run `icebatch login`" in one_error_line(no_key)
    no_url = icebatch(tmp_path, "--api-key", "ib_x_y", "batches", "list")
    assert no_url.returncode == 2
    assert "no API url:" in one_error_line(no_url)


def test_an_empty_values_file_is_named_as_empty(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("\n  \n")
    done = icebatch(
        tmp_path, "--url", UNREACHABLE, "--api-key", "ib_x_y", "privacy", "delete",
        "--dataset", "events", "--column", "user_id", "--values-file", "empty.txt",
    )  # fmt: skip
    assert done.returncode == 2
    line = one_error_line(done)
    assert line == "error: --values-file empty.txt holds no values: put one identity a line"


def test_an_unexpected_failure_is_one_line_and_an_exit_code(tmp_path: Path) -> None:
    """The guard of last resort (app/cli/errors.py) on a server command: a metadata store that
    cannot be reached raises deep in SQLAlchemy, and the user sees one line, exit 5."""
    done = icebatch(
        tmp_path,
        "keys",
        "list",
        ICEBATCH_HOME=str(tmp_path / "home"),
        ICEBATCH_DATABASE_URL="postgresql://nobody@127.0.0.1:9/none",
    )
    assert done.returncode == 5
    line = one_error_line(done)
    assert line.startswith("error: cannot reach the metadata store (")
    assert "ICEBATCH_DATABASE_URL" in line
    # and a client command whose profile file cannot be read: one line, exit 2
    (tmp_path / "dir.toml").mkdir()
    broken = icebatch(tmp_path, "datasets", "list", ICEBATCH_CONFIG=str(tmp_path / "dir.toml"))
    assert broken.returncode == 2
    assert "dir.toml" in one_error_line(broken)


def test_a_client_command_does_not_import_the_server_stack(tmp_path: Path) -> None:
    """What `icebatch batches list` imports up to its first request (an unreachable API with no
    retries: the run ends at the request), as the process's own sys.modules says."""
    seen = tmp_path / "modules.json"
    script = (
        "import atexit, json, sys\n"
        f"dump = lambda: open({str(seen)!r}, 'w').write(json.dumps(sorted(sys.modules)))\n"
        "atexit.register(dump)\n"
        "from icebatch_client._base import Base\n"
        "Base.__init__.__kwdefaults__['max_retries'] = 0\n"
        "from app.cli import main\n"
        f"sys.argv = ['icebatch', '--url', {UNREACHABLE!r}, '--api-key', 'ib_x_y', "
        "'batches', 'list']\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    modules = set(json.loads(seen.read_text()))
    assert "icebatch_client.client" in modules  # the command did build its client
    assert not [m for m in HEAVY if m in modules]
    assert done.returncode == 5, done.stderr
    assert "cannot reach the API at http://127.0.0.1:9" in one_error_line(done)


def _modules_after(tmp_path: Path, code: str, **env: str) -> set[str]:
    """The modules a process running `code` had loaded when it ended."""
    seen = tmp_path / "modules.json"
    script = (
        "import atexit, json, sys\n"
        f"dump = lambda: open({str(seen)!r}, 'w').write(json.dumps(sorted(sys.modules)))\n"
        "atexit.register(dump)\n" + code
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ICEBATCH_")}
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(seen.read_text()))


def test_keys_create_and_a_worker_start_without_the_web_stack(tmp_path: Path) -> None:
    """Processes without an HTTP server start without FastAPI (about 0.2 s of each start), and
    `keys create` on a current store without PyIceberg: the test suite starts dozens of each."""
    create = (
        "from app.cli import main\n"
        "sys.argv = ['icebatch', 'keys', 'create', '--org', 'acme']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
    )
    home = str(tmp_path / "home")
    first = _modules_after(tmp_path, create, ICEBATCH_HOME=home)
    assert "pyiceberg.catalog.sql" in first  # a new store: the catalog made its tables
    again = _modules_after(tmp_path, create, ICEBATCH_HOME=home)
    assert "app.keys.issue" in again  # it did make a key
    assert not [m for m in ("fastapi", "starlette.routing", "pyiceberg") if m in again]
    worker = _modules_after(tmp_path, "import workers.celery_app\n", ICEBATCH_HOME=home)
    assert "app.batches.service" in worker
    assert "fastapi" not in worker
