"""Fair use per org: a request rate (`rate.admit`, from the auth dependency) and a cap on
queued + running jobs (`inflight.job_backlog`, at enqueue), both 429 with `Retry-After` beyond
them, so one org's flood cannot starve the others; the same count of jobs in flight sets the
broker priority of the org's next job (`inflight.broker_priority`). Settings:
`ICEBATCH_RATE_LIMIT_*`, `ICEBATCH_MAX_INFLIGHT_JOBS_PER_ORG`, per-org overrides in
`ICEBATCH_ORG_LIMITS`."""
