"""The audit trail on the worker side: old events moved to the org's Iceberg table."""
