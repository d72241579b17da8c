import { tableToIPC, vectorFromArray, Table } from 'apache-arrow';
import { writeFileSync } from 'fs';
// Written by the JavaScript Arrow library (apache-arrow 17 on npm): dense rows as List<Float64>,
// labels and ids as dictionary-encoded strings (its default), one label null (unlabeled), and a
// document column in a second stream.
const x = vectorFromArray([[0,1,2,3],[1,1,1,1],[4,3,2,1],[0,2,2,0]]);
const label = vectorFromArray(['a', null, 'b', 'a']);
const id = vectorFromArray(['r1','r2','r3','r4']);
writeFileSync('js-dense.arrows', tableToIPC(new Table({x, label, id}), 'stream'));
const text = vectorFromArray(['the cat sat on the mat', 'a dog ran in the park', 'cats and dogs play', 'the park is green']);
writeFileSync('js-text.arrows', tableToIPC(new Table({text, label, id}), 'stream'));
// The same dense table as an IPC file: the JavaScript library leaves the schema message out of the
// file's body and keeps the schema in the footer only.
writeFileSync('js-dense.arrow', tableToIPC(new Table({x, label, id}), 'file'));
