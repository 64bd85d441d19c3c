"""`icebatch doctor`: check that the metadata store, the Iceberg catalog and the warehouse agree,
say what is wrong in plain words, and repair what the system itself would repair."""
