// tl-node-probe.js: the node probe of tlcollect. It measures the real
// Node.js setTimeout and answers tl over its line protocol (README,
// "Writing a probe"): it says "hello 1", then for each "measure NS" line on
// stdin arms setTimeout(fn, NS / 1e6 ms) and answers "sample NS" with the
// nanoseconds from just before setTimeout to the start of the callback
// (process.hrtime.bigint). It exits when stdin closes.
'use strict';

const out = (line) => process.stdout.write(line + '\n');

function measure(ns) {
  const ms = Number(ns / 1000000n);
  const t0 = process.hrtime.bigint();
  setTimeout(() => {
    const t1 = process.hrtime.bigint();
    out(`sample ${t1 - t0}`);
  }, ms);
}

let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    const m = /^measure (\d{1,19})$/.exec(line);
    if (!m) {
      out('error unknown request');
      process.exit(1);
    }
    measure(BigInt(m[1]));
  }
});
process.stdin.on('end', () => process.exit(0));
out('hello 1');
