import assert from 'node:assert/strict';
import { test } from 'node:test';
import { embedInitialData, initialRequests } from './initial-page-data.js';

test('the first requests of each page, spelled as the web app spells them', () => {
  assert.deepEqual(initialRequests('/'), ['/api/runs']);
  assert.deepEqual(initialRequests('/runs/20261207-060937-f7f4af'), ['/api/runs/20261207-060937-f7f4af', '/api/runs']);
  assert.deepEqual(initialRequests('/runs/a%20b'), ['/api/runs/a%20b', '/api/runs']);
  assert.deepEqual(initialRequests('/runs/%E0%A4%A'), [], 'a malformed path asks nothing');
  assert.deepEqual(initialRequests('/runs/r/problems/abc'), []);
});

test('data that holds markup or replacement patterns cannot end the block or change the page', () => {
  const html = '<html><head><title>kforge</title></head><body></body></html>';
  const page = embedInitialData(html, { '/api/runs': { model: "</script><script>alert(1)</script> $' $& $1" } });
  assert.equal(page.match(/<\/script>/g)?.length, 1, 'only the block’s own end tag');
  const json = /<script id="kforge-initial-data" type="application\/json">(.*)<\/script><\/head>/.exec(page)?.[1];
  assert.deepEqual(JSON.parse(json!), { '/api/runs': { model: "</script><script>alert(1)</script> $' $& $1" } });
  assert.ok(page.endsWith('</head><body></body></html>'));
  assert.equal(embedInitialData(html, {}), html, 'nothing to embed: the page as it is');
});
