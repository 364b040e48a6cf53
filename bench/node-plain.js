// node-plain.js: a plain Node.js script measuring setTimeout the way the
// study tl grew from does, the baseline of `bench_probes node`:
// t0 = process.hrtime.bigint(), setTimeout(cb, d), t1 at the start of the
// callback, the next timer armed from inside the callback, the delays
// interleaved. Usage: node node-plain.js DELAYS_MS COUNT WARMUP
// Prints "DELAY_MS NS" per sample after the warm-up, at the end.
'use strict';

const delays = process.argv[2].split(',').map(Number);
const count = Number(process.argv[3]);
const warmup = Number(process.argv[4]);
const total = (count + warmup) * delays.length;
const lines = [];
let k = 0;
let t0 = 0n;

function fire() {
  const t1 = process.hrtime.bigint();
  const d = delays[k % delays.length];
  if (k >= warmup * delays.length) lines.push(`${d} ${t1 - t0}`);
  k++;
  if (k < total) arm();
  else process.stdout.write(lines.join('\n') + '\n');
}

function arm() {
  t0 = process.hrtime.bigint();
  setTimeout(fire, delays[k % delays.length]);
}

arm();
