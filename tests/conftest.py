"""Registers the fixtures of tests/fixtures/ for every test (no test module imports another).

No test touches the real per-user store (`$XDG_DATA_HOME/icebatch`, app/config.py): the tests'
own settings name ICEBATCH_HOME, and anything that reads the default before them (a module's
`get_settings()` at import) finds a data folder under build/ instead of the user's."""

import os
from pathlib import Path

os.environ["XDG_DATA_HOME"] = str(Path(__file__).resolve().parent.parent / "build" / "test-data")


pytest_plugins = [
    "tests.fixtures.schedule",
    "tests.fixtures.environments",
    "tests.fixtures.clients",
    "tests.fixtures.spark",
    "tests.fixtures.service",
    "tests.fixtures.cluster",
    "tests.fixtures.markers",
    "tests.fixtures.private_servers",
    "tests.fixtures.catalog",
]
