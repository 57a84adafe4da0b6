#!/usr/bin/env node
// Browser test of `callmon html` (CTest browser.html): builds the recording of
// tests/traces/html.txt, writes its page, opens it from a file:// URL in headless Chromium
// (playwright-core) and checks, against the figures worked out in the trace's comments:
// the summary, the flat table and its sorting, the landing section of a followed callee
// link, the back button, and the flame graph's zoom; then the same page with its data
// gzipped (--compress=always, as large pages are); last a function with 600 callers, whose
// table grows by "show more". Also: no script error, no request
// leaving the file, no recording text turned into markup (names hold <, > and &).
//
//   node html_test.js --callmon BIN --make-trace BIN --trace FILE --modules DIR --work DIR
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const CHROMIUM = '/usr/bin/chromium';

function option(name) {
  const i = process.argv.indexOf('--' + name);
  if (i < 0 || i + 1 >= process.argv.length) throw new Error('missing --' + name);
  return path.resolve(process.argv[i + 1]);
}

let checks = 0;
function expectEqual(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(what + ':\n  expected ' + e + '\n  actual   ' + a);
  checks++;
}
function expectNear(actual, expected, tolerance, what) {
  if (!(Math.abs(actual - expected) <= tolerance))
    throw new Error(what + ': expected ' + expected + ' +- ' + tolerance + ', got ' + actual);
  checks++;
}

async function main() {
  const work = option('work');
  if (!fs.existsSync(CHROMIUM)) throw new Error(CHROMIUM + ' not found: run scripts/setup.sh');
  const { chromium } = require(path.join(option('modules'), 'playwright-core'));
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
  execFileSync(option('make-trace'), [option('trace'), path.join(work, 'html.data')]);
  execFileSync(option('callmon'), ['html', '-d', 'html.data', '-o', 'page.html'], { cwd: work });
  execFileSync(option('callmon'),
    ['html', '-d', 'html.data', '-o', 'packed.html', '--compress=always'], { cwd: work });
  const url = 'file://' + path.join(work, 'page.html');
  // A function with 600 callers: its section shows 500 and a button for the rest.
  const lines = ['process 400.0 pid 400 ppid 1 exe /bin/many', 'symbol 1000 main',
    'symbol 2000 hub', 'thread 400', 'enter 0 main'];
  for (let k = 0; k < 600; k++) {
    lines.splice(3 + k, 0, 'symbol ' + (0x3000 + k).toString(16) + ' caller_' + k);
    lines.push('enter ' + (10 * k + 1) + ' caller_' + k, 'enter ' + (10 * k + 2) + ' hub',
      'exit ' + (10 * k + 3), 'exit ' + (10 * k + 4));
  }
  lines.push('exit 6001', 'end 6001');
  fs.writeFileSync(path.join(work, 'many.txt'), lines.join('\n') + '\n');
  execFileSync(option('make-trace'), [path.join(work, 'many.txt'), path.join(work, 'many.data')]);
  execFileSync(option('callmon'), ['html', '-d', 'many.data', '-o', 'many.html'], { cwd: work });

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.setDefaultTimeout(10000);
    const errors = [];
    page.on('pageerror', (e) => errors.push('page error: ' + e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push('console error: ' + m.text());
    });
    const outside = [];
    page.on('request', (r) => {
      if (!r.url().startsWith('file:')) outside.push(r.url());
    });
    const text = (selector) => page.locator(selector).first().textContent();
    const cells = (selector) =>
      page.$$eval(selector + ' tbody tr', (rows) =>
        rows.map((r) => Array.from(r.cells, (c) => c.textContent.trim())));
    const flatNames = () =>
      page.$$eval('#flat tbody td.name', (tds) => tds.map((td) => td.textContent));

    await page.goto(url);
    await page.waitForSelector('html[data-ready="1"]');

    // Summary (html.txt: 9 calls, 250 ns in the threads' outermost calls).
    expectEqual(await text('dd[data-k="calls"]'), '9', 'summary calls');
    expectEqual(await text('dd[data-k="functions"]'), '5', 'summary functions');
    expectEqual(await text('dd[data-k="threads"]'), '2', 'summary threads');
    expectEqual(await text('dd[data-k="command"]'), './html-demo --fast', 'summary command');
    expectEqual((await text('dd[data-k="time"]')).split(' (')[0], '250 ns', 'summary time');
    expectEqual((await text('dd[data-k="compensation"]')).slice(0, 3), 'on:', 'compensation');

    // The flat profile: by total time, then name; names shown as text, never as markup.
    expectEqual(await flatNames(),
      ['main', 'walk<a&b>', 'Stack<...>::push', 'leaf', 'worker'], 'flat by total');
    expectEqual(await page.evaluate(() => document.getElementsByTagName('int').length), 0,
      'a name became an element');
    expectEqual(await cells('#flat').then((rows) => rows[0]),
      ['1', 'main', '1', '200 ns', '80.0%', '50 ns', '20.0%', '200 ns', ''],
      'flat row of main');
    await page.click('#flat th[data-key="calls"]');
    expectEqual(await flatNames(),
      ['leaf', 'Stack<...>::push', 'walk<a&b>', 'main', 'worker'], 'flat by calls');
    expectEqual(await page.getAttribute('#flat th[data-key="calls"]', 'class'),
      'num sortable sorted-desc', 'calls header marked');
    await page.click('#flat th[data-key="calls"]');
    expectEqual(await flatNames(),
      ['main', 'worker', 'Stack<...>::push', 'walk<a&b>', 'leaf'],
      'flat by calls, ascending');

    // Drill down: main's section, then follow its callee link to walk<a&b>.
    await page.locator('#flat tbody a', { hasText: /^main$/ }).click();
    await page.waitForFunction(() => document.getElementById('fn-name')?.textContent === 'main');
    expectEqual(await text('#fn-calls'), '1', 'main calls');
    expectEqual(await text('#fn-total'), '200 ns', 'main total');
    expectEqual(await text('#fn-self'), '50 ns', 'main self');
    expectEqual(await cells('#fn-callers'), [['<thread start>', '1', '200 ns', '50 ns', '100.0%']],
      'main callers');
    expectEqual(await cells('#fn-callees'), [
      ['walk<a&b>', '1', '100 ns', '30 ns', '50.0%'],
      ['Stack<...>::push', '2', '50 ns', '50 ns', '25.0%'],
    ], 'main callees');
    // Short labels (--demangle=short); the full name on hover.
    expectEqual(await page.getAttribute('#fn-callees a:text-is("Stack<...>::push")', 'title'),
      'Stack<int>::push(int const&)', 'full name in the tooltip');

    await page.locator('#fn-callees a', { hasText: 'walk<a&b>' }).click();
    await page.waitForFunction(
      () => document.getElementById('fn-name')?.textContent === 'walk<a&b>');
    expectEqual(await page.evaluate(() => document.getElementById('overview').hidden), true,
      'overview hidden in a section');
    expectEqual(await text('#fn-calls'), '2', 'walk calls');
    expectEqual(await text('#fn-total'), '100 ns', 'walk total (outermost activation)');
    expectEqual(await text('#fn-self'), '70 ns', 'walk self');
    expectEqual(await cells('#fn-callers'), [
      ['main', '1', '100 ns', '30 ns', '100.0%'],
      ['walk<a&b>', '1', '60 ns', '40 ns', '60.0%'],
    ], 'walk callers');
    expectEqual(await cells('#fn-callees'), [
      ['walk<a&b>', '1', '60 ns', '40 ns', '60.0%'],
      ['leaf', '2', '30 ns', '30 ns', '30.0%'],
    ], 'walk callees');

    // The back button walks back through the sections, then to the overview.
    await page.goBack();
    await page.waitForFunction(() => document.getElementById('fn-name')?.textContent === 'main');
    checks++;
    await page.goBack();
    await page.waitForFunction(() => !document.getElementById('overview').hidden);
    checks++;

    // Flame graph: click the outer walk<a&b> box (under main), it fills the width.
    const width = await page.$eval('#flame', (el) => el.clientWidth);
    const boxes = () =>
      page.$$eval('#flame .fg', (els) => els.map((e) => ({
        n: e.dataset.n, name: e.textContent, cls: e.className,
        top: e.offsetTop, left: e.offsetLeft, width: e.offsetWidth,
      })));
    let all = await boxes();
    const outer = all.filter((b) => b.name === 'walk<a&b>').sort((a, b) => a.top - b.top)[0];
    expectNear(outer.width, width * 100 / 250, 2, 'walk box before zoom (100 of 250 ns)');
    await page.click('#flame .fg[data-n="' + outer.n + '"]');
    expectEqual(await text('#flame-focus-name'), 'walk<a&b>', 'zoomed on walk');
    all = await boxes();
    const focus = all.find((b) => b.n === outer.n);
    expectNear(focus.width, width, 2, 'zoomed box fills the width');
    const inner = all.find((b) => b.name === 'walk<a&b>' && b.top > focus.top);
    expectNear(inner.width, width * 0.6, 2, 'inner walk: 60 of 100 ns');
    expectEqual(all.filter((b) => b.cls.includes('ancestor')).map((b) => b.name).sort(),
      ['all', 'main'], 'ancestors kept as full-width bars');
    await page.click('#flame-reset');
    expectEqual((await text('#flame-focus')).slice(0, 17), 'Showing all calls', 'zoom reset');

    // The same page with its data gzipped (as large pages are): inflated by the browser.
    await page.goto('file://' + path.join(work, 'packed.html') + '#f2');
    await page.waitForSelector('html[data-ready="1"]');
    expectEqual(await page.getAttribute('#callmon-data', 'data-encoding'), 'gzip+base64',
      'packed data');
    expectEqual(await text('#fn-name'), 'walk<a&b>', 'packed page: section from the URL');
    expectEqual(await text('#fn-self'), '70 ns', 'packed page: walk self');
    await page.click('a[href="#"]');
    expectEqual(await text('dd[data-k="calls"]'), '9', 'packed page: summary calls');

    // 600 callers: 500 rows, then "show more" appends the last 100 and goes away.
    await page.goto('file://' + path.join(work, 'many.html'));
    await page.waitForSelector('html[data-ready="1"]');
    await page.locator('#flat tbody a', { hasText: /^hub$/ }).click();
    await page.waitForFunction(() => document.getElementById('fn-name')?.textContent === 'hub');
    expectEqual(await text('#fn-calls'), '600', 'hub calls');
    expectEqual(await page.$$eval('#fn-callers tbody tr', (r) => r.length), 500, 'first rows');
    expectEqual(await text('button.more'), 'Show 100 more (100 not shown)', 'more button');
    await page.click('button.more');
    expectEqual(await page.$$eval('#fn-callers tbody tr', (r) => r.length), 600, 'all rows');
    expectEqual(await page.$$eval('button.more', (b) => b.length), 0, 'no button left');

    expectEqual(errors, [], 'script errors');
    expectEqual(outside, [], 'requests outside the page');
  } finally {
    await browser.close();
  }
  console.log('browser.html: ' + checks + ' checks passed');
}

main().catch((e) => {
  console.error('browser.html: FAILED: ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});
