#!/usr/bin/env python3
"""Prototype and measurements for groups (issue 38). Not library code.

Starts its own redis-server on a free port above 20000 (killed by pid at the end), loads the real
claim.lua (assembled with its includes, as the store does) and the prototype scripts of this
folder, and measures: (a) drain cost, (b) lateness of small groups behind a burst, (c)
group-concurrency 1, (d) memory, (e) commands' first Redis versions, (f) edge cases.
Usage: python3 bench.py [a b c d e f] [--runs 3]   (no pip packages; speaks RESP over a socket)
"""
import os, random, re, socket, subprocess, sys, time, json, struct

HERE = os.path.dirname(os.path.abspath(__file__))
R = os.path.join(HERE, '../../core/src/main/resources/io/github/delayqueue/store/redis/')
P = 'dq:{t}:'
BODY = 'x' * 100
LEASE = 600000


def read(p):
    return open(p).read()


def assemble(script_path, incdir=R + 'include/'):
    """The script as the store loads it: clock, signal, common, the helpers it names, the script."""
    body = read(script_path)
    added = set()
    text = [read(R + 'server_clock.lua'), read(R + 'publish_signal.lua'), read(R + 'common.lua')]

    def add(h):
        if h in added:
            return
        src = read(incdir + h + '.lua')
        for i in re.findall(r'(?m)^-- @include (\S+)$', src):
            add(i)
        added.add(h)
        text.append(src)

    for i in re.findall(r'(?m)^-- @include (\S+)$', body):
        add(i)
    text.append(body)
    return '\n'.join(text)


def enc(*a):
    out = [b'*%d\r\n' % len(a)]
    for x in a:
        x = x if isinstance(x, bytes) else str(x).encode()
        out.append(b'$%d\r\n%s\r\n' % (len(x), x))
    return b''.join(out)


class C:
    def __init__(s, port):
        s.s = socket.create_connection(('127.0.0.1', port))
        s.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.f = s.s.makefile('rb')

    def cmd(s, *a):
        s.s.sendall(enc(*a))
        return s.rd()

    def pipe(s, cmds):
        s.s.sendall(b''.join(enc(*c) for c in cmds))
        return [s.rd() for _ in cmds]

    def rd(s):
        l = s.f.readline()
        t, v = l[:1], l[1:-2]
        if t == b'+':
            return v.decode()
        if t == b'-':
            raise Exception(v.decode())
        if t == b':':
            return int(v)
        if t == b'$':
            n = int(v)
            if n < 0:
                return None
            return s.f.read(n + 2)[:-2]
        if t == b'*':
            n = int(v)
            return [s.rd() for _ in range(n)] if n >= 0 else None
        raise Exception('bad reply %r' % l)


def info(c, sec):
    d = {}
    for l in c.cmd('INFO', sec).decode().splitlines():
        if ':' in l:
            k, v = l.split(':', 1)
            d[k] = v
    return d


def cpu(c):
    i = info(c, 'cpu')
    return float(i['used_cpu_sys']) + float(i['used_cpu_user'])


def evalsha_usec(c):
    st = info(c, 'commandstats').get('cmdstat_evalsha', '')
    m = re.search(r'calls=(\d+),usec=(\d+)', st)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def free_port():
    for p in range(random.randint(21000, 29000), 30000):
        s = socket.socket()
        try:
            s.bind(('127.0.0.1', p))
            s.close()
            return p
        except OSError:
            s.close()
    raise Exception('no port')


# ---------------------------------------------------------------- scripts and keys
class Q:
    def __init__(s, c):
        s.c = c
        s.sha = {}
        s.sha['claim_real'] = c.cmd('SCRIPT', 'LOAD', assemble(R + 'claim.lua')).decode()
        for n in ('claim_grouped', 'claim_grouped_batched', 'promote_grouped', 'ack_grouped'):
            s.sha[n] = c.cmd('SCRIPT', 'LOAD', read(os.path.join(HERE, n + '.lua'))).decode()
        s.ack_src = read(os.path.join(HERE, 'ack_grouped.lua'))
        s.tok = 0

    def claim_real(s, n):
        s.tok += 1
        keys = [P + k for k in ('r', 'i', 'm', 's', 'l', 'c', 'w', 'p')] + [P + 'r:%d' % k for k in range(1, 10)]
        return s.c.cmd('EVALSHA', s.sha['claim_real'], len(keys), *keys, n, LEASE, 0, 'tok%d' % s.tok)

    def claim_grouped(s, n, variant='claim_grouped', conc=0, quantum=1):
        s.tok += 1
        keys = [P + k for k in ('i', 'm', 'l', 'c', 'ga', 'gf', 'gv', 'gw', 'r')]
        return s.c.cmd('EVALSHA', s.sha[variant], len(keys), *keys, n, LEASE, 'tok%d' % s.tok, P, conc, quantum)

    def promote(s, limit=5000, conc=0):
        keys = [P + k for k in ('s', 'r', 'g', 'ga', 'gf', 'gp', 'gv', 'p')]
        return s.c.cmd('EVALSHA', s.sha['promote_grouped'], len(keys), *keys, limit, P, conc)

    def ack(s, pairs, conc=0):
        keys = [P + k for k in ('i', 'm', 'l', 'g', 'ga', 'gf', 'gp', 'gv')]
        args = []
        for id_, tok in pairs:
            args += [id_, tok]
        # EVAL (not EVALSHA): so that commandstats keeps the acks apart from the claims.
        return s.c.cmd('EVAL', s.ack_src, len(keys), *keys, P, conc, *args)


def now_ms(c):
    t = c.cmd('TIME')
    return int(t[0]) * 1000 + int(t[1]) // 1000


def chunks(xs, n):
    for i in range(0, len(xs), n):
        yield xs[i:i + n]


def store(c, ids, dues, groups=None):
    """Stored messages (m) and, for grouped ones, g entries; nothing ready yet."""
    cmds = []
    for part in chunks(list(range(len(ids))), 1000):
        a = []
        for k in part:
            a += [ids[k], '0:%d:%s' % (dues[k], BODY)]
        cmds.append(['HSET', P + 'm'] + a)
        if groups:
            a = []
            for k in part:
                a += [ids[k], groups[k]]
            cmds.append(['HSET', P + 'g'] + a)
    for part in chunks(cmds, 50):
        c.pipe(part)


def make_list(c, n):
    c.cmd('FLUSHALL')
    base = now_ms(c) - 10 * n
    ids = ['m%019d' % k for k in range(n)]
    store(c, ids, [base + k for k in range(n)])
    for part in chunks(ids, 5000):
        c.cmd('RPUSH', P + 'r', *part)
    return ids


def make_groups(c, q, n, groups, promote=True):
    """n messages spread round-robin over `groups` groups, scheduled then promoted by the prototype."""
    c.cmd('FLUSHALL')
    base = now_ms(c) - 10 * n
    ids = ['m%019d' % k for k in range(n)]
    gs = ['grp-%05d' % (k % groups) for k in range(n)]
    dues = [base + k for k in range(n)]
    store(c, ids, dues, gs)
    for part in chunks(list(range(n)), 5000):
        a = []
        for k in part:
            a += [dues[k], ids[k]]
        c.cmd('ZADD', P + 's', *a)
    if promote:
        calls0, usec0 = evalsha_usec(c)
        while q.promote() != 0:
            pass
        calls1, usec1 = evalsha_usec(c)
        return ids, (usec1 - usec0) / n
    return ids, None


def drain(c, claim, n_expected):
    c.cmd('CONFIG', 'RESETSTAT')
    cpu0 = cpu(c)
    claimed = calls = 0
    t0 = time.perf_counter()
    while True:
        r = claim()
        calls += 1
        got = (len(r) - 3) // 2
        if got == 0:
            break
        claimed += got
    wall = time.perf_counter() - t0
    cpu1 = cpu(c)
    ncalls, usec = evalsha_usec(c)
    assert claimed == n_expected, (claimed, n_expected)
    assert c.cmd('ZCARD', P + 'i') == n_expected
    return {'cpu_us_per_msg': (cpu1 - cpu0) * 1e6 / claimed, 'evalsha_us_per_msg': usec / claimed,
            'evalsha_us_per_call': usec / ncalls, 'calls': calls, 'wall_s': wall}


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


# ---------------------------------------------------------------- (a) drain
def part_a(c, q, runs, n=100000):
    res = {}
    layouts = [('list (real claim.lua)', None), ('1 group', 1), ('100 groups', 100), ('10,000 groups', 10000)]
    for N in (100, 20):
        for r in range(runs):
            for name, G in layouts:
                variants = ['claim_real'] if G is None else ['claim_grouped', 'claim_grouped_batched']
                for v in variants:
                    if G is None:
                        make_list(c, n)
                        prom = None
                    else:
                        _, prom = make_groups(c, q, n, G)
                    if v == 'claim_real':
                        m = drain(c, lambda: q.claim_real(N), n)
                    else:
                        m = drain(c, lambda: q.claim_grouped(N, v), n)
                        assert c.cmd('ZCARD', P + 'ga') == 0
                        assert c.cmd('HLEN', P + 'gf') == G
                    m['promote_us_per_msg'] = prom
                    key = 'N=%d %s %s' % (N, name, v)
                    res.setdefault(key, []).append(m)
                    print(key, 'run', r, {k: round(x, 3) if isinstance(x, float) else x for k, x in m.items()}, flush=True)
    summary = {}
    for key, ms in res.items():
        summary[key] = {f: sorted(round(m[f], 3) for m in ms) for f in ('cpu_us_per_msg', 'evalsha_us_per_msg', 'evalsha_us_per_call')}
        if ms[0]['promote_us_per_msg'] is not None:
            summary[key]['promote_us_per_msg'] = sorted(round(m['promote_us_per_msg'], 3) for m in ms)
    return summary


# ---------------------------------------------------------------- (b) fairness
def part_b(c, q, mode, paced, n=100000, small_groups=100, per_group=10, N=100, seed=1, quantum=1):
    """A burst of n ready in one group; small_groups groups each get per_group messages at random
    claim indexes while it drains. Lateness of each small message: messages claimed between its
    becoming ready and its claim (including those of its own claim ahead of it), and time."""
    rnd = random.Random(seed)
    total_claims = n // N
    arrivals = {}
    small = []
    for g in range(small_groups):
        for j in range(per_group):
            sid = 's%03d-%02d' % (g, j)
            small.append((sid, 'small-%03d' % g))
            arrivals.setdefault(rnd.randrange(total_claims), []).append(len(small) - 1)
    if mode == 'fifo':
        make_list(c, n)
    else:
        c.cmd('FLUSHALL')
        base = now_ms(c) - 10 * n
        ids = ['m%019d' % k for k in range(n)]
        store(c, ids, [base + k for k in range(n)], ['big'] * n)
        for part in chunks(list(range(n)), 5000):
            a = []
            for k in part:
                a += [base + k, ids[k]]
            c.cmd('ZADD', P + 's', *a)
        while q.promote() != 0:
            pass
    # Small messages: stored (and grouped) up front, made ready at their arrival.
    store(c, [s[0] for s in small], [0] * len(small), None if mode == 'fifo' else [s[1] for s in small])
    ready_at = {}
    claimed = 0
    lat_msgs, lat_ms = {}, {}
    period = N / 50000.0 if paced else 0
    t0 = time.perf_counter()
    k = 0
    c.cmd('CONFIG', 'RESETSTAT')
    while True:
        if paced:
            target = t0 + k * period
            while time.perf_counter() < target:
                pass
        for idx in arrivals.get(k, ()):
            sid, g = small[idx]
            t = now_ms(c)
            if mode == 'fifo':
                c.cmd('RPUSH', P + 'r', sid)
            else:
                c.cmd('ZADD', P + 's', t - 1, sid)
                c.cmd('HSET', P + 'm', sid, '0:%d:%s' % (t - 1, BODY))
                q.promote()
            ready_at[sid] = (claimed, time.perf_counter())
        r = q.claim_real(N) if mode == 'fifo' else q.claim_grouped(N, mode, quantum=quantum)
        now = time.perf_counter()
        got = (len(r) - 3) // 2
        for pos in range(got):
            sid = r[3 + 2 * pos].decode()
            if sid in ready_at:
                c0, t = ready_at[sid]
                lat_msgs[sid] = claimed + pos + 1 - c0
                lat_ms[sid] = (now - t) * 1000
        claimed += got
        k += 1
        if got == 0 and k > total_claims:
            break
    assert len(lat_msgs) == len(small), (len(lat_msgs), len(small))
    return {'max_msgs': max(lat_msgs.values()), 'p99_msgs': pct(lat_msgs.values(), 99),
            'p50_msgs': pct(lat_msgs.values(), 50), 'max_ms': round(max(lat_ms.values()), 2),
            'p99_ms': round(pct(lat_ms.values(), 99), 2), 'p50_ms': round(pct(lat_ms.values(), 50), 2),
            'drain_s': round(time.perf_counter() - t0, 2)}


# ---------------------------------------------------------------- (g) quantum
def part_g(c, q, runs, n=100000):
    """The recommended change: a turn takes at least `quantum` messages of its group."""
    res = {}
    for r in range(runs):
        for G in (100, 10000):
            for quantum in (1, 4, 16, 64):
                make_groups(c, q, n, G)
                m = drain(c, lambda: q.claim_grouped(100, 'claim_grouped', quantum=quantum), n)
                key = 'N=100 %d groups quantum %d' % (G, quantum)
                res.setdefault(key, []).append(round(m['evalsha_us_per_msg'], 3))
                print(key, r, m, flush=True)
        make_list(c, n)
        m = drain(c, lambda: q.claim_real(100), n)
        res.setdefault('N=100 list (real claim.lua)', []).append(round(m['evalsha_us_per_msg'], 3))
    out = {k: sorted(v) for k, v in res.items()}
    for quantum in (1, 16, 64):
        key = 'lateness, quantum %d, as fast as possible' % quantum
        out[key] = part_b(c, q, 'claim_grouped', False, quantum=quantum)
        print(key, out[key], flush=True)
    return out


# ---------------------------------------------------------------- (c) concurrency 1
def part_c(c, q, variant, groups=1000, per_group=10, N=100, seed=2):
    rnd = random.Random(seed)
    c.cmd('FLUSHALL')
    base = now_ms(c) - 10 * groups * per_group
    ids, dues, gs = [], [], []
    for g in range(groups):
        # Each group's due times in random order of insertion, distinct.
        ds = rnd.sample(range(groups * per_group), per_group)
        for j, d in enumerate(ds):
            ids.append('g%04d-%02d' % (g, j))
            dues.append(base + d)
            gs.append('grp-%04d' % g)
    store(c, ids, dues, gs)
    order = list(range(len(ids)))
    rnd.shuffle(order)
    for part in chunks(order, 5000):
        a = []
        for k in part:
            a += [dues[k], ids[k]]
        c.cmd('ZADD', P + 's', *a)
    while q.promote(5000, 1) != 0:
        pass
    due_of = dict(zip(ids, dues))
    group_of = dict(zip(ids, gs))
    inflight = {}  # group -> id
    last_due = {}
    overlaps = misorders = 0
    max_per_group_inflight = 0
    claimed = acked = 0
    c.cmd('CONFIG', 'RESETSTAT')
    cpu0 = cpu(c)
    claim_calls = 0
    while acked < len(ids):
        r = q.claim_grouped(N, variant, conc=1)
        claim_calls += 1
        tok = 'tok%d' % q.tok
        got = (len(r) - 3) // 2
        for pos in range(got):
            sid = r[3 + 2 * pos].decode()
            g = group_of[sid]
            if g in inflight:
                overlaps += 1
            inflight.setdefault(g, []).append((sid, tok))
            max_per_group_inflight = max(max_per_group_inflight, len(inflight[g]))
            if last_due.get(g, -1) > due_of[sid]:
                misorders += 1
            last_due[g] = due_of[sid]
        claimed += got
        # Ack a random half of what is in flight (all of it when nothing new came).
        held = [x for g in inflight for x in inflight[g]]
        take = held if got == 0 else rnd.sample(held, (len(held) + 1) // 2)
        if take:
            q.ack(take, conc=1)
            for sid, _ in take:
                inflight.pop(group_of[sid], None)
            acked += len(take)
    total_cpu = cpu(c) - cpu0
    st = info(c, 'commandstats')
    claim_usec = int(re.search(r'usec=(\d+)', st['cmdstat_evalsha']).group(1))
    ack_usec = int(re.search(r'usec=(\d+)', st['cmdstat_eval']).group(1))
    gf_left = c.cmd('HLEN', P + 'gf')
    return {'claimed': claimed, 'overlaps': overlaps, 'max_in_flight_per_group': max_per_group_inflight,
            'order_violations': misorders, 'claim_calls': claim_calls,
            'claim_evalsha_us_per_msg': round(claim_usec / claimed, 3),
            'ack_eval_us_per_msg': round(ack_usec / claimed, 3),
            'msgs_per_redis_cpu_s (claim+ack)': round(claimed / total_cpu),
            'msgs_per_claim_script_s': round(claimed / (claim_usec / 1e6)),
            'gf_fields_left': gf_left, 'ga_left': c.cmd('ZCARD', P + 'ga')}


# ---------------------------------------------------------------- (d) memory
def used_memory(c):
    return int(info(c, 'memory')['used_memory'])


def part_d(c, q):
    out = {}
    # 10,000 groups, 1 ready message each, against the same 10,000 ids in the list.
    for n, G in ((10000, 10000), (100000, 1)):
        c.cmd('FLUSHALL')
        m0 = used_memory(c)
        make_list(c, n)
        m_list_total = used_memory(c) - m0
        c.cmd('DEL', P + 'r')
        m_msgs = used_memory(c) - m0
        list_bytes = m_list_total - m_msgs
        make_groups(c, q, n, G, promote=True)
        m_grp_total = used_memory(c) - m0
        g_hash = c.cmd('MEMORY', 'USAGE', P + 'g', 'SAMPLES', 0)
        ga = c.cmd('MEMORY', 'USAGE', P + 'ga', 'SAMPLES', 0) or 0
        gr_keys = m_grp_total - m_msgs - g_hash
        out['%d ready in %d group(s)' % (n, G)] = {
            'list r, B/msg': round(list_bytes / n, 1),
            'grouped (gr + ga + g), B/msg': round((m_grp_total - m_msgs) / n, 1),
            'of which g HASH, B/msg': round(g_hash / n, 1),
            'of which gr keys + ga, B/msg': round(gr_keys / n, 1),
            'ga, B/group': round(ga / G, 1),
            'grouped minus list, B per group': round((m_grp_total - m_msgs - list_bytes) / G, 1),
            'gr key encoding': c.cmd('OBJECT', 'ENCODING', P + 'gr:grp-00000').decode(),
        }
    # gv entries left behind (groups that left the rotation while others are active)
    return out


# ---------------------------------------------------------------- (e) commands
USED = {
    'ZRANGE': 'ga 0 1 WITHSCORES', 'ZPOPMIN': 'gr:<g> count', 'ZADD': 'multi pairs',
    'ZREM': 'multi', 'ZSCORE': '', 'ZCARD': '', 'ZRANGEBYSCORE': 'WITHSCORES LIMIT',
    'ZREMRANGEBYRANK': '', 'ZMSCORE': '(real claim.lua)', 'HMGET': '', 'HSET': 'multi pairs',
    'HINCRBY': '', 'HDEL': 'multi', 'HLEN': '', 'HGET': '', 'EXISTS': '', 'SISMEMBER': '',
    'LPOP': 'count (member "")', 'RPUSH': '', 'LLEN': '', 'LRANGE': '', 'LTRIM': '', 'LPUSH': '',
    'SET': 'PX', 'GET': '', 'DEL': '', 'TIME': '',
}


def flat(x):
    if isinstance(x, list):
        d = {}
        for i in range(0, len(x) - 1, 2):
            k = x[i].decode() if isinstance(x[i], bytes) else x[i]
            d[k] = x[i + 1]
        return d
    return x


def part_e(c):
    out = {}
    for cmd, use in USED.items():
        docs = c.cmd('COMMAND', 'DOCS', cmd)
        d = flat(docs[1])
        since = d.get('since', b'?').decode()
        hist = [(h[0].decode(), h[1].decode()) for h in d.get('history', []) or []]
        out[cmd] = {'use': use, 'since': since, 'history': hist}
    return out


# ---------------------------------------------------------------- (f) edge cases
def seed_groups(c, spec, ready_per_group):
    """spec: list of (group, weight, vt). All messages due now."""
    c.cmd('FLUSHALL')
    base = now_ms(c) - 10 * ready_per_group
    for g, w, vt in spec:
        ids = ['%s-%06d' % (g, k) for k in range(ready_per_group)]
        store(c, ids, [base + k for k in range(ready_per_group)], [g] * ready_per_group)
        for part in chunks(list(range(ready_per_group)), 5000):
            a = []
            for k in part:
                a += [9 * 2 ** 44 + base + k, ids[k]]
            c.cmd('ZADD', P + 'gr:' + g, *a)
        c.cmd('ZADD', P + 'ga', repr(float(vt)), g)
        if w != 1:
            c.cmd('HSET', P + 'gw', g, repr(float(w)))


def share(c, q, variant, claims, N=100):
    cnt = {}
    for _ in range(claims):
        r = q.claim_grouped(N, variant)
        for pos in range((len(r) - 3) // 2):
            g = r[3 + 2 * pos].decode().rsplit('-', 1)[0]
            cnt[g] = cnt.get(g, 0) + 1
    return cnt


def part_f(c, q):
    out = {}
    for variant in ('claim_grouped', 'claim_grouped_batched'):
        # Weights 0.1, 1, 100, all at vt 0, 10,000 ready each: shares of the first 2,000 claimed.
        seed_groups(c, [('w0.1', 0.1, 0), ('w1', 1, 0), ('w100', 100, 0)], 10000)
        out['weights 0.1/1/100, first 2,000 claimed, ' + variant] = share(c, q, variant, 20)
        # A weight-100 group delays a newly active group by up to ~100 messages: new group at the low vt.
        seed_groups(c, [('w100', 100, 0), ('w1', 1, 0)], 10000)
        q.claim_grouped(100, variant)
        low = float(c.cmd('ZRANGE', P + 'ga', 0, 0, 'WITHSCORES')[1])
        c.cmd('ZADD', P + 'gr:zz-new', 9 * 2 ** 44, 'zz-new-000000')
        c.cmd('HSET', P + 'm', 'zz-new-000000', '0:0:' + BODY)
        c.cmd('ZADD', P + 'ga', repr(low), 'zz-new')
        r = q.claim_grouped(200, variant)
        ids = [r[3 + 2 * p].decode() for p in range((len(r) - 3) // 2)]
        out['position of a new group message behind w100 + w1, ' + variant] = ids.index('zz-new-000000') + 1
        # Float precision: virtual times at 2^47 (1.4e14): 1/100 is below half an ulp (2^47 ulp = 1/32).
        seed_groups(c, [('a-w100', 100, 2 ** 47), ('b-w1', 1, 2 ** 47)], 5000)
        out['vt = 2^47, w100 vs w1, first 1,000 claimed, ' + variant] = share(c, q, variant, 10)
        out['  vt of a-w100 after, ' + variant] = (c.cmd('ZSCORE', P + 'ga', 'a-w100') or b'gone').decode()
        # Ties: 1,000 groups at the same vt, N=20: round robin by name?
        seed_groups(c, [('t%04d' % k, 1, 0) for k in range(1000)], 2)
        firsts = []
        for _ in range(3):
            r = q.claim_grouped(20, variant)
            firsts.append([r[3 + 2 * p].decode() for p in range((len(r) - 3) // 2)][:3])
        out['ties: first 3 of 3 claims of 20 over 1,000 tied groups, ' + variant] = firsts
    # Both claim variants take the same ids in the same order (mixed weights, 200 groups).
    seqs = {}
    for variant in ('claim_grouped', 'claim_grouped_batched'):
        spec = [('q%03d' % k, [0.5, 1, 2, 3, 7][k % 5], k % 7) for k in range(200)]
        seed_groups(c, spec, 50)
        seq = []
        for _ in range(60):
            r = q.claim_grouped(37, variant)
            seq += [r[3 + 2 * p].decode() for p in range((len(r) - 3) // 2)]
        seqs[variant] = seq
    out['design and batched claim take identical sequences (200 groups, weights 0.5..7, 60 claims of 37)'] = (
        seqs['claim_grouped'] == seqs['claim_grouped_batched'], len(seqs['claim_grouped']))
    # Floating accumulation: 1e6 additions of 1/3 vs one k/3.
    v = 0.0
    for _ in range(10 ** 6):
        v += 1 / 3
    out['1e6 x (+1/3) in doubles vs 1e6/3'] = (v, 10 ** 6 / 3, v - 10 ** 6 / 3)
    x = float(2 ** 47)
    out['2^47 + 0.01 == 2^47 in doubles'] = (x + 0.01 == x)
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    runs = 3
    if '--runs' in sys.argv:
        runs = int(sys.argv[sys.argv.index('--runs') + 1])
        args = [a for a in args if a != str(runs)]
    parts = args or ['a', 'b', 'c', 'd', 'e', 'f']
    port = free_port()
    proc = subprocess.Popen(['redis-server', '--port', str(port), '--save', '', '--appendonly', 'no',
                             '--bind', '127.0.0.1'], stdout=subprocess.DEVNULL)
    print('redis-server pid', proc.pid, 'port', port, flush=True)
    results = {}
    try:
        for _ in range(50):
            try:
                c = C(port)
                c.cmd('PING')
                break
            except OSError:
                time.sleep(0.1)
        results['redis_version'] = info(c, 'server')['redis_version']
        q = Q(c)
        if 'e' in parts:
            results['e'] = part_e(c)
            print(json.dumps(results['e'], indent=1), flush=True)
        if 'f' in parts:
            results['f'] = part_f(c, q)
            print(json.dumps(results['f'], indent=1), flush=True)
        if 'd' in parts:
            results['d'] = part_d(c, q)
            print(json.dumps(results['d'], indent=1), flush=True)
        if 'c' in parts:
            results['c'] = {v: part_c(c, q, v) for v in ('claim_grouped', 'claim_grouped_batched')}
            print(json.dumps(results['c'], indent=1), flush=True)
        if 'b' in parts:
            b = {}
            for paced in (False, True):
                for mode in ('fifo', 'claim_grouped', 'claim_grouped_batched'):
                    key = '%s %s' % (mode, 'paced 50k msg/s' if paced else 'as fast as possible')
                    b[key] = part_b(c, q, mode, paced)
                    print(key, b[key], flush=True)
            results['b'] = b
        if 'g' in parts:
            results['g'] = part_g(c, q, runs)
            print(json.dumps(results['g'], indent=1), flush=True)
        if 'a' in parts:
            results['a'] = part_a(c, q, runs)
            print(json.dumps(results['a'], indent=1), flush=True)
    finally:
        proc.kill()
        proc.wait()
    name = 'results-%s.json' % '-'.join(parts)
    with open(os.path.join(HERE, name), 'w') as f:
        json.dump(results, f, indent=1)
    print('wrote', name)


if __name__ == '__main__':
    main()
