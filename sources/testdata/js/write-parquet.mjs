// Written by parquetjs (@dsnp/parquetjs 1.8.9 on npm), a Parquet writer that is not Arrow's: no
// ARROW:schema metadata, x as a bare repeated float field (no LIST group), labels and ids as
// optional UTF8 strings, one label missing (unlabeled), one row a late label (no x).
import parquet from '@dsnp/parquetjs';
const schema = new parquet.ParquetSchema({
  id: { type: 'UTF8' },
  x: { type: 'FLOAT', repeated: true },
  label: { type: 'UTF8', optional: true },
});
const w = await parquet.ParquetWriter.openFile(schema, 'parquetjs-dense.parquet', { rowGroupSize: 2 });
await w.appendRow({ id: 'r1', x: [0, 1, 2, 3], label: 'a' });
await w.appendRow({ id: 'r2', x: [1, 1, 1, 1] });
await w.appendRow({ id: 'r3', x: [4, 3, 2, 1], label: 'b' });
await w.appendRow({ id: 'r2', x: [], label: 'b' });
await w.appendRow({ id: 'r4', x: [0, 2, 2, 0], label: 'a' });
await w.close();
