#!/usr/bin/env python3
"""Redis memory per pending message for several storage layouts (issue 37).

Starts its own redis-server (no persistence) on the given port, loads the same messages
(20-character ids, 100-byte payloads, due 5 to 65 minutes after a fixed instant) in each
layout, and prints, per layout and run, the used_memory delta per message, MEMORY USAGE per
key group and the encodings of the keys. Then times HGET on a listpack bucket against a
plain hash, and checks that activedefrag leaves used_memory alone.

    python3 benchmarks/memory-layouts/measure.py PORT [--messages N] [--runs R]
        [--only NAME,...] [--json FILE] [--redis-server PATH]

Needs only redis-server on the PATH (or --redis-server) and python3; speaks RESP itself.
"""

import argparse
import hashlib
import json
import os
import random
import socket
import subprocess
import sys
import time
import zlib

BASE_MS = 1764450000000  # "now" of the data set: due times are 5 to 65 minutes after it
PAYLOAD = 100  # bytes of body after the "0:<due>:" header (--body-bytes)
ID_LENGTH = 20  # characters of an id (--id-length)
MINUTE = 60_000


# --- a minimal RESP client ---------------------------------------------------------------


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if not isinstance(a, bytes):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class RedisError(Exception):
    pass


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.f = self.sock.makefile("rb")

    def close(self):
        self.f.close()
        self.sock.close()

    def _read(self):
        line = self.f.readline()
        if not line:
            raise ConnectionError("connection closed")
        t, rest = line[:1], line[1:-2]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            return RedisError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)[:-2]
            return data
        if t == b"*":
            n = int(rest)
            if n < 0:
                return None
            return [self._read() for _ in range(n)]
        raise ValueError("unexpected reply %r" % line)

    def call(self, *args):
        self.sock.sendall(encode(*args))
        r = self._read()
        if isinstance(r, RedisError):
            raise r
        return r

    def pipeline(self, commands, chunk=2000):
        """Sends the commands in chunks, reading each chunk's replies; raises on the first error."""
        buf, pending, total = [], 0, 0
        for cmd in commands:
            buf.append(encode(*cmd))
            pending += 1
            if pending == chunk:
                total += self._flush(buf, pending)
                buf, pending = [], 0
        if pending:
            total += self._flush(buf, pending)
        return total

    def _flush(self, buf, pending):
        self.sock.sendall(b"".join(buf))
        for _ in range(pending):
            r = self._read()
            if isinstance(r, RedisError):
                raise r
        return pending


def info(conn, section):
    text = conn.call("INFO", section).decode()
    out = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k] = v
    return out


# --- the data set ------------------------------------------------------------------------


def messages(n):
    """(id, due ms, body) for n messages; the same every run."""
    rng = random.Random(37)
    out = []
    for i in range(n):
        mid = (hashlib.sha1(b"msg-%d" % i).hexdigest() * 2)[:ID_LENGTH]
        due = BASE_MS + rng.randint(5 * MINUTE, 65 * MINUTE)
        head = "%d:%d:" % (i, due)
        body = head + "." * (PAYLOAD - len(head))
        out.append((mid, due, body))
    return out


def bucket(mid, n):
    return zlib.crc32(mid.encode()) % n


# --- the layouts -------------------------------------------------------------------------
# Each yields Redis commands. Key names: the part before the first ':' is the key's group.


def today(msgs):
    """1: messages HASH id -> "0:<due>:<body>" + schedule ZSET id by due."""
    for mid, due, body in msgs:
        yield ("HSET", "h", mid, "0:%d:%s" % (due, body))
        yield ("ZADD", "z", due, mid)


def no_due(msgs):
    """2: HASH id -> "0:<body>" + ZSET."""
    for mid, due, body in msgs:
        yield ("HSET", "h", mid, "0:" + body)
        yield ("ZADD", "z", due, mid)


def body_only(msgs):
    """3: HASH id -> body + ZSET."""
    for mid, due, body in msgs:
        yield ("HSET", "h", mid, body)
        yield ("ZADD", "z", due, mid)


def hash_only(msgs):
    """reference: the messages HASH alone (today's values)."""
    for mid, due, body in msgs:
        yield ("HSET", "h", mid, "0:%d:%s" % (due, body))


def zset_only(msgs):
    """reference: the schedule ZSET alone."""
    for mid, due, body in msgs:
        yield ("ZADD", "z", due, mid)


def bucketed_hash(buckets, with_zset=True):
    """4: messages spread over `buckets` HASHes by crc32(id) (today's values) + ZSET."""

    def gen(msgs):
        for mid, due, body in msgs:
            yield ("HSET", "hb:%d" % bucket(mid, buckets), mid, "0:%d:%s" % (due, body))
            if with_zset:
                yield ("ZADD", "z", due, mid)

    return gen


def minute_lists(near_minutes):
    """5: HASH (today's values); messages due within `near_minutes` of BASE_MS in the ZSET,
    the others as bare ids in one LIST per minute of due time + a ZSET of the minutes."""

    def gen(msgs):
        minutes = set()
        for mid, due, body in msgs:
            yield ("HSET", "h", mid, "0:%d:%s" % (due, body))
            if due < BASE_MS + near_minutes * MINUTE:
                yield ("ZADD", "z", due, mid)
            else:
                m = due // MINUTE
                yield ("RPUSH", "l:%d" % m, mid)
                if m not in minutes:
                    minutes.add(m)
                    yield ("ZADD", "li", m * MINUTE, m)

    return gen


def second_zsets(width_ms, hashes=None):
    """7: HASH (today's values, or `hashes` buckets) + the schedule as one small ZSET per
    `width_ms` of due time (listpack while it holds <= 128 ids) + a ZSET of the bucket starts."""

    def gen(msgs):
        seen = set()
        for mid, due, body in msgs:
            key = "h" if not hashes else "hb:%d" % bucket(mid, hashes)
            yield ("HSET", key, mid, "0:%d:%s" % (due, body))
            b = due // width_ms
            yield ("ZADD", "zb:%d" % b, due, mid)
            if b not in seen:
                seen.add(b)
                yield ("ZADD", "zi", b * width_ms, b)

    return gen


def zset_member_body(index_buckets):
    """6: no HASH: ZSET member "id:<attempts>:<body>" scored by due; with index_buckets > 0
    also an id -> due index in that many small HASHes (listpack with the default config)."""

    def gen(msgs):
        for mid, due, body in msgs:
            yield ("ZADD", "zm", due, "%s:0:%s" % (mid, body))
            if index_buckets:
                yield ("HSET", "ix:%d" % bucket(mid, index_buckets), mid, due)

    return gen


def list_bodies(width_ms, index_buckets):
    """8: bodies as "id:<attempts>:<body>" in one LIST per `width_ms` of due time (no order
    inside a bucket) + a ZSET of bucket starts + an id -> bucket index in small HASHes."""

    def gen(msgs):
        seen = set()
        for mid, due, body in msgs:
            b = due // width_ms
            yield ("RPUSH", "lb:%d" % b, "%s:0:%d:%s" % (mid, due, body))
            yield ("HSET", "ix:%d" % bucket(mid, index_buckets), mid, b)
            if b not in seen:
                seen.add(b)
                yield ("ZADD", "zi", b * width_ms, b)

    return gen


# name, description, generator, CONFIG SET pairs applied before loading (reset after)
LAYOUTS = [
    ("1-today", "HASH id->'0:<due>:<body>' (116 B) + ZSET", today, {}),
    ("ref-hash", "reference: that HASH alone", hash_only, {}),
    ("ref-zset", "reference: that ZSET alone", zset_only, {}),
    ("2-no-due", "HASH id->'0:<body>' (102 B) + ZSET", no_due, {}),
    ("3-body", "HASH id->body (100 B) + ZSET", body_only, {}),
    ("4-b1024", "1024 HASH buckets (~98 fields) + ZSET, default config", bucketed_hash(1024), {}),
    ("4-b4096", "4096 HASH buckets (~24 fields) + ZSET, default config", bucketed_hash(4096), {}),
    ("4-b1024-lp", "1024 HASH buckets + ZSET, hash-max-listpack-value 256", bucketed_hash(1024),
     {"hash-max-listpack-value": "256"}),
    ("4-b4096-lp", "4096 HASH buckets + ZSET, hash-max-listpack-value 256", bucketed_hash(4096),
     {"hash-max-listpack-value": "256"}),
    ("4-b4096-lp-only", "4096 HASH buckets alone, hash-max-listpack-value 256",
     bucketed_hash(4096, with_zset=False), {"hash-max-listpack-value": "256"}),
    ("5-far", "HASH + all ids in per-minute LISTs + ZSET of minutes (the far part)", minute_lists(0), {}),
    ("5-near10", "HASH + ZSET for due < 10 min, per-minute LISTs beyond", minute_lists(10), {}),
    ("6-zm", "ZSET member 'id:0:<body>', no HASH (no lookup by id)", zset_member_body(0), {}),
    ("6-zm-ix", "ZSET member 'id:0:<body>' + id->due index in 2048 HASHes", zset_member_body(2048), {}),
    ("7-zs1s", "HASH + one ZSET per second of due time (~28 ids) + ZSET of seconds",
     second_zsets(1000), {}),
    ("7-zs250ms", "HASH + one ZSET per 250 ms (~7 ids) + ZSET of buckets", second_zsets(250), {}),
    ("7-zs4s", "HASH + one ZSET per 4 s (~111 ids) + ZSET of buckets", second_zsets(4000), {}),
    ("7-zs10s", "HASH + one ZSET per 10 s (~278 ids: over 128) + ZSET of buckets", second_zsets(10000), {}),
    ("7-zs1s-lp", "4096 HASH buckets + per-second ZSETs, hash-max-listpack-value 256",
     second_zsets(1000, hashes=4096), {"hash-max-listpack-value": "256"}),
    ("8-lists", "per-minute LISTs of 'id:0:<due>:<body>' + id->minute index in 2048 HASHes",
     list_bodies(MINUTE, 2048), {}),
]


# --- measuring ---------------------------------------------------------------------------


def used_memory(conn):
    return int(info(conn, "memory")["used_memory"])


def key_groups(conn):
    keys, cursor = [], b"0"
    while True:
        cursor, batch = conn.call("SCAN", cursor, "COUNT", 10000)
        keys.extend(batch)
        if cursor == b"0":
            break
    groups = {}
    for k in keys:
        usage = conn.call("MEMORY", "USAGE", k, "SAMPLES", 0)
        enc = conn.call("OBJECT", "ENCODING", k).decode()
        g = groups.setdefault(k.decode().split(":")[0], {"keys": 0, "bytes": 0, "encodings": {}})
        g["keys"] += 1
        g["bytes"] += usage
        g["encodings"][enc] = g["encodings"].get(enc, 0) + 1
    return groups


def measure(port, conn, msgs, name, gen, config):
    conn.call("FLUSHALL")
    conn.call("SCRIPT", "FLUSH")
    defaults = {}
    for k, v in config.items():
        defaults[k] = conn.call("CONFIG", "GET", k)[1]
        conn.call("CONFIG", "SET", k, v)
    time.sleep(0.2)
    before = used_memory(conn)
    loader = Conn(port)
    t0 = time.time()
    loader.pipeline(gen(msgs))
    load_s = time.time() - t0
    loader.close()
    time.sleep(0.3)  # the server frees the loader's client (and its buffers)
    after = used_memory(conn)
    groups = key_groups(conn)
    for k, v in defaults.items():
        conn.call("CONFIG", "SET", k, v)
    n = len(msgs)
    return {
        "layout": name,
        "used_memory_delta": after - before,
        "bytes_per_msg": round((after - before) / n, 1),
        "groups": {g: {"keys": v["keys"], "bytes_per_msg": round(v["bytes"] / n, 1),
                       "encodings": v["encodings"]} for g, v in sorted(groups.items())},
        "load_s": round(load_s, 2),
    }


HGET_LOOP = """
local n = tonumber(ARGV[1])
local m = #ARGV - 1
local t0 = redis.call('TIME')
for i = 1, n do
  redis.call('HGET', KEYS[1], ARGV[2 + (i % m)])
end
local t1 = redis.call('TIME')
return (tonumber(t1[1]) - tonumber(t0[1])) * 1000000 + tonumber(t1[2]) - tonumber(t0[2])
"""

HSET_LOOP = """
local n = tonumber(ARGV[1])
local m = (#ARGV - 1) / 2
local t0 = redis.call('TIME')
for i = 1, n do
  local j = i % m
  redis.call('HSET', KEYS[1], ARGV[2 + 2 * j], ARGV[3 + 2 * j])
end
local t1 = redis.call('TIME')
return (tonumber(t1[1]) - tonumber(t0[1])) * 1000000 + tonumber(t1[2]) - tonumber(t0[2])
"""


ZSCORE_LOOP = HGET_LOOP.replace("'HGET'", "'ZSCORE'")

ZADD_LOOP = """
local n = tonumber(ARGV[1])
local m = (#ARGV - 1) / 2
local t0 = redis.call('TIME')
for i = 1, n do
  local j = i % m
  redis.call('ZADD', KEYS[1], ARGV[3 + 2 * j], ARGV[2 + 2 * j])
end
local t1 = redis.call('TIME')
return (tonumber(t1[1]) - tonumber(t0[1])) * 1000000 + tonumber(t1[2]) - tonumber(t0[2])
"""


def zset_latency(port, conn, msgs, iterations=200_000, repeats=3):
    """µs per ZSCORE (and per ZADD of the same score) from a Lua loop over the ids of one key:
    the schedule as one skiplist against the fullest listpack bucket of layout 7."""
    results = []
    for label, width in (("skiplist, 100k ids", None), ("listpack bucket of 1 s", 1000),
                         ("fullest listpack bucket of 4 s", 4000)):
        conn.call("FLUSHALL")
        loader = Conn(port)
        if width:
            loader.pipeline(("ZADD", "zb:%d" % (due // width), due, mid) for mid, due, _ in msgs)
            loader.close()
            members = {}
            for mid, due, _ in msgs:
                members.setdefault(due // width, []).append((mid, due))
            lp = [b for b, v in members.items() if len(v) <= 128]
            b = max(lp, key=lambda k: len(members[k]))
            key, entries = "zb:%d" % b, members[b]
        else:
            loader.pipeline(zset_only(msgs))
            loader.close()
            key, entries = "z", [(mid, due) for mid, due, _ in msgs[:128]]
        enc = conn.call("OBJECT", "ENCODING", key).decode()
        get_us = [conn.call("EVAL", ZSCORE_LOOP, 1, key, iterations, *[m for m, _ in entries]) / iterations
                  for _ in range(repeats)]
        flat = [x for pair in entries for x in pair]
        add_us = [conn.call("EVAL", ZADD_LOOP, 1, key, iterations, *flat) / iterations
                  for _ in range(repeats)]
        results.append({"case": label, "key": key, "members": len(entries), "encoding": enc,
                        "zscore_us": round(min(get_us), 3), "zadd_same_score_us": round(min(add_us), 3)})
    conn.call("FLUSHALL")
    conn.call("SCRIPT", "FLUSH")
    return results


def latency(port, conn, msgs, iterations=200_000, repeats=3):
    """µs per HGET (and per HSET of the same value) from a Lua loop over every field of one
    key: a plain hashtable HASH of all messages against listpack buckets."""
    results = []
    cases = [
        ("hashtable, 100k fields", "4-hash", None, {}),
        ("listpack bucket of 1024 (~98 fields)", "4-b1024-lp", 1024, {"hash-max-listpack-value": "256"}),
        ("listpack bucket of 4096 (~24 fields)", "4-b4096-lp", 4096, {"hash-max-listpack-value": "256"}),
        ("hashtable bucket of 1024 (default config)", "4-b1024", 1024, {}),
    ]
    for label, _, buckets, config in cases:
        conn.call("FLUSHALL")
        defaults = {}
        for k, v in config.items():
            defaults[k] = conn.call("CONFIG", "GET", k)[1]
            conn.call("CONFIG", "SET", k, v)
        loader = Conn(port)
        if buckets:
            loader.pipeline(bucketed_hash(buckets, with_zset=False)(msgs))
            # the most populated bucket: the longest listpack to scan
            sizes = {}
            for mid, _, _ in msgs:
                b = bucket(mid, buckets)
                sizes[b] = sizes.get(b, 0) + 1
            b = max(sizes, key=sizes.get)
            key = "hb:%d" % b
            fields = [(mid, "0:%d:%s" % (due, body)) for mid, due, body in msgs if bucket(mid, buckets) == b]
        else:
            loader.pipeline(hash_only(msgs))
            key = "h"
            fields = [(mid, "0:%d:%s" % (due, body)) for mid, due, body in msgs[:128]]
        loader.close()
        enc = conn.call("OBJECT", "ENCODING", key).decode()
        get_us, set_us = [], []
        for _ in range(repeats):
            t = conn.call("EVAL", HGET_LOOP, 1, key, iterations, *[f for f, _ in fields])
            get_us.append(t / iterations)
        flat = [x for pair in fields for x in pair]
        for _ in range(repeats):
            t = conn.call("EVAL", HSET_LOOP, 1, key, iterations, *flat)
            set_us.append(t / iterations)
        enc_after = conn.call("OBJECT", "ENCODING", key).decode()
        for k, v in defaults.items():
            conn.call("CONFIG", "SET", k, v)
        results.append({
            "case": label, "key": key, "fields": len(fields), "encoding": enc,
            "encoding_after_hset": enc_after,
            "hget_us": round(min(get_us), 3), "hset_same_value_us": round(min(set_us), 3),
        })
    conn.call("FLUSHALL")
    conn.call("SCRIPT", "FLUSH")
    return results


def defrag_check(port, conn, msgs):
    """Loads layout 1, deletes every other message (fragmenting), then turns activedefrag on
    and reads used_memory and RSS before and after."""
    out = {}
    try:
        conn.call("CONFIG", "SET", "activedefrag", "no")
    except RedisError as e:
        return {"error": str(e)}
    conn.call("FLUSHALL")
    loader = Conn(port)
    loader.pipeline(today(msgs))
    loader.close()
    time.sleep(0.3)
    m = info(conn, "memory")
    out["loaded"] = {k: m[k] for k in ("used_memory", "used_memory_rss", "allocator_frag_ratio")}
    loader = Conn(port)
    loader.pipeline(("HDEL", "h", mid) for mid, _, _ in msgs[::2])
    loader.close()
    time.sleep(0.3)
    m = info(conn, "memory")
    out["half deleted"] = {k: m[k] for k in ("used_memory", "used_memory_rss", "allocator_frag_ratio")}
    try:
        conn.call("CONFIG", "SET", "active-defrag-ignore-bytes", "1mb")
        conn.call("CONFIG", "SET", "active-defrag-threshold-lower", "1")
        conn.call("CONFIG", "SET", "activedefrag", "yes")
    except RedisError as e:
        out["activedefrag"] = "refused: %s" % e
        return out
    time.sleep(5)
    m = info(conn, "memory")
    s = info(conn, "stats")
    out["after 5 s of activedefrag"] = {k: m[k] for k in ("used_memory", "used_memory_rss", "allocator_frag_ratio")}
    out["active_defrag_hits"] = s.get("active_defrag_hits")
    conn.call("CONFIG", "SET", "activedefrag", "no")
    conn.call("FLUSHALL")
    return out


def start_server(binary, port):
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--daemonize", "no", "--dir", os.getcwd() if os.access(os.getcwd(), os.W_OK) else "/tmp"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            c = Conn(port)
            c.call("PING")
            return proc, c
        except (ConnectionError, OSError):
            if proc.poll() is not None:
                sys.exit("redis-server exited (port %d taken?)" % port)
            time.sleep(0.05)
    proc.kill()
    sys.exit("redis-server did not answer on port %d" % port)


def main():
    global ID_LENGTH, PAYLOAD
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("port", type=int)
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated layout names")
    ap.add_argument("--no-latency", action="store_true")
    ap.add_argument("--no-defrag", action="store_true")
    ap.add_argument("--id-length", type=int, default=ID_LENGTH, help="characters per id (at most 80)")
    ap.add_argument("--body-bytes", type=int, default=PAYLOAD, help="bytes of body after the header")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--redis-server", default="redis-server")
    args = ap.parse_args()
    ID_LENGTH, PAYLOAD = args.id_length, args.body_bytes

    version = subprocess.run([args.redis_server, "--version"], capture_output=True, text=True).stdout.strip()
    proc, conn = start_server(args.redis_server, args.port)
    result = {"redis_server_version": version, "messages": args.messages, "body_bytes": PAYLOAD,
              "id_length": ID_LENGTH}
    try:
        srv = info(conn, "server")
        mem = info(conn, "memory")
        result["redis_version"] = srv["redis_version"]
        result["mem_allocator"] = mem["mem_allocator"]
        result["config"] = {k: conn.call("CONFIG", "GET", k)[1].decode() for k in (
            "hash-max-listpack-value", "hash-max-listpack-entries", "zset-max-listpack-value",
            "zset-max-listpack-entries", "list-max-listpack-size", "activedefrag")}
        print(json.dumps({k: v for k, v in result.items()}), flush=True)
        msgs = messages(args.messages)
        only = set(filter(None, args.only.split(",")))
        result["layouts"] = []
        for name, desc, gen, config in LAYOUTS:
            if only and name not in only:
                continue
            for run in range(1, args.runs + 1):
                r = measure(args.port, conn, msgs, name, gen, config)
                r["run"] = run
                r["description"] = desc
                result["layouts"].append(r)
                print(json.dumps(r), flush=True)
        if not args.no_latency:
            result["latency"] = latency(args.port, conn, msgs) + zset_latency(args.port, conn, msgs)
            for r in result["latency"]:
                print(json.dumps(r), flush=True)
        if not args.no_defrag:
            result["defrag"] = defrag_check(args.port, conn, msgs)
            print(json.dumps({"defrag": result["defrag"]}), flush=True)
    finally:
        try:
            conn.call("SHUTDOWN", "NOSAVE")
        except (ConnectionError, OSError, RedisError):
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
