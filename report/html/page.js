/* callmon HTML report: the page's script (docs/html.md). It reads the JSON data blob
   (#callmon-data) and renders, from it alone (no network):
   - the summary;
   - the flat profile, sorted by a clicked column, filtered by name, PAGE_ROWS rows a page;
   - one function's section (callers, callees) when the address is #f<index>: sections are
     rendered on demand from the data, so the page stays quick with 50 000 functions, and
     the browser's back button walks back through them;
   - the flame graph of the pruned calling-context tree: a click on a box zooms on it; a
     search box highlights the contexts of matching functions and gives their share; a
     thread picker shows all threads merged or one thread's own tree; a tooltip gives a
     box's figures as the tables print them;
   - one thread's calls in time order (data.threads[k].timeline), zoomed by a click.
   Every text that comes from the recording goes through esc(): C++ names hold <, > and &. */
'use strict';
(function () {
  const timings = (window.callmonTimings = { start: performance.now() });

  // The blob is plain JSON, or for large pages gzip in base64 (data-encoding), inflated
  // by the browser's own DecompressionStream: no library, no network.
  async function loadData() {
    const el = document.getElementById('callmon-data');
    if (el.dataset.encoding !== 'gzip+base64') return JSON.parse(el.textContent);
    const text = atob(el.textContent.trim());
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return JSON.parse(await new Response(stream).text());
  }

  loadData().then(show, (e) => {
    const p = document.createElement('p');
    p.className = 'error';
    p.textContent = 'This page could not read its data (' + e + '). It needs a browser ' +
      'with DecompressionStream: Chrome 80, Firefox 113, Safari 16.4 or later.';
    document.querySelector('main').prepend(p);
  });

  function show(data) {
    window.callmonData = data;  // for the console and the benchmark
    timings.data = performance.now();
    const S = data.summary;
    // [label, module, file, line, calls, total_ns, self_ns, full name, then optionally
    //  total_range, self_range ([low, high] or null), offcpu_ns, preempted_ns, clocked_calls]
    const FN = data.functions;
    const NAME = 0, MODULE = 1, FILE = 2, LINE = 3, CALLS = 4, TOTAL = 5, SELF = 6, FULL = 7;
    const TOTAL_RANGE = 8, SELF_RANGE = 9, OFFCPU = 10, PREEMPTED = 11, CLOCKED = 12;
    // [caller (-1: thread start), callee, calls, time_ns, self_ns, then optionally
    //  time_range, self_range]
    const ARCS = data.arcs;
    // The tree shown: the merged one (data.tree) or a thread's own (data.threads[k].tree).
    // [parent, func (-1: root or other), calls, time_ns, self_ns, merged, then optionally
    //  time_range, self_range, offcpu_ns]
    const THREADS = data.threads || [];
    let TREE = data.tree;
    let NODES = TREE.nodes;
    const PAGE_ROWS = 100;
    const MAX_ARC_ROWS = 500;   // callers/callees shown at first and added by "show more"
    const FLAME_ROW = 18;       // px per flame graph level
    const FLAME_MIN_PX = 1;     // narrower boxes (and their subtrees) are not drawn
    const $ = (id) => document.getElementById(id);

    // ---- formatting ----
    const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
    function esc(s) {
      return String(s).replace(/[&<>"']/g, (c) => ESC[c]);
    }
    const UNITS = [['ns', 1], ['us', 1e3], ['ms', 1e6], ['s', 1e9]];
    function decimals(v) {
      return v >= 100 ? 0 : v >= 10 ? 1 : 2;
    }
    // Three significant digits, as the text reports print them; whole nanoseconds as such.
    function fmtTime(ns) {
      if (!(ns > 0)) return '0 ns';
      let u = 0;
      while (u + 1 < UNITS.length && ns >= UNITS[u + 1][1]) u++;
      if (u === 0) return (ns < 1 ? ns.toFixed(2) : Math.round(ns)) + ' ns';
      let v = ns / UNITS[u][1];
      let d = decimals(v);
      if (Math.round(v * 10 ** d) / 10 ** d >= 1000 && u + 1 < UNITS.length) {
        u++;
        v = ns / UNITS[u][1];
        d = decimals(v);
      }
      return v.toFixed(d) + ' ' + UNITS[u][0];
    }
    // A figure known only to lie in [lo, hi], as the text reports print it (report/units.cpp,
    // human_range): both ends in the unit of the upper one, "0..21.0 ns", "1.20..3.45 ms".
    function fmtRange(lo, hi) {
      if (!(hi > 0)) return '0 ns';
      let u = 0;
      while (u + 1 < UNITS.length && hi >= UNITS[u + 1][1]) u++;
      const h = hi / UNITS[u][1];
      const l = (lo > 0 ? lo : 0) / UNITS[u][1];
      const d = decimals(h);
      return (l === 0 ? '0' : l.toFixed(d)) + '..' + h.toFixed(d) + ' ' + UNITS[u][0];
    }
    // The figure, or its range where the data gives one (only uncertain figures have one).
    function fmtFigure(ns, range) {
      return range ? fmtRange(range[0], range[1]) : fmtTime(ns);
    }
    const NUMBER = new Intl.NumberFormat('en-US');  // one formatter: toLocaleString makes one a call
    function fmtCount(n) {
      return NUMBER.format(n);
    }
    function fmtPct(part, whole) {
      if (!(whole > 0)) return '';
      const p = (100 * part) / whole;
      return (p > 0 && p < 0.1 ? '<0.1' : p.toFixed(1)) + '%';
    }
    function baseName(path) {
      const i = path.lastIndexOf('/');
      return i < 0 ? path : path.slice(i + 1);
    }
    function sourceOf(f) {
      if (f[FILE]) return f[FILE] + (f[LINE] ? ':' + f[LINE] : '');
      return f[MODULE];
    }
    function sourceCell(f) {
      const full = sourceOf(f);
      const shown = f[FILE] ? baseName(f[FILE]) + (f[LINE] ? ':' + f[LINE] : '') : baseName(full);
      return '<td class="src" title="' + esc(full) + '">' + esc(shown) + '</td>';
    }
    function fnLink(i) {
      if (i < 0) return '<span class="muted">&lt;thread start&gt;</span>';
      return '<a href="#f' + i + '" title="' + esc(FN[i][FULL]) + '">' + esc(FN[i][NAME]) + '</a>';
    }

    // ---- summary ----
    function renderSummary() {
      const items = [['Recording', S.recording]];
      if (S.command) items.push(['Command', S.command.join(' ')]);
      if (S.exit_signal !== null) items.push(['Ended', 'killed by signal ' + S.exit_signal]);
      else if (S.exit_status !== null) items.push(['Exit status', String(S.exit_status)]);
      if (S.start_unix_ns) items.push(['Recorded', new Date(S.start_unix_ns / 1e6).toISOString()]);
      items.push(['Calls', fmtCount(S.total_calls)]);
      items.push(['Time in calls', fmtTime(S.time_ns) + ' (the threads\u2019 outermost calls)']);
      items.push(['Functions', fmtCount(S.functions)]);
      items.push(['Processes', fmtCount(S.processes)]);
      items.push(['Threads', fmtCount(S.threads)]);
      items.push(['Compensation', S.compensated
        ? 'on: the recorder\u2019s own cost per call is subtracted (--no-compensation to see raw times)'
        : 'off: times as measured']);
      items.push(['Filters', S.filters || 'none']);
      const keys = ['recording', 'command', 'exit', 'recorded', 'calls', 'time', 'functions',
        'processes', 'threads', 'compensation', 'filters'];
      $('summary-list').innerHTML = items.map(([k, v]) => {
        const key = keys.find((x) => k.toLowerCase().startsWith(x)) || k;
        return '<dt>' + esc(k) + '</dt><dd data-k="' + esc(key) + '">' + esc(v) + '</dd>';
      }).join('');
      $('warnings').innerHTML = S.warnings.map((w) => '<li>' + esc(w) + '</li>').join('');
    }

    // ---- flat profile ----
    // The Off-CPU and Preempted columns, as report's: only when some thread was off the CPU.
    const SCHED = FN.some((f) => f[OFFCPU] > 0 || f[PREEMPTED] > 0);
    // A Total or Self cell: the range in place of the figure where it is uncertain.
    function figureCell(ns, range, what) {
      if (!range) return '<td class="num">' + fmtTime(ns) + '</td>';
      return '<td class="num range" title="' + what + ' uncertain: between ' +
        fmtTime(range[0]) + ' and ' + fmtTime(range[1]) + '; estimate ' +
        fmtTime(ns) + '">' + fmtRange(range[0], range[1]) + '</td>';
    }
    const flat = { all: [], rows: [], key: 'total', desc: true, page: 0, filter: '', lower: null };
    for (let i = 0; i < FN.length; i++) if (FN[i][CALLS] > 0) flat.all.push(i);
    const SORT_VALUE = {
      name: (i) => FN[i][NAME],
      calls: (i) => FN[i][CALLS],
      total: (i) => FN[i][TOTAL],
      self: (i) => FN[i][SELF],
      avg: (i) => FN[i][TOTAL] / FN[i][CALLS],
      offcpu: (i) => FN[i][OFFCPU] || 0,
      preempted: (i) => FN[i][PREEMPTED] || 0,
      source: (i) => sourceOf(FN[i]),
    };
    const SORT_ALIAS = { totalpct: 'total', selfpct: 'self' };

    function updateFlatRows() {
      let rows = flat.all;
      if (flat.filter) {
        if (!flat.lower) flat.lower = FN.map((f) => f[NAME].toLowerCase());
        const q = flat.filter.toLowerCase();
        rows = rows.filter((i) => flat.lower[i].includes(q));
      } else {
        rows = rows.slice();
      }
      const get = SORT_VALUE[flat.key];
      const dir = flat.desc ? -1 : 1;
      const values = new Array(FN.length);
      for (const i of rows) values[i] = get(i);
      rows.sort((a, b) => {
        const va = values[a];
        const vb = values[b];
        let d = va < vb ? -1 : va > vb ? 1 : 0;
        if (d === 0) {
          const na = FN[a][NAME];
          const nb = FN[b][NAME];
          return na < nb ? -1 : na > nb ? 1 : a - b;
        }
        return d * dir;
      });
      flat.rows = rows;
    }

    function renderFlat() {
      const pages = Math.max(1, Math.ceil(flat.rows.length / PAGE_ROWS));
      flat.page = Math.min(flat.page, pages - 1);
      const from = flat.page * PAGE_ROWS;
      const slice = flat.rows.slice(from, from + PAGE_ROWS);
      const html = [];
      slice.forEach((i, n) => {
        const f = FN[i];
        html.push('<tr data-f="' + i + '"><td class="num">' + (from + n + 1) + '</td>' +
          '<td class="name">' + fnLink(i) + '</td>' +
          '<td class="num">' + fmtCount(f[CALLS]) + '</td>' +
          figureCell(f[TOTAL], f[TOTAL_RANGE], 'total') +
          '<td class="num">' + fmtPct(f[TOTAL], S.time_ns) + '</td>' +
          figureCell(f[SELF], f[SELF_RANGE], 'self') +
          '<td class="num">' + fmtPct(f[SELF], S.time_ns) + '</td>' +
          '<td class="num">' + fmtTime(f[TOTAL] / f[CALLS]) + '</td>' +
          (SCHED ? '<td class="num offcpu">' + fmtTime(f[OFFCPU] || 0) + '</td>' +
            '<td class="num preempted">' + fmtTime(f[PREEMPTED] || 0) + '</td>' : '') +
          sourceCell(f) + '</tr>');
      });
      document.querySelector('#flat tbody').innerHTML = html.join('');
      const to = from + slice.length;
      $('flat-page').textContent = flat.rows.length
        ? 'rows ' + fmtCount(from + 1) + '\u2013' + fmtCount(to) + ' of ' + fmtCount(flat.rows.length)
        : 'no function matches';
      $('flat-count').textContent = fmtCount(flat.all.length) + ' functions';
      $('flat-prev').disabled = flat.page === 0;
      $('flat-next').disabled = flat.page >= pages - 1;
      for (const th of document.querySelectorAll('#flat th')) {
        const key = SORT_ALIAS[th.dataset.key] || th.dataset.key;
        th.classList.toggle('sorted-desc', key === flat.key && flat.desc && th.dataset.key === key);
        th.classList.toggle('sorted-asc', key === flat.key && !flat.desc && th.dataset.key === key);
      }
    }

    function setupFlat() {
      for (const th of document.querySelectorAll('#flat th.sched')) th.hidden = !SCHED;
      document.querySelector('#flat thead').addEventListener('click', (ev) => {
        const th = ev.target.closest('th');
        if (!th) return;
        const key = SORT_ALIAS[th.dataset.key] || th.dataset.key;
        if (!SORT_VALUE[key]) return;
        if (flat.key === key) flat.desc = !flat.desc;
        else {
          flat.key = key;
          flat.desc = key !== 'name' && key !== 'source';
        }
        flat.page = 0;
        updateFlatRows();
        renderFlat();
      });
      let pending = 0;
      $('flat-filter').addEventListener('input', (ev) => {
        clearTimeout(pending);
        pending = setTimeout(() => {
          flat.filter = ev.target.value.trim();
          flat.page = 0;
          updateFlatRows();
          renderFlat();
        }, 120);
      });
      $('flat-prev').addEventListener('click', () => {
        flat.page--;
        renderFlat();
      });
      $('flat-next').addEventListener('click', () => {
        flat.page++;
        renderFlat();
      });
    }

    // ---- function sections ----
    let callersOf = null;  // per function: indices into ARCS, larger time first
    let calleesOf = null;
    function buildAdjacency() {
      callersOf = FN.map(() => []);
      calleesOf = FN.map(() => []);
      ARCS.forEach((a, k) => {
        callersOf[a[1]].push(k);
        if (a[0] >= 0) calleesOf[a[0]].push(k);
      });
      const byTime = (x, y) => ARCS[y][3] - ARCS[x][3] || x - y;
      for (const list of callersOf) list.sort(byTime);
      for (const list of calleesOf) list.sort(byTime);
    }

    // Rows [from, to) of an arc table; `other` is the column of the arc to name.
    function arcRows(arcs, other, total, from, to) {
      return arcs.slice(from, to).map((k) => {
        const a = ARCS[k];
        return '<tr><td class="name">' + fnLink(a[other]) + '</td>' +
          '<td class="num">' + fmtCount(a[2]) + '</td>' +
          figureCell(a[3], a[5], 'time') +
          figureCell(a[4], a[6], 'self time') +
          '<td class="num"><span class="bar" style="width:' +
          Math.round(Math.min(1, total > 0 ? a[3] / total : 0) * 60) + 'px"></span>' +
          fmtPct(a[3], total) + '</td></tr>';
      }).join('');
    }
    function moreButton(id, shown, count) {
      if (shown >= count) return '';
      return '<button type="button" class="more" data-table="' + id + '" data-shown="' + shown +
        '">Show ' + fmtCount(Math.min(MAX_ARC_ROWS, count - shown)) + ' more (' +
        fmtCount(count - shown) + ' not shown)</button>';
    }

    function arcTable(id, heading, arcs, other, total) {
      let html = '<h2>' + heading + ' <span class="muted">(' + fmtCount(arcs.length) + ')</span></h2>' +
        '<p class="muted">' + (other === 0
          ? 'Calls, time and self time of this function when called from each caller.'
          : 'Calls, time and self time of each callee when called from this function.') + '</p>';
      if (!arcs.length) return html + '<p class="muted">none</p>';
      html += '<table class="grid" id="' + id + '"><thead><tr><th>' + heading.slice(0, -1) +
        '</th><th class="num">Calls</th><th class="num">Time</th><th class="num">Self</th>' +
        '<th class="num">Share of the function\u2019s total</th></tr></thead><tbody>' +
        arcRows(arcs, other, total, 0, MAX_ARC_ROWS) + '</tbody></table>' +
        moreButton(id, Math.min(MAX_ARC_ROWS, arcs.length), arcs.length);
      return html;
    }

    function renderFunction(i) {
      const t0 = performance.now();
      if (!callersOf) buildAdjacency();
      const f = FN[i];
      const total = f[TOTAL];
      const facts = [
        ['Calls', 'fn-calls', fmtCount(f[CALLS])],
        ['Total time', 'fn-total', fmtFigure(total, f[TOTAL_RANGE])],
        ['Self time', 'fn-self', fmtFigure(f[SELF], f[SELF_RANGE])],
        ['Total per call', 'fn-avg', f[CALLS] ? fmtTime(total / f[CALLS]) : ''],
        ['Share of all time', 'fn-share', fmtPct(total, S.time_ns)],
      ];
      if (f[OFFCPU] > 0) facts.push(['Off-CPU (blocked, inside the total)', 'fn-offcpu', fmtTime(f[OFFCPU])]);
      if (f[PREEMPTED] > 0) facts.push(['Preempted (taken out)', 'fn-preempted', fmtTime(f[PREEMPTED])]);
      if (f[CLOCKED] > 0) facts.push(['Calls that read a clock', 'fn-clocked', fmtCount(f[CLOCKED])]);
      const uncertain = f[TOTAL_RANGE] || f[SELF_RANGE];
      const sec = $('function');
      sec.innerHTML =
        '<p><a href="#">\u2190 Summary</a> \u00b7 <a href="#flat-profile">Flat profile</a></p>' +
        '<h1 id="fn-name">' + esc(f[NAME]) + '</h1>' +
        (f[FULL] !== f[NAME] ? '<p class="muted" id="fn-full">' + esc(f[FULL]) + '</p>' : '') +
        '<p class="muted" id="fn-source">' + esc(sourceOf(f) || 'source unknown') +
        (f[FILE] && f[MODULE] ? ' \u00b7 ' + esc(f[MODULE]) : '') + '</p>' +
        '<table class="facts">' + facts.map(([k, id, v]) =>
          '<tr><th>' + k + '</th><td id="' + id + '">' + esc(v) + '</td></tr>').join('') +
        '</table>' +
        '<p class="muted">Time in the function itself: ' + fmtFigure(f[SELF], f[SELF_RANGE]) +
        (f[SELF_RANGE] ? '' : ' (' + (fmtPct(f[SELF], total) || '0%') + ' of its total)') +
        '. Times along an arc count the outermost activation only (docs/graph.md).</p>' +
        (uncertain ? '<p class="muted" id="fn-uncertain">A range (low..high) stands for a ' +
          'time that is mostly the recorder\u2019s own probe cost: the true time lies in it, ' +
          'and a single figure would be more precise than what was measured.</p>' : '') +
        '<p><a href="#flame-graph" id="fn-flame">Show its largest calling context in the flame graph</a></p>' +
        arcTable('fn-callers', 'Callers', callersOf[i], 0, total) +
        arcTable('fn-callees', 'Callees', calleesOf[i], 1, total);
      document.title = f[NAME] + ' \u2014 callmon';
      timings.lastSection = performance.now() - t0;
    }

    function setupFunction() {
      $('function').addEventListener('click', (ev) => {
        // "Show more" appends the next MAX_ARC_ROWS rows: a browser lays out a table of
        // ten thousand rows in seconds, a few hundred at a time stays quick.
        const more = ev.target.closest('button.more');
        if (more) {
          const m = /^#f(\d+)$/.exec(location.hash);
          if (!m) return;
          const i = +m[1];
          const callers = more.dataset.table === 'fn-callers';
          const arcs = (callers ? callersOf : calleesOf)[i];
          const shown = +more.dataset.shown;
          const to = Math.min(arcs.length, shown + MAX_ARC_ROWS);
          document.querySelector('#' + more.dataset.table + ' tbody').insertAdjacentHTML(
            'beforeend', arcRows(arcs, callers ? 0 : 1, FN[i][TOTAL], shown, to));
          more.outerHTML = moreButton(more.dataset.table, to, arcs.length);
          return;
        }
        if (ev.target.id === 'fn-flame') {
          // The context is shown in the merged view (of the thread picked).
          if (flame.view !== 'merged') {
            $('view-merged').checked = true;
            setView('merged');
          }
          const m = /^#f(\d+)$/.exec(location.hash);
          if (m) flame.focus = largestContextOf(+m[1]);
        }
      });
    }

    // ---- flame graph ----
    const flame = { focus: 0, kids: null, drawnWidth: 0, query: '', thread: -1, view: 'merged' };
    // Whether node n's function matches the search (case-insensitive substring).
    function flameMatch(n) {
      if (!flame.query || n === 0 || NODES[n][1] < 0) return false;
      // Lower-cased names once, shared with the flat profile's filter.
      if (!flat.lower) flat.lower = FN.map((f) => f[NAME].toLowerCase());
      return flat.lower[NODES[n][1]].includes(flame.query);
    }
    function nodeName(n) {
      if (n === 0) return 'all';
      const f = NODES[n][1];
      if (f < 0) return 'other (' + fmtCount(NODES[n][5]) + ' small contexts)';
      return FN[f][NAME];
    }
    function largestContextOf(i) {
      let best = 0;
      for (let n = 1; n < NODES.length; n++)
        if (NODES[n][1] === i && (best === 0 || NODES[n][3] > NODES[best][3])) best = n;
      return best;
    }
    function color(n) {
      return colorOf(nodeName(n));
    }
    function colorOf(s) {
      let h = 0;
      for (let k = 0; k < s.length; k++) h = (h * 31 + s.charCodeAt(k)) | 0;
      h = Math.abs(h);
      return 'hsl(' + (8 + (h % 42)) + ',' + (62 + (h % 5) * 4) + '%,' + (62 + (h % 7) * 3) + '%)';
    }
    function flameBox(n, x, w, row, cls) {
      const node = NODES[n];
      const kind = (n === 0 ? ' root' : node[1] < 0 ? ' other' : '') + (flameMatch(n) ? ' match' : '');
      const style = 'left:' + x.toFixed(1) + 'px;width:' + w.toFixed(1) + 'px;top:' +
        row * FLAME_ROW + 'px' + (kind ? '' : ';background:' + color(n));
      return '<div class="fg' + kind + (cls ? ' ' + cls : '') + '" data-n="' + n + '" style="' +
        style + '">' + (w > 28 ? esc(nodeName(n)) : '') + '</div>';
    }
    function renderFlame() {
      const box = $('flame');
      const W = box.clientWidth;
      if (!W) return;
      if (!flame.kids) {
        flame.kids = NODES.map(() => null);
        for (let n = 1; n < NODES.length; n++) {
          const p = NODES[n][0];
          (flame.kids[p] || (flame.kids[p] = [])).push(n);
        }
      }
      const html = [];
      const chain = [];
      for (let a = flame.focus; a >= 0; a = NODES[a][0]) chain.unshift(a);
      chain.forEach((a, row) => {
        if (a !== flame.focus) html.push(flameBox(a, 0, W, row, 'ancestor'));
      });
      let maxRow = chain.length - 1;
      const stack = [[flame.focus, 0, W, chain.length - 1]];
      while (stack.length) {
        const [n, x, w, row] = stack.pop();
        html.push(flameBox(n, x, w, row, n === flame.focus ? 'focus' : ''));
        if (row > maxRow) maxRow = row;
        const kids = flame.kids[n];
        if (!kids) continue;
        let sum = 0;
        for (const k of kids) sum += NODES[k][3];
        // Children never take more than their parent's width (rounding, compensation).
        const whole = Math.max(sum, NODES[n][3]);
        const scale = whole > 0 ? w / whole : 0;
        let cx = x;
        for (const k of kids) {
          const kw = NODES[k][3] * scale;
          if (kw >= FLAME_MIN_PX) stack.push([k, cx, kw, row + 1]);
          cx += kw;
        }
      }
      box.style.height = (maxRow + 1) * FLAME_ROW + 'px';
      box.classList.toggle('searching', flame.query !== '');
      box.innerHTML = html.join('');
      flame.drawnWidth = W;
      const n = flame.focus;
      const f = NODES[n][1];
      $('flame-focus').innerHTML = n === 0
        ? 'Showing all calls. Click a box to zoom in on it.'
        : 'Zoomed on <b id="flame-focus-name">' + esc(nodeName(n)) + '</b>: ' +
          fmtCount(NODES[n][2]) + ' calls, ' + fmtFigure(NODES[n][3], NODES[n][6]) + ' (' +
          (fmtPct(NODES[n][3], NODES[0][3]) || '0%') + ' of all)' +
          (f >= 0 ? ' \u00b7 <a href="#f' + f + '">function section</a>' : '') +
          ' \u00b7 <a href="#flame-graph" id="flame-reset">reset zoom</a>';
    }
    // The search's summary: how many contexts match, and their share of all time (a match
    // inside another match is not counted twice), over the whole tree, drawn or not.
    function renderFlameSearch() {
      const out = $('flame-search-result');
      if (!flame.query) {
        out.textContent = '';
        return;
      }
      let count = 0;
      let time = 0;
      const inMatch = new Uint8Array(NODES.length);
      for (let n = 1; n < NODES.length; n++) {
        const m = flameMatch(n);
        if (m) count++;
        if (m && !inMatch[NODES[n][0]]) time += NODES[n][3];
        inMatch[n] = m || inMatch[NODES[n][0]] ? 1 : 0;
      }
      out.textContent = count
        ? fmtCount(count) + ' matching context' + (count === 1 ? '' : 's') + ', ' +
          fmtTime(time) + ' (' + (fmtPct(time, NODES[0][3]) || '0%') + ' of all time)'
        : 'no match';
    }
    function renderFlameNote() {
      const pct = TREE.fraction * 100;
      $('flame-note').textContent = 'Calling-context tree: every distinct call path, widths ' +
        'proportional to time, callers above callees. ' + fmtCount(TREE.contexts) + ' contexts; ' +
        'those under ' + pct + '% of all time (' + fmtTime(TREE.threshold_ns) + ') are merged ' +
        'into one grey \u201cother\u201d box per caller (' + fmtCount(TREE.merged) + ' merged)' +
        (TREE.cut ? '; ' + fmtCount(TREE.cut) + ' deeper than ' + TREE.max_depth +
          ' levels are left out' : '') + '. Boxes under ' + FLAME_MIN_PX + ' px are not drawn.';
    }
    // The thread picker: -1 all threads merged, else an index into THREADS.
    function setThread(k) {
      flame.thread = k;
      TREE = k < 0 ? data.tree : THREADS[k].tree;
      NODES = TREE.nodes;
      flame.kids = null;
      flame.focus = 0;
      renderFlameNote();
      if (flame.view === 'time') {
        timeline.load(k);
        renderTimeline();
      } else {
        renderFlame();
      }
      renderFlameSearch();
    }
    function threadLabel(t) {
      return 'thread ' + t.tid + (t.name ? ' (' + t.name + ')' : '') + ', pid ' + t.pid +
        ': ' + fmtCount(t.calls) + ' calls';
    }
    function setView(view) {
      flame.view = view;
      $('merged-view').hidden = view !== 'merged';
      $('time-view').hidden = view !== 'time';
      // The time order is one thread's: "all threads" is not offered there.
      const all = $('flame-thread').querySelector('option[value="-1"]');
      if (all) all.disabled = view === 'time';
      if (view === 'time' && flame.thread < 0 && THREADS.length) {
        $('flame-thread').value = '0';
        setThread(0);
        return;
      }
      if (view === 'time') {
        timeline.load(flame.thread);
        renderTimeline();
      } else {
        renderFlame();
      }
    }
    function setupFlame() {
      let pendingSearch = 0;
      $('flame-search').addEventListener('input', (ev) => {
        clearTimeout(pendingSearch);
        pendingSearch = setTimeout(() => {
          flame.query = ev.target.value.trim().toLowerCase();
          if (flame.view === 'time') renderTimeline();
          else renderFlame();
          renderFlameSearch();
        }, 120);
      });
      renderFlameNote();
      const pick = $('flame-thread');
      pick.innerHTML = '<option value="-1">All threads, merged (' + fmtCount(THREADS.length) +
        ')</option>' + THREADS.map((t, k) => '<option value="' + k + '">' + esc(threadLabel(t)) +
        '</option>').join('');
      pick.addEventListener('change', () => setThread(+pick.value));
      for (const r of document.querySelectorAll('input[name="flame-view"]'))
        r.addEventListener('change', () => { if (r.checked) setView(r.value); });
      setupTip();
      setupTimeline();
      $('flame').addEventListener('click', (ev) => {
        const el = ev.target.closest('.fg');
        if (!el) return;
        const n = +el.dataset.n;
        // A click on the box already zoomed on goes one level out.
        flame.focus = n === flame.focus && n !== 0 ? NODES[n][0] : n;
        renderFlame();
      });
      $('flame-focus').addEventListener('click', (ev) => {
        if (ev.target.id === 'flame-reset') {
          flame.focus = 0;
          renderFlame();
        }
      });
      let queued = false;
      window.addEventListener('resize', () => {
        if (queued) return;
        queued = true;
        requestAnimationFrame(() => {
          queued = false;
          if (flame.view === 'time') renderTimeline();
          else if ($('flame').clientWidth !== flame.drawnWidth) renderFlame();
        });
      });
    }

    // ---- tooltip of the flame graph's and the time order's boxes ----
    function tipRows(rows) {
      return '<table>' + rows.map(([k, id, v]) => '<tr><th>' + k + '</th><td data-tip="' + id +
        '">' + esc(v) + '</td></tr>').join('') + '</table>';
    }
    // A flame graph box: the figures as the tables print them (fmtFigure: the range where
    // the figure is uncertain); the share is of the whole tree shown (all threads or one).
    function nodeTip(n) {
      const node = NODES[n];
      const rows = [
        ['Total', 'total', fmtFigure(node[3], node[6])],
        ['Self', 'self', fmtFigure(node[4], node[7])],
        ['Calls', 'calls', fmtCount(node[2])],
        ['Share of the whole', 'share', fmtPct(node[3], NODES[0][3]) || '0%'],
      ];
      if (node[8] > 0) rows.push(['Off-CPU (inside the total)', 'offcpu', fmtTime(node[8])]);
      return '<div class="tip-name">' + esc(nodeName(n)) + '</div>' + tipRows(rows);
    }
    function boxTip(i) {
      const b = timeline.boxes;
      const o = 6 * i;
      const f = b[o + 3];
      const count = b[o + 4];
      const [marks, pieces] = timeline.markOf(i);
      const merged = pieces > 1;
      const what = count === pieces ? ' short calls merged' : ' short pieces of calls merged';
      const name = merged
        ? fmtCount(pieces) + what + (f >= 0 ? ' of ' + FN[f][NAME] : ' (several functions)')
        : FN[f][NAME];
      const rows = [
        ['Start', 'start', fmtTime(b[o])],
        [merged ? 'Span' : 'Duration', 'duration', fmtTime(b[o + 1])],
        ['Calls', 'calls', fmtCount(count)],
      ];
      if (merged) rows.push(['Time in the calls', 'busy', fmtTime(b[o + 5])]);
      rows.push(['Depth', 'depth', String(b[o + 2])]);
      // Pieces of calls cut by coroutine switches, frames begun before the thread's stream.
      const notes = [];
      if (marks & MARK_CONTINUED) notes.push(merged ? 'holds continued pieces (calls resumed ' +
        'by a coroutine switch, counted where they began)' : 'continued: the call began ' +
        'earlier and was resumed by a coroutine switch (no new call)');
      if (marks & MARK_SUSPENDED) notes.push(merged ? 'holds pieces suspended by a coroutine ' +
        'switch' : 'suspended: a coroutine switch ended this piece (its call goes on in a ' +
        'later piece, or never)');
      if (marks & MARK_INHERITED) notes.push(merged ? 'holds inherited frames' : 'inherited: ' +
        'open when the thread\'s recording began (a fork child\'s or an attach\'s frame; ' +
        'the call is counted where it began)');
      return '<div class="tip-name">' + esc(name) + '</div>' + tipRows(rows) +
        notes.map((n) => '<div class="tip-mark">' + esc(n) + '</div>').join('');
    }
    // Below and right of the pointer, flipped to the other side where the window ends.
    function placeTip(tip, x, y) {
      const w = tip.offsetWidth;
      const h = tip.offsetHeight;
      let left = x + 14;
      if (left + w > window.innerWidth - 8) left = x - w - 14;
      let top = y + 16;
      if (top + h > window.innerHeight - 8) top = y - h - 12;
      tip.style.left = Math.max(8, left) + 'px';
      tip.style.top = Math.max(8, top) + 'px';
    }
    function setupTip() {
      const tip = $('flame-tip');
      let shown = null;
      for (const id of ['flame', 'timeline']) {
        const box = $(id);
        box.addEventListener('mousemove', (ev) => {
          const el = ev.target.closest('.fg');
          if (!el) {
            tip.hidden = true;
            shown = null;
            return;
          }
          if (shown !== el) {
            shown = el;
            tip.innerHTML = id === 'flame' ? nodeTip(+el.dataset.n) : boxTip(+el.dataset.i);
            tip.hidden = false;
          }
          placeTip(tip, ev.clientX, ev.clientY);
        });
        box.addEventListener('mouseleave', () => {
          tip.hidden = true;
          shown = null;
        });
      }
    }

    // ---- time order: one thread's calls along its compensated clock ----
    // boxes: flat [start, duration, depth, func (-1: several), count, busy] * n, ns from the
    // thread's first call, sorted by start then depth. marks (optional): flat [box, marks,
    // pieces] * m for the boxes holding pieces of calls: MARK_* bits, and the pieces the box
    // stands for (count is calls; a continuation or an inherited frame is no call).
    const MARK_CONTINUED = 1;
    const MARK_SUSPENDED = 2;
    const MARK_INHERITED = 4;
    const timeline = {
      thread: -2, boxes: [], marks: new Map(), span: 0, merged: 0, pieces: 0, inherited: 0,
      t0: 0, t1: 0, history: [],
      load(k) {
        if (k === this.thread) return;
        this.thread = k;
        this.boxes = k >= 0 ? THREADS[k].timeline : [];
        this.marks = new Map();
        const m = k >= 0 && THREADS[k].marks || [];
        for (let o = 0; o < m.length; o += 3) this.marks.set(m[o], [m[o + 1], m[o + 2]]);
        let span = 0;
        let merged = 0;
        let pieces = 0;
        let inherited = 0;
        for (let o = 0, i = 0; o < this.boxes.length; o += 6, i++) {
          span = Math.max(span, this.boxes[o] + this.boxes[o + 1]);
          const [marks, n] = this.markOf(i);
          if (n > 1) merged += n;
          if (marks & (MARK_CONTINUED | MARK_SUSPENDED)) pieces++;
          if (marks & MARK_INHERITED) inherited++;
        }
        this.span = span;
        this.merged = merged;
        this.pieces = pieces;
        this.inherited = inherited;
        this.t0 = 0;
        this.t1 = span;
        this.history = [];
      },
      // [marks, pieces] of box i: [0, count] for a box of whole calls.
      markOf(i) {
        return this.marks.get(i) || [0, this.boxes[6 * i + 4]];
      },
    };
    // The classes of a box's marks (page.css draws their edges dashed or dotted).
    function markClasses(marks) {
      return (marks & MARK_CONTINUED ? ' continued' : '') +
        (marks & MARK_SUSPENDED ? ' suspended' : '') + (marks & MARK_INHERITED ? ' inherited' : '');
    }
    function renderTimeline() {
      const box = $('timeline');
      const W = box.clientWidth;
      if (!W) return;
      const b = timeline.boxes;
      const t0 = timeline.t0;
      const t1 = Math.max(timeline.t1, t0 + 1e-9);
      const scale = W / (t1 - t0);
      const html = [];
      let maxDepth = 0;
      let drawn = 0;
      for (let o = 0, i = 0; o < b.length; o += 6, i++) {
        const s = b[o];
        const e = s + b[o + 1];
        if (e < t0 || s > t1) continue;
        const x0 = Math.max(0, (s - t0) * scale);
        const x1 = Math.min(W, (e - t0) * scale);
        if (x1 - x0 < FLAME_MIN_PX) continue;
        const depth = b[o + 2];
        const f = b[o + 3];
        const count = b[o + 4];
        const [marks, pieces] = timeline.markOf(i);
        const name = f >= 0 ? FN[f][NAME] : '';
        const label = pieces > 1 ? fmtCount(count) + ' calls' + (f >= 0 ? ': ' + name : '') : name;
        const match = flame.query && f >= 0 && name.toLowerCase().includes(flame.query);
        if (depth > maxDepth) maxDepth = depth;
        drawn++;
        html.push('<div class="fg' + (pieces > 1 ? ' merged' : '') + markClasses(marks) +
          (match ? ' match' : '') +
          '" data-i="' + i + '" data-start="' + s + '" data-end="' + e + '" data-depth="' + depth +
          '" style="left:' + x0.toFixed(1) + 'px;width:' + (x1 - x0).toFixed(1) + 'px;top:' +
          depth * FLAME_ROW + 'px;background-color:' + (f >= 0 ? colorOf(name) : '#c9ccd1') + '">' +
          (x1 - x0 > 28 ? esc(label) : '') + '</div>');
      }
      box.style.height = (maxDepth + 1) * FLAME_ROW + 'px';
      box.classList.toggle('searching', flame.query !== '');
      box.innerHTML = html.join('');
      const t = THREADS[timeline.thread];
      const n = b.length / 6;
      $('timeline-note').textContent = !t ? 'No thread recorded a call.'
        : 'Thread ' + t.tid + (t.name ? ' (' + t.name + ')' : '') + ': its calls in the order they ran, ' +
          'placed on its compensated clock (as the chrome export places them), callers above ' +
          'callees. ' + fmtCount(n) + ' boxes' + (timeline.merged > 0
            ? '; ' + fmtCount(timeline.merged) + (timeline.marks.size ? ' calls or pieces of calls'
              : ' calls') + ' shorter than ' +
              fmtTime(t.merged_below_ns) + ' are merged with their neighbours under the same ' +
              'caller into hatched boxes, one per depth, their callees left out (so that the ' +
              'page stays small)' : '') +
          (timeline.pieces > 0 ? '. Calls cut by coroutine switches are a box per piece, ' +
            'each at its time: a dashed right edge where a switch suspended the call, a ' +
            'dashed left edge where it continued (no new call)' : '') +
          (timeline.inherited > 0 ? '. Boxes with a dotted left edge are frames open when ' +
            'the thread\'s recording began (a fork child\'s or an attach\'s), counted where ' +
            'they began' : '') +
          '. Click a box to zoom on it.';
      $('timeline-window').textContent = 'Showing ' + fmtTime(t0) + ' to ' + fmtTime(t1) +
        ' of ' + fmtTime(timeline.span) + ' (' + fmtCount(drawn) + ' boxes drawn)';
      $('timeline-out').disabled = timeline.history.length === 0;
    }
    function setupTimeline() {
      $('timeline').addEventListener('click', (ev) => {
        const el = ev.target.closest('.fg');
        if (!el) return;
        const s = +el.dataset.start;
        const e = +el.dataset.end;
        if (e <= s) return;
        timeline.history.push([timeline.t0, timeline.t1]);
        timeline.t0 = s;
        timeline.t1 = e;
        renderTimeline();
      });
      $('timeline-out').addEventListener('click', () => {
        const last = timeline.history.pop();
        if (last) [timeline.t0, timeline.t1] = last;
        renderTimeline();
      });
      $('timeline-reset').addEventListener('click', () => {
        timeline.history = [];
        timeline.t0 = 0;
        timeline.t1 = timeline.span;
        renderTimeline();
      });
    }

    // ---- routing: #f<index> shows a function, anything else the overview ----
    let overviewDrawn = false;
    function route() {
      const m = /^#f(\d+)$/.exec(location.hash);
      const fn = m && +m[1] < FN.length ? +m[1] : -1;
      $('overview').hidden = fn >= 0;
      $('function').hidden = fn < 0;
      if (fn >= 0) {
        renderFunction(fn);
        window.scrollTo(0, 0);
        return;
      }
      document.title = 'callmon: ' + S.recording;
      if (!overviewDrawn) {
        overviewDrawn = true;
        let t = performance.now();
        updateFlatRows();
        renderFlat();
        timings.flat = performance.now() - t;
        t = performance.now();
        renderFlame();
        timings.flame = performance.now() - t;
      } else if (flame.view === 'time') {
        renderTimeline();
      } else {
        renderFlame();
      }
      const target = location.hash.length > 1 && document.getElementById(location.hash.slice(1));
      if (target) target.scrollIntoView();
      else window.scrollTo(0, 0);
    }

    renderSummary();
    setupFlat();
    setupFunction();
    setupFlame();
    window.addEventListener('hashchange', route);
    route();
    timings.ready = performance.now();
    document.documentElement.dataset.ready = '1';
  }
})();
