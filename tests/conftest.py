"""Registers the fixtures of tests/fixtures/ for every test (no test module imports another)."""

import os
import tempfile

# embedded mode's default store is per user (~/.local/share/icebatch): a test that forgets
# ICEBATCH_HOME writes into a folder of its own, never into the real home
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="icebatch-test-data-")

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
