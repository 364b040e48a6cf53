#!/usr/bin/env python3
# asyncio.sleep as a tl probe: tlcollect --probe 'exec:python3 asyncio-probe.py'
import asyncio, sys, time

async def main():
    print("hello 1", flush=True)
    for line in sys.stdin:  # tl sends one request at a time: "measure NS"
        ns = int(line.split()[1])
        t0 = time.monotonic_ns()
        await asyncio.sleep(ns / 1e9)
        print(f"sample {time.monotonic_ns() - t0}", flush=True)

asyncio.run(main())
