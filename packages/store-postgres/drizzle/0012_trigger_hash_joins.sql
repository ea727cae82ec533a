-- Hand-written. The count trigger joins the statement's old and new rows, two transition tables without statistics.
-- PL/pgSQL plans that join once per connection, for the row count of the first write it sees: a connection whose
-- first write was one run kept a nested loop, and each later write of n runs then compared n * n rows (a write of 256
-- runs spent 35-50 ms in it instead of 1-2). Without nested loops the planner hashes whatever the first count was.
ALTER FUNCTION "docket_count_runs"() SET enable_nestloop = off;
