// Written by arrow-rs, the Rust Arrow implementation, compiled to WebAssembly in parquet-wasm (0.7.1
// on npm; arrow-rs and parquet-rs 56.2, as the Parquet files say): the tables are built with the
// JavaScript library (apache-arrow 17), handed to parquet-wasm as an IPC stream, written to Parquet
// by the Rust parquet crate (writeParquet), read back by it (readParquet) and written out as an
// Arrow IPC stream by arrow-rs's stream writer (intoIPCStream). parquet-wasm has no IPC file writer.
//
//   npm install parquet-wasm@0.7.1 apache-arrow@17 && node write.mjs
import { tableToIPC, vectorFromArray, Table, Field, FixedSizeList, Float32, Int64, Utf8 } from 'apache-arrow';
import init, * as pw from 'parquet-wasm/esm';
import { readFileSync, writeFileSync } from 'fs';
import { createRequire } from 'module';

// The ESM build, given its WebAssembly module (the package's Node build is CommonJS under
// "type": "module" and does not load).
await init({ module_or_path: readFileSync(createRequire(import.meta.url).resolve('parquet-wasm/esm/parquet_wasm_bg.wasm')) });

function viaRust(table, name) {
  const wasm = pw.Table.fromIPCStream(tableToIPC(table, 'stream'));
  const parquet = pw.writeParquet(wasm);
  writeFileSync(`${name}.parquet`, parquet);
  writeFileSync(`${name}.arrows`, pw.readParquet(parquet).intoIPCStream());
}

// Dense rows as fixed_size_list<float32>[4], int64 labels, one unlabeled row, and a late label: a
// row with an id seen before, a label and a null x.
const x = vectorFromArray([[0, 1, 2, 3], [1, 1, 1, 1], [4, 3, 2, 1], null, [0, 2, 2, 0]],
  new FixedSizeList(4, new Field('item', new Float32(), true)));
const label = vectorFromArray([1n, null, 2n, 2n, 1n], new Int64());
const id = vectorFromArray(['r1', 'r2', 'r3', 'r2', 'r4'], new Utf8());
viaRust(new Table({ id, x, label }), 'rust-dense');

// Documents with string labels and int64 ids.
const text = vectorFromArray(['the cat sat on the mat', 'a dog ran in the park', 'cats and dogs play', 'the park is green'], new Utf8());
const tlabel = vectorFromArray(['pets', null, 'pets', 'parks'], new Utf8());
const tid = vectorFromArray([1n, 2n, 3n, 4n], new Int64());
viaRust(new Table({ text, label: tlabel, id: tid }), 'rust-text');
