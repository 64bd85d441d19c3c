"""Registers the fixtures of tests/fixtures/ for every test (no test module imports another)."""

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
