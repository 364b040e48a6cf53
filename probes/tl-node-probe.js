// tl-node-probe.js: the node probe of tlcollect. It measures the real
// Node.js setTimeout the way a script timing itself does, and speaks
// version 2 of tl's line protocol (README, "Writing a probe"):
//
//   it says "hello 2" and reports node's and its libuv's versions as facts;
//   tl sends the plan once: "plan D1,D2,... COUNT GAP" (nanoseconds; COUNT
//   samples per delay, 0 for "until stdin closes");
//   it measures the delays in turn: t0 = process.hrtime.bigint() just before
//   setTimeout(fn, D / 1e6 ms), t1 at the start of the callback, and arms the
//   next timer from there (after GAP, when there is one);
//   it writes "sample NS" lines in batches (every 256 samples or 100 ms, and
//   at the end), so that writing costs one call per batch, not per sample;
//   on Linux each line also carries "runq=NS": the time the main thread
//   spent runnable but waiting for a CPU during the sample (the second field
//   of /proc/thread-self/schedstat), read just before t0 and just after t1,
//   outside the timed interval;
//   when tl reads no more for a while (its writer cannot store: a database
//   locked by another process), the pipe fills and the next timer is armed
//   only once stdout has drained, between two samples, so that neither tl
//   nor this process holds more than a pipe's worth of waiting samples.
//
// --arm-from=CONTEXT says where each next timer is armed: timer (in the
// previous timer's callback, the default), immediate (in a setImmediate
// callback, the loop's check phase) or io (in an fs.stat callback, an I/O
// completion delivered in the loop's poll phase). It exits when stdin
// closes.
'use strict';

const fs = require('fs');

const out = (text) => process.stdout.write(text);
const fail = (why) => {
  out(`error ${why}\n`);
  process.exit(1);
};

const CONTEXTS = ['timer', 'immediate', 'io'];
const armArg = process.argv.slice(2).find((a) => a.startsWith('--arm-from='));
const armFrom = armArg ? armArg.slice('--arm-from='.length) : 'timer';
if (!CONTEXTS.includes(armFrom)) fail(`unknown --arm-from ${armFrom}`);

// The main thread's schedstat, opened by the main thread (thread-self is
// resolved at open) and read again from offset 0; null where there is none.
let schedstat = null;
try {
  schedstat = fs.openSync('/proc/thread-self/schedstat', 'r');
} catch (e) {
  schedstat = null;
}
const statBuf = Buffer.alloc(96);
function runqWait() {
  if (schedstat === null) return -1n;
  try {
    const n = fs.readSync(schedstat, statBuf, 0, statBuf.length, 0);
    const f = statBuf.toString('latin1', 0, n).split(' ');
    return f.length >= 2 ? BigInt(f[1]) : -1n;
  } catch (e) {
    return -1n;
  }
}

const BATCH_MAX = 256;
const BATCH_NS = 100000000n;
let batch = '';
let inBatch = 0;
let batchStart = 0n;

// Returns false when stdout's buffer is full: tl is not reading.
function flush() {
  const room = inBatch ? out(batch) : true;
  batch = '';
  inBatch = 0;
  return room;
}

function measure(delaysMs, count, gapMs) {
  const n = delaysMs.length;
  const total = count * n; // 0: no end but stdin's
  let k = 0;
  let t0 = 0n;
  let wait0 = -1n;
  let armNext;
  function fire() {
    const t1 = process.hrtime.bigint();
    const wait1 = runqWait();
    const causes = wait0 >= 0n && wait1 >= wait0 ? ` runq=${wait1 - wait0}` : '';
    batch += `sample ${t1 - t0}${causes}\n`;
    if (inBatch++ === 0) batchStart = t1;
    k++;
    const done = total > 0 && k === total;
    let room = true;
    if (done || inBatch >= BATCH_MAX || t1 - batchStart >= BATCH_NS) room = flush();
    if (done) return;
    const next = gapMs > 0 ? () => setTimeout(armNext, gapMs) : armNext;
    if (room) next();
    else process.stdout.once('drain', next);
  }
  function arm() {
    const ms = delaysMs[k % n];
    wait0 = runqWait();
    t0 = process.hrtime.bigint();
    setTimeout(fire, ms);
  }
  armNext =
    armFrom === 'timer'
      ? arm
      : armFrom === 'immediate'
        ? () => setImmediate(arm)
        : () => fs.stat(__filename, arm);
  armNext();
}

let pending = '';
let planned = false;
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    const m = /^plan (\d{1,19}(?:,\d{1,19})*) (\d{1,19}) (\d{1,19})$/.exec(line);
    if (!m || planned) fail('expected one plan line');
    planned = true;
    const delaysMs = m[1].split(',').map((d) => Number(BigInt(d) / 1000000n));
    measure(delaysMs, Number(m[2]), Number(m[3]) / 1e6);
  }
});
process.stdin.on('end', () => {
  flush();
  process.exit(0);
});
out(`hello 2\nfact node.version ${process.version}\nfact node.libuv ${process.versions.uv}\n`);
