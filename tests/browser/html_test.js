#!/usr/bin/env node
// Browser test of `callmon html` (CTest browser.html): builds the recording of
// tests/traces/html.txt, writes its page, opens it from a file:// URL in headless Chromium
// (playwright-core) and checks, against the figures worked out in the trace's comments:
// the summary, the flat table and its sorting, the landing section of a followed callee
// link, the back button, and the flame graph's zoom; then the same page with its data
// gzipped (--compress=always, as large pages are); last a function with 600 callers, whose
// table grows by "show more"; the flame graph's search and its cut labels' ellipsis; pages
// with long names at 1400 and 1024 px, no wider than the window; the flame graph's thread
// picker (the boxes shown change), its tooltip (the flat table's figures, inside the
// window) and the time order of both threads (known times, in order, nested, zoom); then
// the golden traces with uncertain figures and scheduler
// time (calibration, clocked, scheduler), whose Total and Self cells must read as
// `callmon report`'s where report shows a range, with report's Off-CPU and Preempted columns
// and notes; the time order of calls cut by coroutine switches (suspended.txt) and of a fork
// child's inherited frames (fork.txt), pieces marked. Also: no script error, no request
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

    // Flame graph search: 'leaf' is in three contexts (20 + 10 + 20 ns of 250); 'walk' in
    // two, the inner one inside the outer, so its share is the outer's 100 ns.
    await page.fill('#flame-search', 'LEAF');
    await page.waitForFunction(() => document.getElementById('flame-search-result').textContent !== '');
    expectEqual(await text('#flame-search-result'), '3 matching contexts, 50 ns (20.0% of all time)',
      'search leaf');
    expectEqual((await boxes()).filter((b) => b.cls.includes('match')).map((b) => b.name),
      ['leaf', 'leaf', 'leaf'], 'leaf boxes highlighted');
    await page.fill('#flame-search', 'walk');
    await page.waitForFunction(() => /^2 /.test(document.getElementById('flame-search-result').textContent));
    expectEqual(await text('#flame-search-result'), '2 matching contexts, 100 ns (40.0% of all time)',
      'search walk: a match inside a match counted once');
    await page.fill('#flame-search', 'nosuchname');
    await page.waitForFunction(() => document.getElementById('flame-search-result').textContent === 'no match');
    expectEqual((await boxes()).filter((b) => b.cls.includes('match')).length, 0, 'no box matches');
    await page.fill('#flame-search', '');
    await page.waitForFunction(() => document.getElementById('flame-search-result').textContent === '');
    expectEqual(await page.$eval('#flame', (el) => el.classList.contains('searching')), false,
      'search cleared');
    // A label cut by its box's width ends in an ellipsis.
    expectEqual(await page.$eval('#flame .fg', (el) => getComputedStyle(el).textOverflow),
      'ellipsis', 'cut labels end in an ellipsis');

    await checkThreadsAndTimeOrder(page, boxes, text);

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

    for (const name of ['calibration', 'clocked', 'scheduler'])
      await compareWithReport(page, name, work, cells);

    await checkWidths(browser, work);

    await checkPiecesOfCalls(page, work);

    expectEqual(errors, [], 'script errors');
    expectEqual(outside, [], 'requests outside the page');
  } finally {
    await browser.close();
  }
  console.log('browser.html: ' + checks + ' checks passed');
}

// A page whose names are long (a 600-character C++ name, a 300-character one without a
// break, a long module path): at 1400 and 1024 px the overview and every function page fit
// the window (no horizontal scroll) and no table cell's text runs past its cell.
async function checkWidths(browser, work) {
  const long = 'std::_Hashtable<std::__cxx11::basic_string<char,std::char_traits<char>,' +
    'std::allocator<char>>,std::pair<std::__cxx11::basic_string<char>const,shop::Order>>' +
    '::_M_find_before_node(unsigned,std::__cxx11::basic_string<char>const&)const';
  const names = ['main', long.repeat(3), 'a'.repeat(300)];
  const lines = ['process 400.0 pid 400 ppid 1 exe /usr/lib/x86_64-linux-gnu/' +
    'a/very/long/path/'.repeat(10) + 'libwith_a_long_name.so.1'];
  names.forEach((n, k) => lines.push('symbol ' + (0x1000 * (k + 1)).toString(16) + ' ' + n));
  lines.push('thread 400', 'enter 0 main', 'enter 10 ' + names[1], 'enter 20 ' + names[2],
    'exit 30', 'exit 40', 'exit 100', 'end 100');
  fs.writeFileSync(path.join(work, 'wide.txt'), lines.join('\n') + '\n');
  execFileSync(option('make-trace'), [path.join(work, 'wide.txt'), path.join(work, 'wide.data')]);
  execFileSync(option('callmon'), ['html', '-d', 'wide.data', '-o', 'wide.html'], { cwd: work });
  for (const width of [1400, 1024]) {
    const page = await browser.newPage({ viewport: { width, height: 800 } });
    try {
      for (const hash of ['', '#f0', '#f1', '#f2']) {
        await page.goto('file://' + path.join(work, 'wide.html') + hash);
        await page.waitForSelector('html[data-ready="1"]');
        const what = width + ' px, page ' + (hash || 'overview');
        expectEqual(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
          true, what + ': no wider than the window');
        expectEqual(await page.evaluate(() => Array.from(document.querySelectorAll('th, td, h1, p'))
          .filter((el) => el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1)
          .map((el) => el.tagName + ': ' + el.textContent.slice(0, 30))), [],
          what + ': no text runs out of its cell');
      }
    } finally {
      await page.close();
    }
  }
}

// Moves the mouse onto `selector`'s middle; returns the tooltip's name and figures (by
// their data-tip keys) and whether it lies inside the window.
async function hoverTip(page, selector) {
  await page.locator(selector).first().scrollIntoViewIfNeeded();
  const box = await page.locator(selector).first().boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.waitForFunction(() => !document.getElementById('flame-tip').hidden);
  return page.evaluate(() => {
    const tip = document.getElementById('flame-tip');
    const out = { name: tip.querySelector('.tip-name').textContent };
    for (const td of tip.querySelectorAll('td[data-tip]')) out[td.dataset.tip] = td.textContent;
    const r = tip.getBoundingClientRect();
    out.inside = r.left >= 0 && r.top >= 0 && r.right <= window.innerWidth &&
      r.bottom <= window.innerHeight;
    return out;
  });
}

// The flame graph's thread picker, tooltip and time order on html.txt (thread 300: main
// 0-200 ns calling push 10-40 and 50-70 and walk 80-180, walk 90-150 in it, leaf 100-120
// in that and leaf 160-170 in the outer walk; thread 301: worker 0-50, leaf 10-30; no
// compensation to take out).
async function checkThreadsAndTimeOrder(page, boxes, text) {
  const names = async () => [...new Set((await boxes()).map((b) => b.name))].sort();
  expectEqual(await page.$$eval('#flame-thread option', (o) => o.map((x) => x.textContent)),
    ['All threads, merged (2)', 'thread 300 (main), pid 300: 7 calls',
      'thread 301 (worker), pid 300: 2 calls'], 'thread picker entries');
  expectEqual(await names(), ['Stack<...>::push', 'all', 'leaf', 'main', 'walk<a&b>',
    'worker'], 'all threads merged');
  await page.selectOption('#flame-thread', '1');
  expectEqual(await names(), ['all', 'leaf', 'worker'], 'thread 301 alone');
  const width = await page.$eval('#flame', (el) => el.clientWidth);
  const worker = (await boxes()).find((b) => b.name === 'worker');
  expectNear(worker.width, width, 2, 'worker fills thread 301');
  await page.selectOption('#flame-thread', '0');
  expectEqual(await names(), ['Stack<...>::push', 'all', 'leaf', 'main', 'walk<a&b>'],
    'thread 300 alone');
  // The tooltip: the flat table's figures for main (one context), inside the window even
  // at the right edge.
  const row = await page.$$eval('#flat tbody tr', (rows) => rows.map((r) =>
    Array.from(r.cells, (c) => c.textContent.trim())).find((c) => c[1] === 'main'));
  const mainBox = (await boxes()).find((b) => b.name === 'main');
  let tip = await hoverTip(page, '#flame .fg[data-n="' + mainBox.n + '"]');
  expectEqual([tip.name, tip.calls, tip.total, tip.self, tip.share],
    ['main', row[2], row[3], row[5], '100.0%'], 'tooltip of main in thread 300 (share of it)');
  await page.selectOption('#flame-thread', '-1');
  tip = await hoverTip(page, '#flame .fg[data-n="' + (await boxes()).find((b) => b.name === 'main').n + '"]');
  expectEqual([tip.total, tip.self, tip.share], [row[3], row[5], row[4]], 'tooltip of main, merged');
  const right = await page.$eval('#flame', (el) => el.getBoundingClientRect().right);
  const last = (await boxes()).filter((b) => b.name === 'worker')[0];
  await page.mouse.move(right - 3, (await page.locator('#flame .fg[data-n="' + last.n + '"]')
    .boundingBox()).y + 5);
  tip = await page.evaluate(() => {
    const r = document.getElementById('flame-tip').getBoundingClientRect();
    return r.right <= window.innerWidth && r.left >= 0;
  });
  expectEqual(tip, true, 'tooltip at the right edge stays in the window');

  // Time order: thread 300 is picked (the view is per thread), boxes at their times.
  await page.check('#view-time');
  expectEqual(await page.$eval('#flame-thread', (s) => s.value), '0', 'time order picks a thread');
  const tw = await page.$eval('#timeline', (el) => el.clientWidth);
  const timed = () => page.$$eval('#timeline .fg', (els) => els.map((e) => ({
    name: e.textContent, start: +e.dataset.start, end: +e.dataset.end, depth: +e.dataset.depth,
    left: e.offsetLeft, width: e.offsetWidth, top: e.offsetTop, i: e.dataset.i })));
  let t = await timed();
  expectEqual(t.map((b) => [b.name, b.start, b.end, b.depth]), [
    ['main', 0, 200, 0], ['Stack<...>::push', 10, 40, 1],
    ['Stack<...>::push', 50, 70, 1], ['walk<a&b>', 80, 180, 1],
    ['walk<a&b>', 90, 150, 2], ['leaf', 100, 120, 3], ['leaf', 160, 170, 2]],
  'time order of thread 300');
  for (let k = 1; k < t.length; k++) {
    expectEqual(t[k].start >= t[k - 1].start, true, 'boxes in time order (' + k + ')');
    if (t[k].depth === 0) continue;
    const parents = t.filter((p) => p.depth === t[k].depth - 1 && p.start <= t[k].start && p.end >= t[k].end);
    expectEqual(parents.length, 1, 'box ' + k + ' nested in one caller');
    expectEqual(t[k].top > parents[0].top, true, 'box ' + k + ' below its caller');
  }
  expectNear(t[3].left, tw * 80 / 200, 2, 'walk placed at 80 of 200 ns');
  expectNear(t[3].width, tw * 100 / 200, 2, 'walk 100 of 200 ns wide');
  tip = await hoverTip(page, '#timeline .fg[data-i="' + t[5].i + '"]');
  expectEqual([tip.name, tip.start, tip.duration, tip.calls], ['leaf', '100 ns', '20 ns', '1'],
    'time order tooltip');
  // Zoom on the outer walk: it fills the width; zoom out goes back.
  await page.click('#timeline .fg[data-i="' + t[3].i + '"]');
  t = await timed();
  const walk = t.find((b) => b.start === 80 && b.depth === 1);
  expectNear(walk.width, tw, 2, 'zoomed walk fills the width');
  expectNear(t.find((b) => b.start === 100).left, tw * 20 / 100, 2, 'leaf at 20 of 100 ns');
  expectEqual((await text('#timeline-window')).startsWith('Showing 80 ns to 180 ns of 200 ns'), true,
    'zoom window said');
  await page.click('#timeline-out');
  expectEqual((await timed()).length, 7, 'zoomed out');
  await page.selectOption('#flame-thread', '1');
  expectEqual((await timed()).map((b) => [b.name, b.start, b.end, b.depth]),
    [['worker', 0, 50, 0], ['leaf', 10, 30, 1]], 'time order of thread 301');
  // From a function's page, its largest context is shown in the merged view.
  await page.selectOption('#flame-thread', '0');
  await page.evaluate(() => { location.hash = '#f2'; });
  await page.waitForFunction(() => document.getElementById('fn-name')?.textContent === 'walk<a&b>');
  await page.click('#fn-flame');
  await page.waitForFunction(() => !document.getElementById('overview').hidden);
  expectEqual([await page.$eval('#time-view', (el) => el.hidden), await text('#flame-focus-name')],
    [true, 'walk<a&b>'], 'largest context of walk shown merged');
  await page.click('#flame-reset');
  await page.selectOption('#flame-thread', '-1');
  expectEqual(await page.$eval('#merged-view', (el) => el.hidden), false, 'back to the merged view');
}

// The page of golden trace `name` against `callmon report`'s text: a Total or Self shown
// as a range there is the same text on the page, in the flat table and the function's
// section; the Off-CPU and Preempted columns are there exactly when report has them, with
// the same figures; report's notes are the page's.
async function compareWithReport(page, name, work, cells) {
  const traces = path.dirname(option('trace'));
  execFileSync(option('make-trace'), [path.join(traces, name + '.txt'), path.join(work, name + '.data')]);
  execFileSync(option('callmon'), ['html', '-d', name + '.data', '-o', name + '.html'], { cwd: work });
  const text = execFileSync(option('callmon'), ['report', '-d', name + '.data'], { cwd: work })
    .toString().split('\n');
  // The table: a header line, then one row per function, cells 2+ spaces apart.
  const head = text[1].trim().split(/ {2,}/);
  const rows = [];
  for (const line of text.slice(2)) {
    if (!line || line.startsWith('#')) continue;
    const c = line.trim().split(/ {2,}/);
    const row = {};
    head.forEach((h, k) => (row[h] = c[k]));
    rows.push(row);
  }
  // A long note wraps onto lines that begin "#   ".
  const notes = [];
  for (const l of text) {
    if (l.startsWith('# note: ')) notes.push('Note: ' + l.slice(8));
    else if (l.startsWith('#   ') && notes.length) notes[notes.length - 1] += ' ' + l.slice(4);
  }
  await page.goto('file://' + path.join(work, name + '.html'));
  await page.waitForSelector('html[data-ready="1"]');
  const heads = await page.$$eval('#flat th', (ths) =>
    ths.filter((th) => !th.hidden).map((th) => th.textContent.trim()));
  const sched = head.includes('Off-CPU');
  expectEqual(heads.includes('Off-CPU') && heads.includes('Preempted'), sched,
    name + ': Off-CPU and Preempted columns as in report');
  const flat = {};
  for (const r of await cells('#flat')) flat[r[heads.indexOf('Function')]] = r;
  const seconds = (t) => {
    const m = /^([\d.]+) (ns|us|ms|s)$/.exec(t);
    return m ? +m[1] * { ns: 1, us: 1e3, ms: 1e6, s: 1e9 }[m[2]] : NaN;
  };
  for (const r of rows) {
    const got = flat[r.Function];
    if (!got) throw new Error(name + ': ' + r.Function + ' not in the flat table');
    for (const [col, id] of [['Total', 'fn-total'], ['Self', 'fn-self']]) {
      const cell = got[heads.indexOf(col)];
      if (r[col].includes('..')) expectEqual(cell, r[col], name + ': ' + r.Function + ' ' + col);
      else expectNear(seconds(cell), seconds(r[col]), 0.01 * seconds(r[col]) + 0.5,
        name + ': ' + r.Function + ' ' + col);
    }
    if (sched) {
      for (const col of ['Off-CPU', 'Preempted'])
        expectNear(seconds(got[heads.indexOf(col)]), seconds(r[col]),
          0.01 * seconds(r[col]) + 0.5, name + ': ' + r.Function + ' ' + col);
    }
  }
  // A function's section, and its flame graph box's tooltip when it has one context, show
  // its ranges the same way.
  const uncertain = rows.find((r) => r.Total.includes('..'));
  if (uncertain) {
    // The tooltip of each of its flame graph boxes: when it has one context, the box's
    // figures are the function's, and must read as the table's cells.
    const mine = await page.$$eval('#flame .fg', (els, n) =>
      els.filter((e) => e.textContent === n).map((e) => e.dataset.n), uncertain.Function);
    if (mine.length === 1) {
      const tip = await hoverTip(page, '#flame .fg[data-n="' + mine[0] + '"]');
      expectEqual([tip.name, tip.total, tip.self, tip.calls],
        [uncertain.Function, uncertain.Total, uncertain.Self, flat[uncertain.Function][heads.indexOf('Calls')]],
        name + ': flame tooltip of ' + uncertain.Function + ' as the table');
    }
    await page.locator('#flat tbody a', { hasText: new RegExp('^' + uncertain.Function + '$') }).click();
    await page.waitForFunction((n) => document.getElementById('fn-name')?.textContent === n,
      uncertain.Function);
    expectEqual(await page.locator('#fn-total').textContent(), uncertain.Total,
      name + ': section total of ' + uncertain.Function);
    expectEqual(await page.locator('#fn-self').textContent(), uncertain.Self,
      name + ': section self of ' + uncertain.Function);
    expectEqual(await page.locator('#fn-uncertain').count(), 1, name + ': range explained');
    await page.click('a[href="#"]');
  }
  if (sched) {
    // Off-CPU in a box's tooltip: the table's figure, for a function with one context.
    for (const r of rows) {
      if (seconds(r['Off-CPU']) > 0) {
        const ns = await page.$$eval('#flame .fg', (els, n) =>
          els.filter((e) => e.textContent === n).map((e) => e.dataset.n), r.Function);
        if (ns.length !== 1) continue;
        const tip = await hoverTip(page, '#flame .fg[data-n="' + ns[0] + '"]');
        expectEqual(tip.offcpu, flat[r.Function][heads.indexOf('Off-CPU')],
          name + ': tooltip off-CPU of ' + r.Function);
        break;
      }
    }
    await page.mouse.move(0, 0);
  }
  const warnings = await page.$$eval('#warnings li', (li) => li.map((l) => l.textContent));
  expectEqual(warnings.filter((w) => w.startsWith('Note: ')), notes, name + ': notes');
}

// The time order of calls cut by coroutine switches (suspended.txt: every piece a box at
// its time, the pieces a switch ended marked suspended, the continuations continued, with
// a dashed edge and a tooltip that says so; a continuation counts no call) and of a fork
// child's inherited frames (fork.txt: boxes marked inherited, a dotted edge).
async function checkPiecesOfCalls(page, work) {
  const traces = path.dirname(option('trace'));
  for (const name of ['suspended', 'fork']) {
    execFileSync(option('make-trace'), [path.join(traces, name + '.txt'), path.join(work, name + '.data')]);
    execFileSync(option('callmon'), ['html', '-d', name + '.data', '-o', name + '.html'], { cwd: work });
  }
  const timed = () => page.$$eval('#timeline .fg', (els) => els.map((e) => ({
    name: e.textContent, start: +e.dataset.start, end: +e.dataset.end, depth: +e.dataset.depth,
    marks: ['suspended', 'continued', 'inherited'].filter((c) => e.classList.contains(c)),
    before: getComputedStyle(e, '::before').borderLeftStyle,
    after: getComputedStyle(e, '::after').borderRightStyle,
    left: e.offsetLeft, width: e.offsetWidth, i: e.dataset.i })));
  const tipMarks = () => page.$$eval('#flame-tip .tip-mark', (d) => d.map((x) => x.textContent));

  await page.goto('file://' + path.join(work, 'suspended.html'));
  await page.waitForSelector('html[data-ready="1"]');
  await page.check('#view-time');
  const tw = await page.$eval('#timeline', (el) => el.clientWidth);
  let t = await timed();
  expectEqual(t.map((b) => [b.name, b.start, b.end, b.depth, b.marks.join(',')]), [
    ['main', 0, 20, 0, 'suspended'], ['run', 10, 20, 1, 'suspended'],
    ['coro', 20, 50, 0, 'suspended'], ['work', 30, 40, 1, ''],
    ['main', 50, 70, 0, 'suspended,continued'], ['run', 50, 60, 1, 'continued'],
    ['run', 60, 70, 1, 'suspended'], ['coro', 70, 100, 0, 'continued'], ['work', 70, 90, 1, ''],
    ['main', 100, 120, 0, 'continued'], ['run', 100, 110, 1, 'continued']],
  'suspended: a box per piece, at its time, marked');
  for (const b of t) {
    expectEqual([b.before, b.after], [b.marks.includes('continued') ? 'dashed' : 'none',
      b.marks.includes('suspended') ? 'dashed' : 'none'], 'suspended: edges of ' + b.name + ' at ' + b.start);
    expectNear(b.left, tw * b.start / 120, 2, 'suspended: ' + b.name + ' placed at ' + b.start);
    expectNear(b.width, tw * (b.end - b.start) / 120, 2, 'suspended: ' + b.name + ' sized');
  }
  // coro's continuation: no call, its own duration, said to be continued.
  let tip = await hoverTip(page, '#timeline .fg[data-i="' + t[7].i + '"]');
  expectEqual([tip.name, tip.start, tip.duration, tip.calls], ['coro', '70 ns', '30 ns', '0'],
    'suspended: tooltip of a continuation');
  expectEqual((await tipMarks()).map((m) => m.split(':')[0]), ['continued'],
    'suspended: the continuation said');
  tip = await hoverTip(page, '#timeline .fg[data-i="' + t[2].i + '"]');
  expectEqual([tip.name, tip.calls, (await tipMarks()).map((m) => m.split(':')[0])],
    ['coro', '1', ['suspended']], 'suspended: tooltip of a first piece');
  tip = await hoverTip(page, '#timeline .fg[data-i="' + t[4].i + '"]');
  expectEqual([tip.calls, (await tipMarks()).map((m) => m.split(':')[0])],
    ['0', ['continued', 'suspended']], 'suspended: a continuation suspended again');
  await page.mouse.move(0, 0);
  expectEqual((await page.locator('#timeline-note').textContent()).includes('a box per piece'),
    true, 'suspended: the note explains the pieces');
  // Zoomed on a continuation, its callee continuation fills its place.
  await page.click('#timeline .fg[data-i="' + t[9].i + '"]');
  t = await timed();
  expectNear(t.find((b) => b.start === 100 && b.depth === 1).width, tw / 2, 2,
    'suspended: zoomed on main 100..120, run 100..110 is half');
  // The flat profile counts calls, not pieces.
  expectEqual(await page.locator('dd[data-k="calls"]').textContent(), '6', 'suspended: 6 calls');

  await page.goto('file://' + path.join(work, 'fork.html'));
  await page.waitForSelector('html[data-ready="1"]');
  await page.check('#view-time');
  await page.selectOption('#flame-thread', '1');
  t = await timed();
  expectEqual(t.map((b) => [b.name, b.start, b.end, b.depth, b.marks.join(','), b.before]), [
    ['main', 0, 70, 0, 'inherited', 'dotted'], ['spawn', 0, 5, 1, 'inherited', 'dotted'],
    ['child_work', 10, 60, 1, '', 'none']], 'fork: the child\'s inherited frames');
  tip = await hoverTip(page, '#timeline .fg[data-i="' + t[0].i + '"]');
  expectEqual([tip.name, tip.calls, (await tipMarks()).map((m) => m.split(':')[0])],
    ['main', '0', ['inherited']], 'fork: tooltip of an inherited frame');
  await page.mouse.move(0, 0);
  await page.selectOption('#flame-thread', '0');
  expectEqual((await timed()).map((b) => b.marks.length), [0, 0, 0], 'fork: the parent\'s calls unmarked');
}

main().catch((e) => {
  console.error('browser.html: FAILED: ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});
