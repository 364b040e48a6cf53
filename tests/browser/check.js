// Opens tl's HTML pages in headless Chromium and checks what a reader sees:
// at 1280 px no table of the page is wider than its container; at 390 px (a
// phone) no main table is wider than the screen and the p90 of the first row
// of every lateness table is on screen; at both, no two text boxes of any
// chart overlap and none is cut by its chart's edge (every `svg text`, by
// getBoundingClientRect, as drawn), and the answer box starts within the
// first 800 px; on every page but the index the first screen (1280x800,
// 390x844) holds the answer's first p90 figure, and on a comparison page a
// verdict with its interval and sessions; no heading is without content
// (the next thing after it is no heading of its level or above). An index
// page (index.html) has no lateness table or answer box of its own. Usage: node check.js
// CHROMIUM PAGE.html... (or CHART.svg, a Markdown page's chart: its texts only)
// Prints one line per finding; exits 1 when something fails.
'use strict';
const puppeteer = require('puppeteer-core');

async function measure(page) {
  return page.evaluate(() => {
    const out = { wide: [], phoneWide: [], p90: [], overlaps: [], cut: [], answerTop: null, tables: 0, lateness: 0, texts: 0 };
    const screen = document.documentElement.clientWidth;
    const box = document.querySelector('section.answer');
    if (box) out.answerTop = box.getBoundingClientRect().top + window.scrollY;
    for (const t of document.querySelectorAll('main table')) {
      const wrap = t.closest('.scroll') || t.parentElement;
      if (t.closest('details:not([open])')) continue; // folded: not on screen
      out.tables++;
      const head = [...t.querySelectorAll('th')].map(th => th.textContent).join('|');
      const width = t.getBoundingClientRect().width;
      if (width > wrap.clientWidth + 0.5)
        out.wide.push(`${Math.round(width)} > ${wrap.clientWidth}: ${head.slice(0, 80)}`);
      if (width > screen + 0.5)
        out.phoneWide.push(`${Math.round(width)} > ${screen}: ${head.slice(0, 80)}`);
    }
    // The lateness tables (a "p90 (ms)" or "p90 (µs)" column): the p90 of
    // their first row is on screen, whether the table folds or not.
    for (const t of document.querySelectorAll('main table')) {
      const ths = [...t.querySelectorAll('th')];
      const col = ths.findIndex(th => /^p90 \((ms|µs)\)$/.test(th.textContent));
      const row = t.querySelector('tbody tr');
      if (col < 0 || !row) continue;
      out.lateness++;
      const r = row.children[col].getBoundingClientRect();
      if (r.width === 0 || r.right > screen + 0.5 || r.left < 0)
        out.p90.push(`p90 of ${row.children[0].textContent} at ${Math.round(r.left)}..${Math.round(r.right)} px`);
    }
    for (const svg of document.querySelectorAll('svg')) {
      const edge = svg.getBoundingClientRect();
      const rects = [...svg.querySelectorAll('text')].map(t => ({ t: t.textContent, r: t.getBoundingClientRect() }))
        .filter(x => x.r.width > 0 && x.r.height > 0);
      out.texts += rects.length;
      // Cut by the chart's edge: a tick label "150000" shown as ".50000".
      for (const x of rects)
        if (x.r.left < edge.left - 0.5 || x.r.right > edge.right + 0.5 ||
            x.r.top < edge.top - 0.5 || x.r.bottom > edge.bottom + 0.5)
          out.cut.push(`${svg.querySelector('title').textContent}: "${x.t}"`);
      for (let i = 0; i < rects.length; i++)
        for (let j = i + 1; j < rects.length; j++) {
          const a = rects[i].r, b = rects[j].r;
          const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
          const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
          if (w > 0.5 && h > 0.5)
            out.overlaps.push(`${svg.querySelector('title').textContent}: "${rects[i].t}" and "${rects[j].t}"`);
        }
    }
    return out;
  });
}

// The first screen (the top `height` px) of a comparison page holds a verdict
// with its 95% interval and the sessions it rests on: the text from
// "95% interval" to "session(s)" ends above the fold; on a --by page, how
// the tail changes with the key ("Spearman -0.03 (95% interval ...) at p90").
async function verdictOnFirstScreen(page, height) {
  return page.evaluate((height) => {
    const box = document.querySelector('section.answer');
    if (!box) return null;
    const walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      // a pair's verdict, or on a --by page how the tail changes with the key
      const m = /95% interval [^,]+, \d+ (and \d+ )?sessions?( each)?/.exec(n.textContent) ||
        /Spearman \S+ \(95% interval [^)]+\) at p90/.exec(n.textContent);
      if (!m) continue;
      const r = document.createRange();
      r.setStart(n, m.index);
      r.setEnd(n, m.index + m[0].length);
      const b = r.getBoundingClientRect();
      if (b.height > 0 && b.bottom + window.scrollY <= height) return m[0];
    }
    return null;
  }, height);
}

// The answer box's first p90 figure ("p90 is 239.7 µs late", "at p90 ...
// 338.9 µs", a table's "p90 lateness" column): the first number after the
// first "p90" in the box, and whether it ends above the fold.
async function firstP90(page, height) {
  return page.evaluate((height) => {
    const box = document.querySelector('section.answer');
    if (!box) return null;
    // A table of the answer with a p90 column: its first row's p90; or
    // the figure of a sentence, when it comes first.
    let cell = null;
    for (const t of box.querySelectorAll('table')) {
      const col = [...t.querySelectorAll('th')].findIndex(th => /^p90/.test(th.textContent));
      const row = t.querySelector('tbody tr');
      if (col < 0 || !row || cell) continue;
      const b = row.children[col].getBoundingClientRect();
      const bottom = b.bottom + window.scrollY;
      if (b.height > 0)
        cell = { found: row.children[col].textContent, bottom, ok: bottom <= height };
    }
    const first = (x) => (cell && (!x || cell.bottom < x.bottom) ? cell : x || { found: null });
    const walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    let seen = false;
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const t = n.textContent;
      const from = seen ? 0 : t.indexOf('p90');
      if (from < 0) continue;
      seen = true;
      const m = /\d+(\.\d+)? ?(µs|ms)/.exec(t.slice(from + (t.startsWith('p90', from) ? 3 : 0)));
      if (!m) continue;
      const i = t.indexOf(m[0], from + (t.startsWith('p90', from) ? 3 : 0));
      const r = document.createRange();
      r.setStart(n, i);
      r.setEnd(n, i + m[0].length);
      const b = r.getBoundingClientRect();
      const bottom = b.bottom + window.scrollY;
      return first({ found: m[0], bottom, ok: b.height > 0 && bottom <= height });
    }
    return first(null);
  }, height);
}

// Headings with nothing under them: an h2 or h3 followed directly by a
// heading of its level or above, or by nothing.
async function emptyHeadings(page) {
  return page.evaluate(() => {
    const out = [];
    for (const h of document.querySelectorAll('main h2, main h3')) {
      const level = +h.tagName[1];
      const next = h.nextElementSibling;
      if (!next || (/^H[1-6]$/.test(next.tagName) && +next.tagName[1] <= level))
        out.push(h.textContent);
    }
    return out;
  });
}

(async () => {
  const [chromium, ...pages] = process.argv.slice(2);
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
  });
  let failed = 0;
  const fail = (msg) => { failed++; console.log('FAIL ' + msg); };
  try {
    for (const file of pages) {
      const page = await browser.newPage();
      for (const [w, h] of [[1280, 900], [390, 844]]) {
        await page.setViewport({ width: w, height: h });
        await page.goto('file://' + file, { waitUntil: 'load' });
        const m = await measure(page);
        const name = `${file.split('/').pop()} at ${w} px`;
        console.log(`${name}: ${m.tables} tables (${m.lateness} of lateness), ${m.texts} chart texts, answer box at ${m.answerTop === null ? '-' : Math.round(m.answerTop)} px`);
        const index = file.endsWith('/index.html');
        if (file.endsWith('.svg')) { // a Markdown page's chart, a file of its own
          for (const x of m.overlaps) fail(`${name}: text overlaps: ${x}`);
          for (const x of m.cut) fail(`${name}: text cut by the chart's edge: ${x}`);
          continue;
        }
        if (!m.lateness && !index) fail(`${name}: no lateness table found`);
        if (w === 1280) {
          for (const x of m.wide) fail(`${name}: table wider than its container: ${x}`);
          if (!index && (m.answerTop === null || m.answerTop > 800)) fail(`${name}: the answer box does not start within 800 px`);
        } else {
          for (const x of m.phoneWide) fail(`${name}: table wider than the screen: ${x}`);
        }
        for (const x of m.p90) fail(`${name}: ${x}, off screen`);
        for (const x of m.overlaps) fail(`${name}: text overlaps: ${x}`);
        for (const x of m.cut) fail(`${name}: text cut by the chart's edge: ${x}`);
        const fold = w === 1280 ? 800 : h;
        if (!index) {
          const p90 = await firstP90(page, fold);
          if (p90 && p90.ok) console.log(`${name}: the first p90 figure, ${p90.found}, ends at ${Math.round(p90.bottom)} px`);
          else fail(`${name}: the answer's first p90 figure is not in the first ${fold} px${p90 && p90.found ? ` (${p90.found} at ${Math.round(p90.bottom)} px)` : ''}`);
        }
        for (const x of await emptyHeadings(page)) fail(`${name}: heading without content: ${x}`);
        if (file.endsWith('compare.html')) {
          const v = await verdictOnFirstScreen(page, fold);
          if (v) console.log(`${name}: on the first ${fold} px: "${v}"`);
          else fail(`${name}: no verdict with its interval and sessions in the first ${fold} px`);
        }
      }
      await page.close();
    }
  } finally {
    await browser.close();
  }
  console.log(failed ? `${failed} failed` : 'ok');
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.log('ERROR ' + e.message); process.exit(2); });
