// tl-browser-probe.js: the browser probe of tlcollect. It measures timers
// inside a real headless Chromium tab, with the page's own clock
// (performance.now()), and speaks version 2 of tl's line protocol (README,
// "Writing a probe").
//
// Chromium is driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: no port, no network). The page is served by a
// loopback HTTP server this script starts, with the COOP/COEP headers that
// make it cross-origin isolated: only then does performance.now() move in
// 5 us steps rather than 100 us. Nothing else is loaded.
//
// --mode=MODE chooses what is measured (tl records it as the tag
// browser_mode):
//   nested      setTimeout(fn, d), each armed in the previous one's callback:
//               past five levels of nesting the HTML standard clamps the
//               delay to at least 4 ms
//   timeout     setTimeout(fn, d), each armed from a MessageChannel task, so
//               that nesting never builds up: no clamp
//   message     a MessageChannel postMessage until its onmessage (0 ms only)
//   raf         requestAnimationFrame until its callback (0 ms only)
//   background  nested, in a tab hidden behind another: the browser's
//               throttling of background tabs
// It reports the browser's version, the clock's resolution (the smallest
// step of performance.now() seen), whether the page is cross-origin isolated
// and its visibility as facts, and exits when stdin closes.
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');

const MODES = ['nested', 'timeout', 'message', 'raf', 'background'];
const arg = (name, dflt) => {
  const a = process.argv.slice(2).find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : dflt;
};
const mode = arg('mode', 'nested');
const chromium = arg('chromium', 'chromium');

const out = (text) => process.stdout.write(text);
let browser = null;
let profile = null;
let server = null;

function cleanup() {
  if (server) server.close();
  server = null;
  if (browser && browser.exitCode === null && browser.signalCode === null) {
    try {
      process.kill(browser.pid, 'SIGKILL');
    } catch (e) {
      /* gone already */
    }
  }
  if (profile) fs.rmSync(profile, { recursive: true, force: true, maxRetries: 5 });
  profile = null;
}

function fail(why) {
  out(`error ${String(why).replace(/[\x00-\x1f\x7f]/g, ' ').slice(0, 300)}\n`);
  cleanup();
  process.exit(1);
}

if (!MODES.includes(mode)) fail(`unknown --mode ${mode} (${MODES.join(', ')})`);

// The page: tlRun(plan) measures and hands batches of samples to the
// binding tlBatch ("NS NS ..."), every 256 samples or 100 ms and at the end.
const PAGE = `<!doctype html><meta charset="utf-8"><title>tl browser probe</title><script>
'use strict';
window.tlResolution = () => {
  let min = Infinity, a = performance.now();
  for (let i = 0; i < 200000; i++) {
    const b = performance.now();
    if (b > a && b - a < min) min = b - a;
    a = b;
  }
  return Math.round(min * 1e6);
};
window.tlRun = (delays, count, gapMs, mode) => {
  const n = delays.length, total = count * n, channel = new MessageChannel();
  let k = 0, t0 = 0, batch = [], batchStart = 0, onMessage = null;
  channel.port1.onmessage = () => onMessage();
  const record = () => {
    const t1 = performance.now();
    batch.push(Math.round((t1 - t0) * 1e6));
    if (batch.length === 1) batchStart = t1;
    k++;
    const done = total > 0 && k === total;
    if (done || batch.length >= 256 || t1 - batchStart >= 100) {
      tlBatch(batch.join(' '));
      batch = [];
    }
    return done;
  };
  let arm;
  const fire = () => {
    if (record()) return;
    if (gapMs > 0) setTimeout(arm, gapMs);
    else arm();
  };
  if (mode === 'message') {
    onMessage = fire;
    arm = () => { t0 = performance.now(); channel.port2.postMessage(0); };
  } else if (mode === 'raf') {
    arm = () => { t0 = performance.now(); requestAnimationFrame(fire); };
  } else if (mode === 'timeout') {
    const start = () => { t0 = performance.now(); setTimeout(fire, delays[k % n]); };
    onMessage = start;
    arm = () => channel.port2.postMessage(0);
  } else {
    arm = () => { t0 = performance.now(); setTimeout(fire, delays[k % n]); };
  }
  arm();
};
</script>`;

// ---------------------------------------------------------------------------
// The DevTools protocol over the pipe: JSON messages ended by NUL.

let nextId = 0;
const pending = new Map();
let toBrowser = null;
let received = '';
let onBatch = null;

function send(method, params = {}, sessionId = undefined) {
  return new Promise((resolve, reject) => {
    const msg = { id: ++nextId, method, params };
    if (sessionId) msg.sessionId = sessionId;
    pending.set(msg.id, { resolve, reject });
    toBrowser.write(JSON.stringify(msg) + '\0');
  });
}

function onData(chunk) {
  received += chunk;
  let end;
  while ((end = received.indexOf('\0')) >= 0) {
    const msg = JSON.parse(received.slice(0, end));
    received = received.slice(end + 1);
    if (msg.id && pending.has(msg.id)) {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) p.reject(new Error(`${msg.error.message}`));
      else p.resolve(msg.result);
    } else if (msg.method === 'Runtime.bindingCalled' && msg.params.name === 'tlBatch') {
      if (onBatch) onBatch(msg.params.payload);
    } else if (msg.method === 'Runtime.exceptionThrown') {
      fail(`the page threw: ${msg.params.exceptionDetails.text}`);
    }
  }
}

function serve() {
  return new Promise((resolve, reject) => {
    server = http.createServer((req, res) => {
      const ok = req.url === '/';
      res.writeHead(ok ? 200 : 404, {
        'Content-Type': 'text/html; charset=utf-8',
        'Cross-Origin-Opener-Policy': 'same-origin',
        'Cross-Origin-Embedder-Policy': 'require-corp',
        'Cache-Control': 'no-store',
      });
      res.end(ok ? PAGE : '');
    });
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

async function start() {
  const port = await serve();
  profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tl-browser-'));
  const flags = [
    '--headless=new',
    '--remote-debugging-pipe',
    '--disable-gpu',
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-domain-reliability',
    '--disable-sync',
    '--disable-extensions',
    '--no-pings',
    `--user-data-dir=${profile}`,
    'about:blank',
  ];
  // The tab loads nothing but the page above, so the sandbox guards nothing
  // here, and it fails as root and in many containers.
  flags.unshift('--no-sandbox');
  browser = spawn(chromium, flags, { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
  browser.on('error', (e) => fail(`cannot start ${chromium}: ${e.message}`));
  browser.on('exit', (code, sig) => fail(`the browser exited (${sig || `status ${code}`})`));
  toBrowser = browser.stdio[3];
  browser.stdio[4].setEncoding('utf8');
  browser.stdio[4].on('data', onData);

  const version = await send('Browser.getVersion');
  const background = mode === 'background';
  const { targetId } = await send('Target.createTarget', { url: 'about:blank', background });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  await send('Runtime.enable', {}, sessionId);
  await send('Runtime.addBinding', { name: 'tlBatch' }, sessionId);
  await send('Page.enable', {}, sessionId);
  const loaded = new Promise((resolve) => {
    const check = async () => {
      const r = await send(
        'Runtime.evaluate',
        { expression: 'document.readyState', returnByValue: true },
        sessionId,
      );
      if (r.result.value === 'complete' && (await evaluate('typeof tlRun')) === 'function')
        resolve();
      else setTimeout(check, 20);
    };
    setTimeout(check, 20);
  });
  const evaluate = async (expression) => {
    const r = await send(
      'Runtime.evaluate',
      { expression, awaitPromise: true, returnByValue: true },
      sessionId,
    );
    if (r.exceptionDetails) fail(`the page threw: ${r.exceptionDetails.text}`);
    return r.result.value;
  };
  await send('Page.navigate', { url: `http://127.0.0.1:${port}/` }, sessionId);
  await loaded;
  if (background) {
    // Another tab in front hides this one.
    const front = await send('Target.createTarget', { url: 'about:blank' });
    await send('Target.activateTarget', { targetId: front.targetId });
  }
  const isolated = await evaluate('crossOriginIsolated');
  const resolution = await evaluate('tlResolution()');
  const visibility = await evaluate('document.visibilityState');
  out(
    `fact browser.version ${version.product}\n` +
      `fact browser.clock_resolution_ns ${resolution}\n` +
      `fact browser.cross_origin_isolated ${isolated}\n` +
      `fact browser.visibility ${visibility}\n`,
  );
  return evaluate;
}

// ---------------------------------------------------------------------------

out('hello 2\n');
const ready = start().catch((e) => fail(e.message));

let pendingInput = '';
let planned = false;
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pendingInput += chunk;
  let nl;
  while ((nl = pendingInput.indexOf('\n')) >= 0) {
    const line = pendingInput.slice(0, nl);
    pendingInput = pendingInput.slice(nl + 1);
    const m = /^plan (\d{1,19}(?:,\d{1,19})*) (\d{1,19}) (\d{1,19})$/.exec(line);
    if (!m || planned) fail('expected one plan line');
    planned = true;
    const delays = m[1].split(',').map((d) => Number(BigInt(d) / 1000000n));
    if ((mode === 'message' || mode === 'raf') && delays.some((d) => d !== 0))
      fail(`--browser-mode ${mode} measures 0 ms only`);
    const count = Number(m[2]);
    const gapMs = Number(m[3]) / 1e6;
    ready.then((evaluate) => {
      onBatch = (payload) => {
        if (payload) out(payload.split(' ').map((ns) => `sample ${ns}\n`).join(''));
      };
      evaluate(`tlRun(${JSON.stringify(delays)}, ${count}, ${gapMs}, ${JSON.stringify(mode)})`);
    });
  }
});
// tl closes stdin when it is done: end the browser, then its profile.
process.stdin.on('end', () => {
  const done = () => {
    cleanup();
    process.exit(0);
  };
  if (!browser || browser.exitCode !== null || browser.signalCode !== null) done();
  browser.removeAllListeners('exit');
  browser.on('exit', done);
  browser.kill('SIGTERM');
  setTimeout(() => browser.kill('SIGKILL'), 1000);
});
