// A side client, in a thread of its own, that PINGs Redis every 10 ms and remembers the
// slowest answer, as PingProbe.java does: a script that holds Redis busy shows up here as
// a stall. Its own thread (event loop) keeps the benchmark's work from delaying the pings.
import { parentPort, workerData } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';

const STALL_MS = 5;
const redis = new Redis(workerData.redisUrl, { maxRetriesPerRequest: null });
let running = true;
let slowestMs = 0;
let pings = 0;
let stalls = 0;

parentPort.on('message', () => {
  running = false;
});

await redis.ping();
parentPort.postMessage({ started: true });
const start = performance.now();
for (let tick = 0; running; tick++) {
  const next = start + tick * 10;
  const wait = next - performance.now();
  if (wait > 0) {
    await sleep(wait);
  }
  const before = performance.now();
  await redis.ping();
  const took = performance.now() - before;
  pings++;
  slowestMs = Math.max(slowestMs, took);
  if (took > STALL_MS) {
    stalls++;
  }
}
await redis.quit();
parentPort.postMessage({ slowestMs, pings, stalls });
