-- The peer of the full-closure benchmark (bench/run-engine.sh): sqlite3's recursive CTE over
-- the same edges. Run from the folder holding edges.csv ("src,dst" lines):
--   sqlite3 :memory: < tc-sqlite.sql
-- Prints 2493790 for the seed-42 random 2,000 / 4,000 graph.
.mode csv
create table edge(a int, b int);
.import edges.csv edge
create index e1 on edge(a);
select count(*) from (with recursive reach(x, y) as (
  select a, b from edge
  union
  select r.x, e.b from reach r join edge e on e.a = r.y)
select * from reach);
