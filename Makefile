# Developer shortcuts; README gives the same commands in full.
.PHONY: setup test test-fast lint up bench

setup:
	bash scripts/setup.sh

test:
	bash scripts/test.sh

# the fast subset: no Spark, no processes, no PostgreSQL or Redis (embedded store only)
test-fast:
	ICEBATCH_TEST_STORES=embedded .venv/bin/python -m pytest -m "not e2e and not spark" -q

lint:
	.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/mypy app workers tests bench clients/python/icebatch_client && .venv/bin/lint-imports --no-cache

up:
	.venv/bin/icebatch up

bench:
	.venv/bin/python -m bench.ingest
