import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fitTextTable, type FittedColumn } from './fitted-text-table.js';

const columns: FittedColumn[] = [
  { header: 'problem', cells: ['a_rather_long_problem_name_of_forty_chars', 'b'], truncate: { preferredWidth: 20, minWidth: 8 } },
  { header: 'vs eager', shortHeader: 'eager', cells: ['1.50x', '—'], align: 'right' },
  { header: 'vs compile', shortHeader: 'compile', cells: ['—', '—'], align: 'right', dropOrder: 0 },
  { header: 'tokens', cells: ['12,345', '678'], align: 'right', dropOrder: 2 },
  { header: 'cost', cells: ['$0.42', '$0.01'], align: 'right', dropOrder: 1 },
];

test('a table that fits is left as it is', () => {
  const lines = fitTextTable(columns, 200);
  assert.match(lines[0]!, /^problem\s+vs eager\s+vs compile\s+tokens\s+cost$/);
  assert.match(lines[1]!, /^a_rather_long_problem_name_of_forty_chars\s+1\.50x/);
});

test('steps, in order: short headers, blank columns out, names cut, columns dropped by order, names cut further', () => {
  const at = (width: number): string[] => fitTextTable(columns, width);
  assert.match(at(75)[0]!, /^problem\s+eager\s+compile\s+tokens\s+cost$/, 'first the short headers');
  assert.match(at(66)[0]!, /^problem\s+eager\s+tokens\s+cost$/, 'then the column of dashes goes, before any other');
  assert.match(at(66)[1]!, /^a_rather_long_problem_name_of_forty_chars /, 'names stay whole while they fit');
  assert.match(at(45)[1]!, /^a_rather_long_probl… +1\.50x +12,345 +\$0\.42$/, 'then names are cut to their preferred width');
  assert.match(at(36)[0]!, /^problem\s+eager\s+cost$/, 'then tokens go (the highest drop order)');
  assert.deepEqual(at(16), ['problem    eager', 'a_rather…  1.50x', 'b              —'], 'then names are cut to their minimum');
  for (const width of [66, 45, 36, 16]) for (const line of at(width)) assert.ok(line.length <= width, `${width}: ${line}`);
  assert.deepEqual(at(5), ['problem   eager', 'a_rathe…  1.50x', 'b             —'], 'a width nothing fits gets the narrowest table there is');
});
