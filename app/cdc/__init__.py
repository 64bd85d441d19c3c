"""CDC replication: change events in, a per-tenant lake replica out (DESIGN.md §3)."""
