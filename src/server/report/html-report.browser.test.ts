import assert from 'node:assert/strict';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { browserUnavailable, openBrowser, type BrowserSession } from '../../../test-support/browser-session.js';
import { openSeededTestStore, type SeededTestStore } from '../../../test-support/seeded-store/seeded-test-store.js';
import { buildRunReport } from './report-data.js';
import { renderReport } from './report-format.js';

/** Where the screenshots go: `$KFORGE_SCREENSHOTS` when set (to look at them), else the seeded store's temporary folder. */
const screenshotsFolder = (seeded: SeededTestStore): string => process.env.KFORGE_SCREENSHOTS ?? path.join(seeded.folder, 'screenshots');

describe('the HTML report in Chromium at 1280×800', { skip: browserUnavailable() ?? false }, () => {
  let seeded: SeededTestStore;
  let browser: BrowserSession;
  before(async () => {
    seeded = await openSeededTestStore('kforge-report-browser-');
    browser = await openBrowser();
  });
  after(async () => {
    await browser?.close();
    await seeded?.cleanup();
  });

  for (const runId of ['cpu-demo', 'h200-demo']) {
    it(`${runId}: no table scrolls sideways, the candidate axis has whole-number ticks, device time is named for the backend`, async () => {
      const report = (await buildRunReport(seeded.store, runId, { now: () => new Date('2026-03-03T08:00:00.000Z') }))!;
      const html = renderReport(report, 'html').text;
      await browser.page.setContent(html);
      const folder = screenshotsFolder(seeded);
      await mkdir(folder, { recursive: true });
      const shot = path.join(folder, `report-${runId}-1280.png`);
      await browser.page.screenshot({ path: shot, fullPage: true });
      assert.ok((await stat(shot)).size > 10_000, `${shot} holds a picture`);
      const overflow = await browser.page.$$eval('table', (tables) =>
        tables.map((table) => ({ table: table.scrollWidth, room: table.parentElement!.clientWidth })),
      );
      for (const [index, sizes] of overflow.entries()) assert.ok(sizes.table <= sizes.room, `table ${index} is ${sizes.table}px in ${sizes.room}px`);
      const pageWidth = (await browser.page.evaluate('document.documentElement.scrollWidth')) as number;
      assert.ok(pageWidth <= 1280, `the page is ${pageWidth}px wide`);
      const xTicks = await browser.page.$$eval('svg text[text-anchor="middle"]', (texts) => texts.map((text) => text.textContent ?? ''));
      const numeric = xTicks.filter((text) => /^\d+(\.\d+)?$/.test(text));
      assert.ok(numeric.length > 0, 'the candidate axis has ticks');
      assert.ok(
        numeric.every((text) => /^\d+$/.test(text)),
        `ticks: ${numeric.join(', ')}`,
      );
      const headers = await browser.page.$$eval('th', (cells) => cells.map((cell) => cell.textContent));
      assert.ok(headers.includes(report.run.backend === 'cpu' ? 'CPU time' : 'GPU time'), headers.join(', '));
      assert.ok(!headers.includes(report.run.backend === 'cpu' ? 'GPU time' : 'CPU time'));
    });
  }
});
