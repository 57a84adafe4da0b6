#!/usr/bin/env node
// Loads a page of `callmon html` in headless Chromium and prints how long the page takes
// to show its first view and to react (bench/html_bench.sh). Each figure is the best of
// three: page load to first view (wall, from goto to the page's ready mark, and the page's
// own performance.now() at that mark, and its parts), a function section with the most
// callers, sorting the flat table by calls, a flame graph zoom, the time order and a zoom
// in it.
//
//   node html_bench.js NODE_MODULES_DIR PAGE.html
'use strict';
const path = require('path');

async function main() {
  const [modules, file] = process.argv.slice(2);
  const { chromium } = require(path.resolve(modules, 'playwright-core'));
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  const best = {};
  const keep = (k, v) => { best[k] = Math.min(best[k] ?? Infinity, v); };
  try {
    for (let run = 0; run < 3; run++) {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      page.setDefaultTimeout(120000);
      const t0 = Date.now();
      await page.goto('file://' + path.resolve(file));
      await page.waitForSelector('html[data-ready="1"]');
      keep('load to first view, wall ms', Date.now() - t0);
      const tm = await page.evaluate(() => callmonTimings);
      keep('first view, page performance.now() ms', tm.ready);
      keep('  HTML loaded, script starts at ms', tm.start);
      keep('  data unpacked and parsed, ms', tm.data - tm.start);
      keep('  flat table sorted and drawn, ms', tm.flat);
      keep('  flame graph drawn, ms', tm.flame);
      // The function with the most callers (the shared "alloc" of html_gen_trace).
      const f = await page.evaluate(() => {
        const data = window.callmonData;
        const n = new Map();
        for (const a of data.arcs) n.set(a[1], (n.get(a[1]) || 0) + 1);
        return [...n.entries()].sort((a, b) => b[1] - a[1])[0][0];
      });
      let t = Date.now();
      await page.evaluate((i) => { location.hash = '#f' + i; }, f);
      await page.waitForFunction(() => !document.getElementById('function').hidden);
      keep('function section (most callers), wall ms', Date.now() - t);
      keep('function section render, page ms', await page.evaluate(() => callmonTimings.lastSection));
      t = Date.now();
      await page.evaluate(() => { location.hash = '#f1'; });
      await page.waitForFunction(() => document.getElementById('fn-name').textContent !== '' &&
        location.hash === '#f1');
      keep('second function section, wall ms', Date.now() - t);
      await page.goBack();
      await page.goBack();
      await page.waitForFunction(() => !document.getElementById('overview').hidden);
      t = Date.now();
      await page.click('#flat th[data-key="calls"]');
      keep('sort flat table by calls, wall ms', Date.now() - t);
      t = Date.now();
      const box = await page.$$eval('#flame .fg', (els) => els.filter((e) => !e.classList.contains('root') && e.offsetWidth > 50).map((e) => e.dataset.n)[1]);
      await page.click('#flame .fg[data-n="' + box + '"]');
      await page.waitForSelector('#flame-focus-name');
      keep('flame graph zoom, wall ms', Date.now() - t);
      keep('flame boxes drawn', await page.$$eval('#flame .fg', (els) => els.length));
      // The time order of the busiest thread, then a zoom on its first wide box.
      t = Date.now();
      await page.check('#view-time');
      await page.waitForSelector('#timeline .fg');
      keep('time order shown, wall ms', Date.now() - t);
      keep('time order boxes in the page (thread 0)',
        await page.evaluate(() => window.callmonData.threads[0].timeline.length / 6));
      keep('time order boxes drawn', await page.$$eval('#timeline .fg', (els) => els.length));
      t = Date.now();
      const wide = await page.$$eval('#timeline .fg', (els) => els.filter((e) => e.offsetWidth > 50).map((e) => e.dataset.i)[1]);
      if (wide !== undefined) {
        await page.click('#timeline .fg[data-i="' + wide + '"]');
        keep('time order zoom, wall ms', Date.now() - t);
      }
      await page.close();
    }
  } finally {
    await browser.close();
  }
  for (const [k, v] of Object.entries(best)) console.log(k.padEnd(44) + ' ' + Math.round(v));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
