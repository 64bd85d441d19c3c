"""Spark side of the workers: one long-lived session per process, and the jobs it runs."""
