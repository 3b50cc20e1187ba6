"""The Tool Caller: one call of a tool for every row of a table, rows turned into arguments and results into
columns."""
