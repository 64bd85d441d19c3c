"""Fair use per org: a request rate (`rate.admit`, from the auth dependency) and a cap on
queued + running jobs (`inflight.require_job_room`, at enqueue), both 429 with `Retry-After`
beyond them, so one org's flood cannot starve the others. Settings: `ICEBATCH_RATE_LIMIT_*`,
`ICEBATCH_MAX_INFLIGHT_JOBS_PER_ORG`, per-org overrides in `ICEBATCH_ORG_LIMITS`."""
