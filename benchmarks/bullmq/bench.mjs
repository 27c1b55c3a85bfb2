// BullMQ in the scenarios of the Java benchmarks (issue 22), for a comparison beside
// delay-queue and Redisson's RDelayedQueue. Runs one scenario against a private Redis
// (flushed first) and prints one line of JSON with the keys the Java harness prints:
//
//   node bench.mjs --scenario=<name> --redis-url=redis://127.0.0.1:<port> [--messages=N ...]
//
// BullMQ is used as a Node application would: its defaults (ioredis, the default
// prefix "bull", one Queue per topic, a Worker per topic with concurrency 4 where the
// scenario consumes), except that every job is removed when it completes. A topic of the
// Java harness is a BullMQ queue of the same name; the payload (Payloads.java: sequence,
// due time, dots to 100 characters) is the job's data.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Worker as ThreadWorker } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';

const MINUTE = 60_000;

const CRASH_VICTIM = 'crash-victim';

const UNSUPPORTED = {
  topics: 'measures delay-queue\'s listener containers and JVM threads; BullMQ has no counterpart',
  cluster: 'measured for delay-queue only',
  groups: 'groups and their fair claiming are in BullMQ Pro, the paid edition; measured for delay-queue only',
};

/** A double in the report: printed with three decimals, as JsonLine.java prints a Double. */
class Decimal {
  constructor(value) {
    this.value = value;
  }
}

const decimal = (value) => new Decimal(value);

function json(value) {
  if (value instanceof Decimal) {
    return Number.isFinite(value.value) ? value.value.toFixed(3) : 'null';
  }
  if (value instanceof Map) {
    return '{' + [...value].map(([k, v]) => JSON.stringify(String(k)) + ':' + json(v)).join(',') + '}';
  }
  if (value !== null && typeof value === 'object') {
    return json(new Map(Object.entries(value)));
  }
  if (value === undefined) {
    return 'null';
  }
  return JSON.stringify(value);
}

/** The command line, as Options.java reads it: --name=value, unknown names rejected at the end. */
class Options {
  constructor(args) {
    this.values = new Map();
    this.read = new Map();
    for (const arg of args) {
      if (!arg.startsWith('--') || !arg.includes('=')) {
        throw new Error(`Expected --name=value, got '${arg}'`);
      }
      const equals = arg.indexOf('=');
      this.values.set(arg.substring(2, equals), arg.substring(equals + 1));
    }
  }

  string(name, defaultValue) {
    const value = this.values.has(name) ? this.values.get(name) : defaultValue;
    this.read.set(name, value);
    return value;
  }

  required(name) {
    if (!this.values.has(name)) {
      throw new Error(`Missing option --${name}=...`);
    }
    return this.string(name);
  }

  integer(name, defaultValue) {
    const value = Number.parseInt(this.string(name, String(defaultValue)), 10);
    if (!Number.isSafeInteger(value)) {
      throw new Error(`--${name} takes a number`);
    }
    return value;
  }

  /** @return milliseconds; the value is written like 500ms or 20s */
  duration(name, defaultMillis) {
    const value = this.string(name, `${defaultMillis}ms`);
    const match = /^(\d+)(ms|s)$/.exec(value);
    if (!match) {
      throw new Error(`--${name} takes a duration such as 500ms or 20s, got '${value}'`);
    }
    return Number(match[1]) * (match[2] === 's' ? 1000 : 1);
  }

  rejectUnused() {
    for (const name of this.values.keys()) {
      if (!this.read.has(name)) {
        throw new Error(`Unknown option --${name} for this scenario`);
      }
    }
  }
}

/** Payloads.java: "<sequence>:<due ms>:" padded with dots to 100 characters. */
const PAYLOAD_SIZE = 100;
const PADDING = '.'.repeat(PAYLOAD_SIZE);

function payload(sequence, dueAtMillis) {
  const head = `${sequence}:${dueAtMillis}:`;
  return head + PADDING.substring(head.length);
}

function parsePayload(text) {
  const first = text.indexOf(':');
  return {
    sequence: Number.parseInt(text.substring(0, first), 10),
    dueAtMillis: Number.parseInt(text.substring(first + 1, text.indexOf(':', first + 1)), 10),
  };
}

/** Wall-clock milliseconds with a fraction, as Deliveries.java reads the clock to the microsecond. */
const nowMillis = () => performance.timeOrigin + performance.now();

/** The CPU time of this process, user plus system, in microseconds (ClientCpu.java). */
function clientCpuMicros() {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/** Deliveries.java: how often each message arrived, how late, and when the last new one arrived. */
class Deliveries {
  constructor(messages) {
    this.counts = new Int32Array(messages);
    this.latenessMicros = new Float64Array(messages);
    this.distinct = 0;
    this.lastArrivalMillis = 0;
  }

  handle(text) {
    const now = nowMillis();
    const { sequence, dueAtMillis } = parsePayload(text);
    if (this.counts[sequence]++ === 0) {
      this.latenessMicros[sequence] = Math.round((now - dueAtMillis) * 1000);
      this.lastArrivalMillis = now;
      this.distinct++;
    }
  }

  complete() {
    return this.distinct === this.counts.length;
  }

  lost() {
    return this.counts.length - this.distinct;
  }

  duplicates() {
    let duplicates = 0;
    for (const count of this.counts) {
      duplicates += Math.max(0, count - 1);
    }
    return duplicates;
  }

  early() {
    let early = 0;
    for (let i = 0; i < this.counts.length; i++) {
      if (this.counts[i] > 0 && this.latenessMicros[i] < 0) {
        early++;
      }
    }
    return early;
  }

  latenessMillis(percentile) {
    const delivered = [];
    for (let i = 0; i < this.counts.length; i++) {
      if (this.counts[i] > 0) {
        delivered.push(this.latenessMicros[i]);
      }
    }
    if (delivered.length === 0) {
      return Number.NaN;
    }
    const sorted = Float64Array.from(delivered).sort();
    const index = Math.ceil((percentile / 100) * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))] / 1000;
  }

  summary() {
    return {
      delivered: this.distinct,
      lost: this.lost(),
      duplicates: this.duplicates(),
      early: this.early(),
      p50_ms: decimal(this.latenessMillis(50)),
      p99_ms: decimal(this.latenessMillis(99)),
      p999_ms: decimal(this.latenessMillis(99.9)),
      max_ms: decimal(this.latenessMillis(100)),
    };
  }
}

/** RedisServer.java: a side connection for what the server reports; never used by BullMQ. */
class RedisServer {
  constructor(url) {
    this.redis = new Redis(url, { maxRetriesPerRequest: null });
  }

  async info(section) {
    const values = new Map();
    for (const line of (await this.redis.info(section)).split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0 && !line.startsWith('#')) {
        values.set(line.substring(0, colon), line.substring(colon + 1));
      }
    }
    return values;
  }

  async version() {
    return (await this.info('server')).get('redis_version');
  }

  async usedMemory() {
    return Number((await this.info('memory')).get('used_memory'));
  }

  async cpuMicros() {
    const cpu = await this.info('cpu');
    return Math.round((Number(cpu.get('used_cpu_user')) + Number(cpu.get('used_cpu_sys'))) * 1_000_000);
  }

  static field(stats, name) {
    const start = stats.indexOf(`${name}=`) + name.length + 1;
    return Number(stats.substring(start, stats.indexOf(',', start)));
  }

  async callsByCommand() {
    const calls = new Map();
    for (const [name, stats] of await this.info('commandstats')) {
      calls.set(name.substring('cmdstat_'.length), RedisServer.field(stats, 'calls'));
    }
    return new Map([...calls].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  async commandCalls() {
    let calls = 0;
    for (const count of (await this.callsByCommand()).values()) {
      calls += count;
    }
    return calls;
  }

  async scriptMicros() {
    let micros = 0;
    for (const [name, stats] of await this.info('commandstats')) {
      if (name === 'cmdstat_eval' || name === 'cmdstat_evalsha') {
        micros += RedisServer.field(stats, 'usec');
      }
    }
    return micros;
  }

  /**
   * Every key with the bytes MEMORY USAGE reports for it, largest first; BullMQ keeps one
   * hash per job, so the job hashes of a queue are summed under "<prefix>:<queue>:<job id>".
   */
  async memoryByKey() {
    const sizes = new Map();
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'COUNT', 1000);
      cursor = next;
      const pipeline = this.redis.pipeline();
      for (const key of keys) {
        pipeline.memory('USAGE', key);
        pipeline.type(key);
      }
      const replies = keys.length > 0 ? await pipeline.exec() : [];
      keys.forEach((key, i) => {
        const bytes = replies[2 * i][1] ?? 0;
        const type = replies[2 * i + 1][1];
        const name = `${/^(.*):\d+$/.test(key) ? key.replace(/:\d+$/, ':<job id>') : key} (${type})`;
        sizes.set(name, (sizes.get(name) ?? 0) + bytes);
      });
    } while (cursor !== '0');
    return new Map([...sizes].sort(([, a], [, b]) => b - a));
  }

  async watchSlowCommands() {
    await this.redis.config('SET', 'slowlog-log-slower-than', '1000');
    await this.redis.config('SET', 'slowlog-max-len', '1024');
    await this.redis.slowlog('RESET');
  }

  async slowestCommand() {
    let slowest = 0;
    let name = '';
    for (const entry of await this.redis.slowlog('GET', 1024)) {
      const micros = Number(entry[2]);
      if (micros > slowest) {
        slowest = micros;
        const args = entry[3];
        // For a script, its first key tells which one it was.
        name = String(args[0]) + (args.length > 3 ? ` ${args[3]}` : '');
      }
    }
    return { ms: decimal(slowest / 1000), command: name, over_1ms: await this.redis.slowlog('LEN') };
  }

  async close() {
    await this.redis.quit();
  }
}

/** PingProbe.java, in a thread of its own (ping-probe.mjs). */
class PingProbe {
  static async start(redisUrl) {
    const probe = new PingProbe();
    probe.thread = new ThreadWorker(new URL('./ping-probe.mjs', import.meta.url), { workerData: { redisUrl } });
    probe.messages = [];
    probe.waiting = null;
    probe.thread.on('message', (message) => {
      if (probe.waiting) {
        const resolve = probe.waiting;
        probe.waiting = null;
        resolve(message);
      }
      else {
        probe.messages.push(message);
      }
    });
    await probe.next();
    return probe;
  }

  next() {
    if (this.messages.length > 0) {
      return Promise.resolve(this.messages.shift());
    }
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  /** @return slowestMs, pings and stalls (pings over 5 ms) */
  async stop() {
    this.thread.postMessage('stop');
    const result = await this.next();
    await this.thread.terminate();
    return result;
  }
}

/** The queues under test: one BullMQ Queue per topic, and Workers where a scenario consumes. */
class Bull {
  constructor(redisUrl) {
    this.connection = { url: redisUrl };
    this.queues = new Map();
    this.workers = [];
    this.handler = () => {};
  }

  queue(topic) {
    if (!this.queues.has(topic)) {
      const queue = new Queue(topic, {
        connection: this.connection,
        defaultJobOptions: { removeOnComplete: true },
      });
      queue.on('error', (error) => console.error(`Queue ${topic}: ${error}`));
      this.queues.set(topic, queue);
    }
    return this.queues.get(topic);
  }

  /**
   * Starts a Worker on the topic whose no-op processor hands each payload to the current
   * handler; `settings` are Worker options beyond BullMQ's defaults (the crash scenario's).
   */
  async consume(topic, concurrency, settings = {}) {
    const worker = new Worker(topic, async (job) => {
      this.handler(job.data);
    }, { ...settings, connection: this.connection, concurrency });
    worker.on('error', (error) => console.error(`Worker ${topic}: ${error}`));
    worker.on('failed', (job, error) => console.error(`Worker ${topic}: job ${job?.id} failed: ${error}`));
    this.workers.push(worker);
    await worker.waitUntilReady();
    return worker;
  }

  async send(topic, text, dueAtMillis) {
    await this.queue(topic).add(topic, text, { delay: Math.max(0, dueAtMillis - Date.now()) });
  }

  async sendAll(topic, texts, dueAt) {
    const now = Date.now();
    await this.queue(topic).addBulk(texts.map((text, i) => ({
      name: topic,
      data: text,
      opts: { delay: Math.max(0, dueAt[i] - now) },
    })));
  }

  async close() {
    for (const worker of this.workers) {
      await worker.close();
    }
    for (const queue of this.queues.values()) {
      await queue.close();
    }
  }
}

const randomBetween = (min, max) => min + Math.floor(Math.random() * (max - min + 1));

/**
 * EnqueuePhase.java: messages due between min and max ms from now, sent by `producers`
 * concurrent async loops on the one Queue (each awaiting its add), one by one or in
 * addBulk calls of `batchSize`.
 */
async function enqueuePhase(server, bull, topic, messages, producers, batchSize, minDelay, maxDelay) {
  const cpuBefore = await server.cpuMicros();
  const callsBefore = await server.commandCalls();
  const clientCpuBefore = clientCpuMicros();
  const start = performance.now();
  const loops = [];
  const callMillis = [];
  for (let t = 0; t < producers; t++) {
    const from = Math.floor((messages * t) / producers);
    const to = Math.floor((messages * (t + 1)) / producers);
    loops.push((async () => {
      let texts = [];
      let dueAt = [];
      for (let i = from; i < to; i++) {
        const due = Date.now() + randomBetween(minDelay, maxDelay);
        const text = payload(i, due);
        if (batchSize === 1) {
          const sent = performance.now();
          await bull.send(topic, text, due);
          callMillis.push(performance.now() - sent);
          continue;
        }
        texts.push(text);
        dueAt.push(due);
        if (texts.length === batchSize || i === to - 1) {
          const sent = performance.now();
          await bull.sendAll(topic, texts, dueAt);
          callMillis.push(performance.now() - sent);
          texts = [];
          dueAt = [];
        }
      }
    })());
  }
  await Promise.all(loops);
  const seconds = (performance.now() - start) / 1000;
  callMillis.sort((a, b) => a - b);
  const callPercentile = (p) => callMillis.length === 0 ? 0
    : Math.round(callMillis[Math.max(0, Math.ceil((p / 100) * callMillis.length) - 1)] * 1000) / 1000;
  return {
    call_p50_ms: callPercentile(50),
    call_p99_ms: callPercentile(99),
    call_max_ms: callPercentile(100),
    messages,
    seconds: decimal(seconds),
    msg_per_s: Math.round(messages / seconds),
    client_cpu_us_per_msg: decimal((clientCpuMicros() - clientCpuBefore) / messages),
    redis_cpu_us_per_msg: decimal(((await server.cpuMicros()) - cpuBefore) / messages),
    redis_commands_per_msg: decimal(((await server.commandCalls()) - callsBefore) / messages),
  };
}

/** DrainPhase.java: messages all due at one instant, drained by the topic's Worker. */
async function drainPhase(server, bull, redisUrl, topic, messages, dueIn, timeout, batch) {
  const deliveries = new Deliveries(messages);
  bull.handler = (text) => deliveries.handle(text);
  const due = Date.now() + dueIn;
  const enqueueStart = performance.now();
  await enqueuePhase(server, bull, topic, messages, 4, batch, due - Date.now(), due - Date.now());
  const enqueueSeconds = (performance.now() - enqueueStart) / 1000;
  const overran = Date.now() >= due;
  await sleep(Math.max(0, due - Date.now() - 200));
  await server.watchSlowCommands();
  const cpuBefore = await server.cpuMicros();
  const clientCpuBefore = clientCpuMicros();
  const probe = await PingProbe.start(redisUrl);
  const deadline = due + timeout;
  while (!deliveries.complete() && Date.now() < deadline) {
    await sleep(5);
  }
  await sleep(200);
  const drainSeconds = (deliveries.lastArrivalMillis - due) / 1000;
  const arrivals = new Map();
  for (const [label, percentile] of [['p0.1', 0.1], ['p10.0', 10], ['p50.0', 50], ['p90.0', 90], ['p99.0', 99],
    ['p100.0', 100]]) {
    arrivals.set(label, decimal(deliveries.latenessMillis(percentile)));
  }
  const redisCpu = (await server.cpuMicros()) - cpuBefore;
  const clientCpu = clientCpuMicros() - clientCpuBefore;
  const ping = await probe.stop();
  return {
    messages,
    enqueue_s: decimal(enqueueSeconds),
    enqueue_overran_due_time: overran,
    delivered: deliveries.distinct,
    duplicates: deliveries.duplicates(),
    drain_s: decimal(drainSeconds),
    msg_per_s: Math.round(deliveries.distinct / drainSeconds),
    // When the messages arrived after their due time: the start and the tail of the drain.
    arrival_ms: arrivals,
    redis_cpu_us_per_msg: decimal(redisCpu / messages),
    client_cpu_us_per_msg: decimal(clientCpu / messages),
    slowest_ping_ms: decimal(ping.slowestMs),
    pings_over_5ms: ping.stalls,
    pings: ping.pings,
    slowest_redis_command: await server.slowestCommand(),
  };
}

/** LatenessPhase.java: a steady stream of short-delay messages from one producer. */
async function latenessPhase(server, bull, topic, rate, duration, minDelay, maxDelay) {
  const messages = Math.floor((rate * duration) / 1000);
  const deliveries = new Deliveries(messages);
  bull.handler = (text) => deliveries.handle(text);
  const cpuBefore = await server.cpuMicros();
  const callsBefore = await server.callsByCommand();
  const scriptBefore = await server.scriptMicros();
  const clientCpuBefore = clientCpuMicros();
  const start = performance.now();
  let lastDue = 0;
  for (let i = 0; i < messages; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    // Timers have a resolution of 1 ms: sleep when a whole one is ahead, else send now
    // (the average rate is kept: the schedule is absolute).
    if (wait >= 1) {
      await sleep(wait);
    }
    const due = Date.now() + randomBetween(minDelay, maxDelay);
    await bull.send(topic, payload(i, due), due);
    lastDue = Math.max(lastDue, due);
  }
  const deadline = lastDue + 30_000;
  while (!deliveries.complete() && Date.now() < deadline) {
    await sleep(10);
  }
  const cpu = (await server.cpuMicros()) - cpuBefore;
  const script = (await server.scriptMicros()) - scriptBefore;
  const clientCpu = clientCpuMicros() - clientCpuBefore;
  const callsAfter = await server.callsByCommand();
  const delivered = Math.max(1, deliveries.distinct);
  let total = 0;
  const byName = new Map();
  for (const [command, calls] of callsAfter) {
    const delta = calls - (callsBefore.get(command) ?? 0);
    total += delta;
    if (delta > 0) {
      byName.set(command, decimal(delta / delivered));
    }
  }
  return {
    messages,
    rate_per_s: rate,
    ...deliveries.summary(),
    redis_cpu_us_per_msg: decimal(cpu / delivered),
    redis_script_us_per_msg: decimal(script / delivered),
    client_cpu_us_per_msg: decimal(clientCpu / delivered),
    redis_commands_per_msg: decimal(total / delivered),
    commands_per_msg_by_name: byName,
  };
}

async function enqueue(options, server, bull, batchOption) {
  const batchSize = batchOption ? options.integer('batch', 100) : 1;
  const messages = options.integer('messages', 200_000);
  const threads = options.integer('threads', 4);
  await enqueuePhase(server, bull, 'warm-up', options.integer('warm-up-messages', 100_000), threads, batchSize,
    5 * MINUTE, 65 * MINUTE);
  const result = await enqueuePhase(server, bull, 'enqueue', messages, threads, batchSize, 5 * MINUTE, 65 * MINUTE);
  return { ...result, threads, batch: batchSize };
}

async function drain(options, server, bull, redisUrl) {
  await bull.consume('drain', options.integer('consumers', 4));
  const dueIn = options.duration('due-in', 15_000);
  // BullMQ has a batch add, so the messages go in as delay-queue's do (batches of 1,000);
  // Redisson, without one, sends one by one.
  await drainPhase(server, bull, redisUrl, 'drain', options.integer('warm-up-messages', 20_000), dueIn, 5 * MINUTE,
    1000);
  return drainPhase(server, bull, redisUrl, 'drain', options.integer('messages', 100_000), dueIn, 5 * MINUTE, 1000);
}

async function lateness(options, server, bull) {
  await bull.consume('lateness', options.integer('consumers', 4));
  const rate = options.integer('rate', 2000);
  const duration = options.duration('duration', 20_000);
  const warmUp = options.duration('warm-up', 15_000);
  await latenessPhase(server, bull, 'lateness', rate, warmUp, 100, 2000);
  return latenessPhase(server, bull, 'lateness', rate, duration, 100, 2000);
}

async function memory(options, server, bull) {
  const messages = options.integer('messages', 100_000);
  bull.queue('memory');
  await bull.queue('memory').waitUntilReady();
  const before = await server.usedMemory();
  // Batches of 100, as for delay-queue: the memory does not depend on how jobs were added.
  await enqueuePhase(server, bull, 'memory', messages, 4, 100, 5 * MINUTE, 65 * MINUTE);
  const after = await server.usedMemory();
  const perKey = new Map();
  for (const [key, bytes] of await server.memoryByKey()) {
    perKey.set(key, decimal(bytes / messages));
  }
  return {
    messages,
    payload_bytes: PAYLOAD_SIZE,
    used_memory_delta: after - before,
    bytes_per_msg: decimal((after - before) / messages),
    bytes_per_msg_by_key: perKey,
  };
}

/** IdlePhase.java: 10 topics with a Worker each (concurrency 1), nothing due. */
async function idle(options, server, bull) {
  const topics = [];
  for (let i = 0; i < 10; i++) {
    topics.push(`idle-${i}`);
  }
  const duration = options.duration('duration', 60_000);
  for (const topic of topics) {
    await bull.consume(topic, 1);
  }
  await sleep(5000);
  const before = await server.callsByCommand();
  await sleep(duration);
  const after = await server.callsByCommand();
  const seconds = duration / 1000;
  const byCommand = new Map();
  let total = 0;
  for (const [command, calls] of after) {
    const delta = calls - (before.get(command) ?? 0);
    if (delta > 0 && command !== 'info') {
      byCommand.set(command, decimal(delta / seconds / topics.length));
      total += delta;
    }
  }
  return {
    topics: topics.length,
    seconds: Math.floor(seconds),
    commands_per_s_per_topic: decimal(total / seconds / topics.length),
    by_command: byCommand,
  };
}

/**
 * Enqueue, drain and lateness again, with many messages already pending one to two days
 * ahead (Scenarios.backlog in Java). --messages and --drain-messages exist only here, to
 * make a smoke run small; their defaults are the Java harness's fixed 200k and 100k.
 */
async function backlog(options, server, bull, redisUrl) {
  const pending = options.integer('backlog', 5_000_000);
  const messages = options.integer('messages', 200_000);
  const drainMessages = options.integer('drain-messages', 100_000);
  await bull.consume('backlog', 4);
  const DAY = 24 * 60 * MINUTE;
  const result = { backlog: pending };
  result.fill = await enqueuePhase(server, bull, 'backlog', pending, 4, 1000, DAY, 2 * DAY);
  result.enqueue = await enqueuePhase(server, bull, 'backlog', messages, 4, 1, 5 * MINUTE, 65 * MINUTE);
  result.enqueue_batch = await enqueuePhase(server, bull, 'backlog', messages, 4, 100, 5 * MINUTE, 65 * MINUTE);
  result.drain = await drainPhase(server, bull, redisUrl, 'backlog', drainMessages, 15_000, 5 * MINUTE, 1000);
  const rate = options.integer('rate', 2000);
  const duration = options.duration('duration', 20_000);
  const warmUp = options.duration('warm-up', 15_000);
  await latenessPhase(server, bull, 'backlog', rate, warmUp, 100, 2000);
  result.lateness = await latenessPhase(server, bull, 'backlog', rate, duration, 100, 2000);
  result.used_memory = await server.usedMemory();
  return result;
}

/**
 * CrashScenario.java: a worker process dies inside its processor (SIGKILL, as the JVM
 * halts there); another worker then waits for the job to be delivered again. BullMQ
 * gets it back through its stalled-job check: the dead worker's lock expires after
 * lockDuration, and a check, every stalledInterval, moves the job back to wait.
 */
async function crash(options, server, bull, redisUrl) {
  const settings = crashSettings(options);
  await bull.send('crash', payload(0, Date.now()), Date.now());
  const victim = spawn(process.execPath, [fileURLToPath(import.meta.url), `--scenario=${CRASH_VICTIM}`,
    `--redis-url=${redisUrl}`, `--lock-duration=${settings.lockDuration}ms`,
    `--stalled-interval=${settings.stalledInterval}ms`], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exit = await Promise.race([
    new Promise((resolve) => victim.on('exit', (code, signal) => resolve({ code, signal }))),
    sleep(2 * MINUTE).then(() => null),
  ]);
  if (!exit) {
    victim.kill('SIGKILL');
  }
  const died = Date.now();
  const wait = options.duration('wait', 2 * MINUTE);
  let redelivered;
  const again = new Promise((resolve) => {
    redelivered = resolve;
  });
  bull.handler = () => redelivered(Date.now());
  await bull.consume('crash', 1, settings);
  const at = await Promise.race([again, sleep(wait).then(() => null)]);
  return {
    victim_exit_code: exit ? (exit.code ?? 128 + { SIGKILL: 9 }[exit.signal]) : 'did not exit',
    delivered_again: at !== null,
    seconds_until_delivered_again: at !== null ? decimal((at - died) / 1000) : null,
    waited_s: Math.floor(wait / 1000),
  };
}

/** BullMQ's defaults unless --lock-duration or --stalled-interval say otherwise. */
function crashSettings(options) {
  return {
    lockDuration: options.duration('lock-duration', 30_000),
    stalledInterval: options.duration('stalled-interval', 30_000),
  };
}

/** Runs in the victim process: consume the topic and die inside the processor. */
async function crashVictim(options, bull) {
  bull.handler = () => process.kill(process.pid, 'SIGKILL');
  await bull.consume('crash', 1, crashSettings(options));
  await sleep(MINUTE);
  process.exitCode = 2;
}

const SCENARIOS = {
  enqueue: (options, server, bull) => enqueue(options, server, bull, false),
  'enqueue-batch': (options, server, bull) => enqueue(options, server, bull, true),
  drain,
  lateness,
  memory,
  idle,
  crash,
  backlog,
};

async function main() {
  const options = new Options(process.argv.slice(2));
  const scenario = options.required('scenario');
  const queue = options.string('queue', 'bullmq');
  if (queue !== 'bullmq') {
    throw new Error(`This harness measures BullMQ only, not '${queue}'`);
  }
  if (UNSUPPORTED[scenario]) {
    console.log(json({ scenario, queue, supported: false, why: UNSUPPORTED[scenario] }));
    return;
  }
  const run = SCENARIOS[scenario];
  if (!run && scenario !== CRASH_VICTIM) {
    throw new Error(`Unknown scenario '${scenario}': use ${[...Object.keys(SCENARIOS), ...Object.keys(UNSUPPORTED)].join(', ')}`);
  }
  const redisUrl = options.required('redis-url');
  const server = new RedisServer(redisUrl);
  const bull = new Bull(redisUrl);
  try {
    if (scenario === CRASH_VICTIM) {
      await crashVictim(options, bull);
      return;
    }
    await server.redis.flushall();
    const figures = await run(options, server, bull, redisUrl);
    options.rejectUnused();
    const line = new Map([['scenario', scenario], ['queue', queue], ['redis_version', await server.version()]]);
    for (const [key, value] of Object.entries(figures)) {
      line.set(key, value);
    }
    line.set('options', options.read);
    console.log(json(line));
  }
  finally {
    await bull.close();
    await server.close();
  }
}

try {
  await main();
}
catch (error) {
  console.error(error);
  process.exitCode = 1;
}
// Everything is closed by now; should a connection linger, do not wait for it.
setTimeout(() => process.exit(), 5000).unref();
