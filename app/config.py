"""Settings: embedded defaults (SQLite, a broker with no server, local Spark) overridable by env."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class OrgLimits(BaseModel):
    """One org's fair-use limits; a field left out keeps the deployment's default."""

    rate_limit_per_second: float | None = Field(default=None, ge=0)
    rate_limit_burst: int | None = Field(default=None, ge=1)
    max_inflight_jobs: int | None = Field(default=None, ge=0)


def default_home() -> Path:
    """Embedded mode's state folder, one per user wherever a command runs:
    `$XDG_DATA_HOME/icebatch`, else `~/.local/share/icebatch` (a relative `XDG_DATA_HOME` is
    ignored, as the XDG spec says). `ICEBATCH_HOME` overrides it."""
    base = os.environ.get("XDG_DATA_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "share"
    return root / "icebatch"


class Settings(BaseSettings):
    """Icebatch configuration, read from `ICEBATCH_*` environment variables."""

    model_config = SettingsConfigDict(env_prefix="ICEBATCH_", extra="ignore")

    home: Path = Field(
        default_factory=default_home,
        description="State folder of embedded mode [$XDG_DATA_HOME/icebatch, else "
        "~/.local/share/icebatch].",
    )
    database_url: str = Field(default="", description="SQLAlchemy URL of the metadata store.")
    broker_url: str = Field(default="", description="Celery broker URL.")
    warehouse: str = Field(default="", description="Iceberg warehouse location (URI).")
    staging_dir: Path = Field(default=Path(""), description="Where uploaded batch files wait.")
    spark_master: str = "local[*]"
    spark_driver_memory: str = "4g"
    spark_jars_dir: Path = PROJECT_ROOT / "build" / "jars"
    # on a cluster (spark://, yarn, k8s://): the address executors reach this worker's driver
    # at, what each executor gets, the Python executors run (with the packages of
    # deploy/executor-requirements.txt; Icebatch's own code is shipped by the session), any
    # other Spark setting (JSON object), and how long a job waits with no executor at all
    spark_driver_host: str = ""
    spark_executor_memory: str = "1g"
    spark_executor_cores: int = Field(default=1, ge=1)
    spark_cores_max: int = Field(default=0, ge=0, description="0: no cap (standalone).")
    spark_executor_python: str = ""
    spark_shuffle_partitions: int = Field(default=8, ge=1)
    spark_conf: dict[str, str] = Field(default_factory=dict)
    # more JVM options for the driver and a cluster's executors (e.g. the tests' JIT and GC
    # choices for short-lived JVMs: docs/testing.md)
    spark_java_options: str = ""
    # more jars for every session (comma-separated paths or URLs: an object store's FileIO,
    # docs/object-storage.md), shipped to executors with Icebatch's own through `spark.jars`
    spark_extra_jars: str = ""
    spark_executor_wait_seconds: float = Field(default=300.0, gt=0)
    # a worker builds its SparkSession when it starts (workers/spark/warmup.py), not in its
    # first job
    spark_warm_up: bool = True
    catalog_name: str = "icebatch"
    max_file_bytes: int = 5 * 1024**3
    max_batch_files: int = 1000
    job_max_attempts: int = 3
    heartbeat_seconds: float = 5.0
    stale_after_seconds: float = 60.0
    reconcile_seconds: float = 5.0
    outbox_grace_seconds: float = 10.0
    max_error_rows: int = 100
    # an ingest or replay whose input files total at most this many bytes (CSV or Parquet, a
    # schema of top-level primitives) is checked in Python and written with PyIceberg, with
    # no Spark job (workers/uploads/small.py); 0: always Spark
    small_batch_bytes: int = Field(default=4 * 1024 * 1024, ge=0)
    db_pool_size: int = 20
    db_max_overflow: int = 20
    # an API process opens its db_pool_size connections to PostgreSQL when it starts, as a
    # fixed-size pool does: the first burst of requests does not wait for new backends
    db_pool_prefill: bool = True
    # a metadata store that is down must answer fast (503), never hang a request or a worker
    db_connect_timeout_seconds: int = 5
    db_pool_timeout_seconds: float = 10.0
    # a request beyond db_pool_size + db_max_overflow in flight waits this long, then 503
    api_queue_seconds: float = 5.0
    # an idle HTTP keep-alive connection stays open this long: longer than clients keep theirs
    # (httpx: 5 s, load balancers: 60 s), so a client never sends on one the API is closing
    api_keepalive_seconds: int = Field(default=75, ge=1)
    db_statement_timeout_seconds: float = 120.0
    store_retry_after_seconds: int = 5
    commit_lease_seconds: float = 30.0
    # added to this process's wall clock (app.clock.now): how the tests skew a process's clock
    clock_offset_seconds: float = 0.0
    max_group_tombstones: int = 500_000
    gdpr_evict_days: int = 30
    # retention (a dataset's own policy overrides these)
    retention_min_snapshots: int = 5
    retention_max_snapshot_age_seconds: float = 7 * 24 * 3600
    orphan_age_seconds: float = 24 * 3600
    consumer_pin_max_age_seconds: float = 14 * 24 * 3600
    # rewrites (vacuum, compaction)
    rewrite_target_file_bytes: int = 128 * 1024**2
    # automatic maintenance (Celery beat): a dataset is vacuumed when its active tombstones
    # reach the count, or a tombstone's evict_by is closer than the lead time
    scheduler_seconds: float = 60.0
    auto_vacuum_tombstones: int = 10_000
    auto_vacuum_evict_lead_seconds: float = 2 * 24 * 3600
    auto_expire: bool = True
    # the scheduler holds a dataset's automatic compaction and expire back while restatements of
    # it are in flight (a burst's group commits go first: each took a slot for 5-12 s and the
    # commit lease), unless the last one of that kind started this long ago; 0: never held back
    maintenance_defer_seconds: float = Field(default=300.0, ge=0)
    # automatic bin-pack compaction of a partition holding this many small files (under 3/4 of
    # `rewrite_target_file_bytes`: replays and small batches, each a file); 0: off
    auto_compact_small_files: int = Field(default=16, ge=0)
    # tombstones become Iceberg position deletes (every engine hides restated rows) by a job
    # queued after each tombstone commit (app.lake.materialize_plan); off: only Icebatch's do
    materialize_deletes: bool = True
    # a restatement committer runs the dataset's materializer itself, between two groups, once
    # its job has waited this long (a worker draining a flood of restatements has no slot for
    # it; see workers/restatements/committer.drain); 0: never
    materialize_inline_after_seconds: float = Field(default=10.0, ge=0)
    # a materialize asked for within this long of the dataset's last one starting waits for the
    # rest of it (its message carries a countdown): a burst of group commits then shares one
    # materialize every few seconds instead of one each, which took a quarter of the workers'
    # slots during bursts (bench.scale --mix); 0: at once
    materialize_debounce_seconds: float = Field(default=5.0, ge=0)
    # the lifetime of a token from the Iceberg REST catalog's /iceberg/v1/oauth/tokens
    catalog_token_seconds: int = Field(default=3600, ge=60)
    # a batch still `loading` this long after it was opened (no file, or no COMPLETE) is stuck:
    # the UI and `icebatch doctor` flag it, and the scheduler aborts it
    batch_loading_ttl_seconds: float = Field(default=24 * 3600, gt=0)
    # a worker's in-memory indexes of tombstoned columns, per data file (app.lake.column_index):
    # the committer's rows-hidden counts and the materializer look ids up instead of reading
    # every file whose bounds may hold them; 0: off
    column_index_mb: int = Field(default=512, ge=0)
    # logs: `auto` is console on a terminal, JSON lines anywhere else
    log_format: Literal["auto", "json", "console"] = "auto"
    log_level: str = "INFO"
    # operator metrics (`/metrics`): gathered from the metadata store and Iceberg metadata at
    # most once per cache period; per-dataset series for at most `metrics_max_datasets` datasets
    metrics_cache_seconds: float = 15.0
    metrics_max_datasets: int = 100
    # the worker's own Prometheus endpoint (job durations, queue waits, lease waits); 0: off
    worker_metrics_port: int = 0
    # the CPU priority (nice) `icebatch worker` and `icebatch up` give workers and their Spark:
    # on a host shared with the API, a Spark job must not starve the pollers; 0: unchanged
    worker_nice: int = Field(default=10, ge=0, le=19)
    # slots of a worker run with `--concurrency` N > 1 that vacuum, compaction and expire jobs
    # never take (they run in at most N minus this many at once; at least one): restatements,
    # ingests, materializations and CDC find a slot while they run. One that finds none free
    # goes back to the queue for `maintenance_slot_retry_seconds`
    worker_reserved_slots: int = Field(default=1, ge=0)
    maintenance_slot_retry_seconds: float = Field(default=2.0, gt=0)
    # fair use per org (app.limits): requests per second with bursts, queued + running jobs;
    # 0 turns a limit off. `org_limits` overrides them per org, as JSON:
    # ICEBATCH_ORG_LIMITS='{"acme": {"rate_limit_per_second": 500, "max_inflight_jobs": 50}}'
    rate_limit_per_second: float = Field(default=100.0, ge=0)
    rate_limit_burst: int = Field(default=200, ge=1)
    max_inflight_jobs_per_org: int = Field(default=1000, ge=0)
    inflight_retry_after_seconds: int = Field(default=10, ge=1)
    org_limits: dict[str, OrgLimits] = Field(default_factory=dict)
    # CDC replication (app/cdc, workers/cdc): the largest events request, how often the beat
    # looks for tenants with work, and the most events one dumper or processor run takes
    cdc_max_request_bytes: int = Field(default=64 * 1024**2, ge=1024)
    cdc_schedule_seconds: float = Field(default=2.0, gt=0)
    cdc_max_events_per_run: int = Field(default=500_000, ge=1)
    cdc_compact_files: int = Field(default=16, ge=1)  # files in a raw-table partition: compact
    # the replication lag history (GET /v1/cdc/lag/history): the beat's CDC pass records each
    # tenant's lag at most this often, and forgets samples older than the retention
    # Debezium Server's Redis sink: the Redis its streams are in (default: the broker's, when
    # it is Redis), entries read per stream per round, and how long an entry delivered to a
    # consumer that stopped acknowledging stays with it before another claims it
    cdc_streams_redis_url: str = Field(default="", description="Redis of the Debezium streams.")
    cdc_stream_batch: int = Field(default=2000, ge=1, le=100_000)
    cdc_stream_claim_idle_seconds: float = Field(default=60.0, gt=0)
    cdc_lag_sample_seconds: float = Field(default=30.0, gt=0)
    cdc_lag_retention_seconds: float = Field(default=86_400.0, gt=0)

    # pruning the metadata store (app/pruning/service.py: the rule of each table), a pass every
    # `prune_seconds` on the beat, deleting at most `prune_chunk_rows` rows per statement
    prune_seconds: float = Field(default=3600.0, gt=0)
    prune_chunk_rows: int = Field(default=1000, ge=1)
    job_retention_days: float = Field(default=30.0, gt=0)
    outbox_retention_days: float = Field(default=1.0, gt=0)
    idempotency_key_retention_days: float = Field(default=1.0, gt=0)
    restatement_retention_days: float = Field(default=30.0, gt=0)
    privacy_job_retention_days: float = Field(default=365.0, gt=0)
    # the record of an expired snapshot (a 410 instead of a 404) is forgotten this long after
    # its expiry, unless a batch, restatement or consumer names it or it is the dataset's oldest
    expired_snapshot_retention_days: float = Field(default=30.0, gt=0)
    # an accepted CDC chunk's row (its sequence range and times), once staged and applied
    cdc_chunk_retention_days: float = Field(default=1.0, gt=0)
    # audit events older than this move to the org's Iceberg table `<org>._audit` (still listed
    # by GET /v1/audit), `audit_archive_chunk_rows` events per Iceberg append
    audit_retention_days: float = Field(default=90.0, gt=0)
    audit_archive_chunk_rows: int = Field(default=10000, ge=1)

    @model_validator(mode="after")
    def _embedded_defaults(self) -> Settings:
        self.home = self.home.expanduser().resolve()
        if not self.database_url:
            self.database_url = f"sqlite:///{self.home / 'icebatch.db'}"
        if not self.broker_url:
            self.broker_url = f"sqla+sqlite:///{self.home / 'broker.db'}"
        if not self.cdc_streams_redis_url and self.broker_url.startswith(("redis://", "rediss://")):
            self.cdc_streams_redis_url = self.broker_url
        if not self.warehouse:
            self.warehouse = (self.home / "warehouse").as_uri()
        if not str(self.staging_dir) or str(self.staging_dir) == ".":
            self.staging_dir = self.home / "staging"
        return self

    @property
    def is_sqlite(self) -> bool:
        return make_url(self.database_url).get_backend_name() == "sqlite"

    @property
    def sqlalchemy_url(self) -> str:
        """The metadata store URL with an explicit driver (psycopg 3 for PostgreSQL)."""
        url = make_url(self.database_url)
        if url.drivername in ("postgresql", "postgres"):
            url = url.set(drivername="postgresql+psycopg")
        return url.render_as_string(hide_password=False)

    @property
    def jdbc_url(self) -> str:
        """The same database as a JDBC URL, for Spark's Iceberg JDBC catalog."""
        url = make_url(self.database_url)
        if url.get_backend_name() == "sqlite":
            return f"jdbc:sqlite:{url.database}"
        host = url.host or "127.0.0.1"
        port = url.port or 5432
        return f"jdbc:postgresql://{host}:{port}/{url.database}"

    @property
    def jdbc_properties(self) -> dict[str, str]:
        url = make_url(self.database_url)
        props: dict[str, str] = {}
        if url.username:
            props["user"] = url.username
        if url.password:
            props["password"] = url.password
        return props

    def ensure_dirs(self) -> None:
        """Create the local folders embedded mode writes to."""
        self.home.mkdir(parents=True, exist_ok=True)
        self.staging_dir.mkdir(parents=True, exist_ok=True)
        if self.warehouse.startswith("file://"):
            Path(self.warehouse.removeprefix("file://")).mkdir(parents=True, exist_ok=True)


@lru_cache
def get_settings() -> Settings:
    settings = Settings()
    settings.ensure_dirs()
    return settings
