// Written by DuckDB's own Parquet writer (C++, not Arrow's; DuckDB 1.5.6 through @duckdb/node-api
// on npm). The same tables as ../rust: dense rows as FLOAT[4] (a LIST of floats in Parquet) with
// BIGINT labels, one row unlabeled and one a late label (an id seen before, a label, a NULL x);
// documents with string labels and BIGINT ids. DuckDB keeps each table in one row group despite
// ROW_GROUP_SIZE 2. It writes no Arrow IPC without its nanoarrow extension, which this machine cannot
// download.
//
//   npm install @duckdb/node-api@1.5.6 && node write.mjs
import { DuckDBInstance } from '@duckdb/node-api';

const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
await c.run(`COPY (SELECT id, x, label FROM (VALUES
    (1, 'r1', [0, 1, 2, 3]::FLOAT[4], 1::BIGINT),
    (2, 'r2', [1, 1, 1, 1]::FLOAT[4], NULL),
    (3, 'r3', [4, 3, 2, 1]::FLOAT[4], 2),
    (4, 'r2', NULL, 2),
    (5, 'r4', [0, 2, 2, 0]::FLOAT[4], 1)) t(n, id, x, label) ORDER BY n)
  TO 'duckdb-dense.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2)`);
await c.run(`COPY (SELECT text, label, id FROM (VALUES
    ('the cat sat on the mat', 'pets', 1::BIGINT),
    ('a dog ran in the park', NULL, 2),
    ('cats and dogs play', 'pets', 3),
    ('the park is green', 'parks', 4)) t(text, label, id) ORDER BY id)
  TO 'duckdb-text.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2)`);
