"""Guard tests of inputlayer-server, each on servers of its own: deadlines (a
non-terminating recursion stopped at 2 s), cancel of a running, a queued and a finished
request, duplicate ids, a full compute queue (`overloaded`), a write that goes before queued
reads (admission lanes), the per-query memory limit
(a cross product refused at 16 MiB, resident growth bounded), and a slow reader that stops
reading large results (resident memory stays bounded). After each, the server answers
the next request. Resident-memory bounds are checked on the normal build only (a
sanitizer's allocator and shadow memory make resident sizes meaningless)."""

import asyncio
import time

from common import (NO_MESSAGE_RATE, OwnServer as Server, connect, expect_closed, is_sanitized,
                    login, prometheus, run, still_answers)

# A recursion without a fixpoint: every round derives one more number.
NAT = "+nat(0)\n+nat(Y) <- nat(X), Y = X + 1"
# A join that visits 8e9 combinations and keeps none of them: long, in constant memory.
SLOW = "?a(X), b(Y), c(Z), X = Y + Z + 1000000"


def rss_kib(pid, field="VmRSS"):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s for %d" % (field, pid))


# SLOW as a persistent rule: its first unbound read would make the rule maintained, so it
# runs serialized, holding the engine lock (a pinned read would leave the engine free and
# the writes would run inline: docs/server.md, Reads beside writes). Stopped, it leaves the
# rule undecided, and the next read of it holds the lock again.
HELD = "?held(X, Y, Z)"
# A write that runs on the pool (it defines a rule): y(N) for one N.
POOLED_WRITE = "+y(X) <- a(X), X = %d"


async def hold_engine(c):
    f = await c.call({"type": "execute",
                      "program": "+held(X, Y, Z) <- a(X), b(Y), c(Z), X = Y + Z + 1000000"})
    assert f["type"] == "result" and not f["errors"], f


async def load_abc(c, n=2000):
    for rel in "abc":
        rows = ", ".join("(%d)" % i for i in range(n))
        f = await c.call({"type": "execute", "program": "+%s[%s]" % (rel, rows)})
        assert f["type"] == "result", f


async def t_deadline(binary):
    sanitized = is_sanitized(binary)
    with Server(binary) as srv:
        c = await connect(srv)
        f = await c.call({"type": "execute", "program": NAT})
        assert f["type"] == "result" and f["errors"] == [], f
        t0 = time.monotonic()
        f = await c.call({"type": "execute", "id": "d", "program": "?nat(X)", "timeout_ms": 2000},
                         timeout=60)
        took = time.monotonic() - t0
        assert f["type"] == "error" and f["code"] == "deadline_exceeded" and f["id"] == "d", f
        assert f["message"] == ("Request deadline exceeded before it began committing; "
                                "nothing was applied"), f
        assert 1.9 <= took < 20, took  # liveness bound: the deadline fires well within 10x
        await still_answers(c)
        # A short deadline; and a write whose deadline passes while it waits behind a
        # read never runs.
        f = await c.call({"type": "execute", "program": "?nat(X)", "timeout_ms": 50}, timeout=60)
        assert f["code"] == "deadline_exceeded", f
        await c.send({"type": "execute", "id": "r", "program": "?nat(X)", "timeout_ms": 1500})
        await c.send({"type": "execute", "id": "w", "program": "+late(1)", "timeout_ms": 200})
        f = await c.recv(timeout=60)
        assert f["id"] == "r" and f["code"] == "deadline_exceeded", f
        f = await c.recv(timeout=60)
        assert f["id"] == "w" and f["code"] == "deadline_exceeded", f
        f = await c.call({"type": "execute", "program": "?late(X)"})
        assert f["type"] == "result" and f["rows"] == [], f
        await c.ws.close()
    # The server-wide query_timeout_ms applies without a timeout_ms.
    env = {"INPUTLAYER_STORAGE__PERFORMANCE__QUERY_TIMEOUT_MS": "300"}
    with Server(binary, env=env) as srv:
        c = await connect(srv)
        await c.call({"type": "execute", "program": NAT})
        f = await c.call({"type": "execute", "id": "q", "program": "?nat(X)"}, timeout=60)
        assert f["code"] == "deadline_exceeded", f
        # timeout_ms cannot lengthen it.
        t0 = time.monotonic()
        f = await c.call({"type": "execute", "program": "?nat(X)", "timeout_ms": 60000},
                         timeout=60)
        assert f["code"] == "deadline_exceeded" and time.monotonic() - t0 < 10, f
        await still_answers(c)
        await c.ws.close()


async def t_cancel(binary):
    sanitized = is_sanitized(binary)
    with Server(binary) as srv:
        c = await connect(srv)
        await load_abc(c)
        # A running read: stopped promptly, its reply is `cancelled`, then the ack.
        await c.send({"type": "execute", "id": "long", "program": SLOW})
        await asyncio.sleep(0.3)
        t0 = time.monotonic()
        await c.send({"type": "cancel", "id": "k1", "target": "long"})
        f = await c.recv(timeout=30)
        assert f["type"] == "error" and f["code"] == "cancelled" and f["id"] == "long", f
        f = await c.recv(timeout=30)
        assert f == {"type": "cancel_ack", "id": "k1", "target": "long",
                     "outcome": "cancelled"}, f
        assert time.monotonic() - t0 < 5, time.monotonic() - t0
        # A write queued behind a running read never runs; the read is cancelled too.
        await c.send({"type": "execute", "id": "long2", "program": SLOW})
        await c.send({"type": "execute", "id": "w", "program": "+x(1)"})
        await asyncio.sleep(0.2)
        await c.send({"type": "cancel", "id": "k2", "target": "w"})
        await c.send({"type": "cancel", "id": "k3", "target": "long2"})
        got = [await c.recv(timeout=30) for _ in range(4)]
        assert [g["id"] for g in got] == ["long2", "w", "k2", "k3"], got
        assert got[0]["code"] == "cancelled" and got[1]["code"] == "cancelled", got
        assert got[2]["outcome"] == "cancelled" and got[3]["outcome"] == "cancelled", got
        f = await c.call({"type": "execute", "program": "?x(X)"})
        assert f["type"] == "result" and f["rows"] == [], f
        # Finished and unknown targets.
        f = await c.call({"type": "execute", "id": "done", "program": "?a(1)"})
        f = await c.call({"type": "cancel", "id": "k4", "target": "done"})
        assert f["outcome"] == "not_found", f
        # A duplicate id of a request in progress is refused without touching it.
        await c.send({"type": "execute", "id": "dup", "program": SLOW})
        await c.send({"type": "execute", "id": "dup", "program": "?a(1)"})
        await c.send({"type": "cancel", "id": "k5", "target": "dup"})
        got = [await c.recv(timeout=30) for _ in range(3)]
        assert got[0]["id"] == "dup" and got[0]["code"] == "cancelled", got
        assert got[1]["code"] == "invalid_request" and "id" not in got[1], got
        assert got[2]["outcome"] == "cancelled", got
        await still_answers(c)
        await c.ws.close()


# Session work only: a session fact, a session rule without a fixpoint, a query of it.
SESSION_DIVERGES = "n(0)\nn(X) <- n(Y), X = Y + 1\n?n(X)"


async def t_cancel_session_work(binary):
    """A program of session facts, session rules and queries writes nothing stored, so it
    never begins committing: a cancel, a deadline or the memory limit stops it, and what it
    added to the session is rolled back (the original answered a cancel `too_late` and ran
    the query to its deadline)."""
    with Server(binary) as srv:
        c = await connect(srv)
        await c.send({"type": "execute", "id": "s", "program": SESSION_DIVERGES})
        await asyncio.sleep(1.5)
        t0 = time.monotonic()
        await c.send({"type": "cancel", "id": "k", "target": "s"})
        f = await c.recv(timeout=60)
        assert f["type"] == "error" and f["id"] == "s" and f["code"] == "cancelled", f
        assert f["message"] == ("Request cancelled before it began committing; "
                                "nothing was applied"), f
        f = await c.recv(timeout=60)
        assert f == {"type": "cancel_ack", "id": "k", "target": "s",
                     "outcome": "cancelled"}, f
        assert time.monotonic() - t0 < 10, time.monotonic() - t0  # liveness bound
        # Nothing of it stayed in the session: the rule would make this diverge too.
        f = await c.call({"type": "execute", "program": "?n(X)", "timeout_ms": 10000},
                         timeout=60)
        assert f["type"] == "error" or f["rows"] == [], f
        assert f.get("code") != "deadline_exceeded", f
        # A deadline stops the same work, and rolls it back as well.
        t0 = time.monotonic()
        f = await c.call({"type": "execute", "id": "d", "program": SESSION_DIVERGES,
                          "timeout_ms": 1500}, timeout=60)
        assert f["type"] == "error" and f["code"] == "deadline_exceeded", f
        assert 1.4 <= time.monotonic() - t0 < 20, time.monotonic() - t0
        f = await c.call({"type": "execute", "program": "?n(X)", "timeout_ms": 10000},
                         timeout=60)
        assert f.get("code") != "deadline_exceeded", f
        # A program that writes stored facts is one transaction, which begins committing
        # after its last statement: until then a cancel rolls back its writes as well.
        await c.send({"type": "execute", "id": "w", "program": "+m(1)\n" + SESSION_DIVERGES})
        await asyncio.sleep(1.5)
        await c.send({"type": "cancel", "id": "k2", "target": "w"})
        f = await c.recv(timeout=60)
        assert f["type"] == "error" and f["id"] == "w" and f["code"] == "cancelled", f
        f = await c.recv(timeout=60)
        assert f["type"] == "cancel_ack" and f["outcome"] == "cancelled", f
        f = await c.call({"type": "execute", "program": "?m(X)"})
        assert f["type"] == "error" or f["rows"] == [], f
        await still_answers(c)
        await c.ws.close()
    # The per-query memory limit stops session work as well.
    env = {"INPUTLAYER_STORAGE__PERFORMANCE__MAX_QUERY_MEMORY_BYTES": str(16 << 20)}
    with Server(binary, env=env) as srv:
        c = await connect(srv)
        for rel in "pq":
            rows = ", ".join("(%d)" % i for i in range(3000))
            await c.call({"type": "execute", "program": "+%s[%s]" % (rel, rows)})
        f = await c.call({"type": "execute", "program": "s(1)\n?p(X), q(Y), s(Z)"}, timeout=60)
        assert f["type"] == "error" and f["code"] == "resource_exhausted", f
        f = await c.call({"type": "execute", "program": "?s(X)"})
        assert f["type"] == "error" or f["rows"] == [], f
        await still_answers(c)
        await c.ws.close()


async def t_other_connections_live(binary):
    sanitized = is_sanitized(binary)
    """A long read does not stop the server from answering other connections' pings,
    nor its own connection's cancel; a disconnect stops the read."""
    with Server(binary) as srv:
        a = await connect(srv)
        await load_abc(a)
        await a.send({"type": "execute", "id": "long", "program": SLOW})
        await asyncio.sleep(0.2)
        b = await connect(srv)
        t0 = time.monotonic()
        assert await b.call({"type": "ping", "id": "p"}) == {"type": "pong", "id": "p"}
        assert time.monotonic() - t0 < 1, time.monotonic() - t0
        await a.ws.close()
        # The read stopped with its connection: the engine is free again.
        t0 = time.monotonic()
        f = await b.call({"type": "execute", "program": "?a(1)"}, timeout=30)
        assert f["type"] == "result" and f["rows"] == [[1]], f
        assert time.monotonic() - t0 < 5, time.monotonic() - t0
        await b.ws.close()


async def t_overloaded(binary):
    sanitized = is_sanitized(binary)
    env = {"INPUTLAYER_ADMISSION__COMPUTE_PERMITS": "1", "INPUTLAYER_ADMISSION__MAX_QUEUED": "1"}
    with Server(binary, env=env) as srv:
        a, b, c = await connect(srv), await connect(srv), await connect(srv)
        await load_abc(a)
        await hold_engine(a)
        # Sessions are open (they open in jobs of their own): b's write takes the one
        # queue slot behind the running read, and c's finds the queue full.
        for x in (b, c):
            f = await x.call({"type": "execute", "program": "?a(1)"})
            assert f["rows"] == [[1]], f
        await a.send({"type": "execute", "id": "long", "program": HELD})
        await asyncio.sleep(0.3)
        # Rules are written on the pool (given facts would be written inline by the I/O
        # thread, the engine lock being free beside a pinned read).
        await b.send({"type": "execute", "id": "w1", "program": POOLED_WRITE % 1})
        await asyncio.sleep(0.2)
        f = await c.call({"type": "execute", "id": "w2", "program": POOLED_WRITE % 2})
        assert f["type"] == "error" and f["code"] == "overloaded" and f["id"] == "w2", f
        await a.send({"type": "cancel", "target": "long"})
        f = await b.recv(timeout=30)
        assert f["type"] == "result" and f["id"] == "w1", f
        f = await c.call({"type": "execute", "program": "?y(X)"})
        assert f["rows"] == [[1]], f
        for x in (a, b, c):
            await x.ws.close()
    # A request that waits longer than admission.max_wait_ms for a worker is refused.
    env = {"INPUTLAYER_ADMISSION__COMPUTE_PERMITS": "1", "INPUTLAYER_ADMISSION__MAX_WAIT_MS": "300"}
    with Server(binary, env=env) as srv:
        a = await connect(srv)
        await load_abc(a)
        await hold_engine(a)
        await a.send({"type": "execute", "id": "long", "program": HELD})
        await asyncio.sleep(0.3)
        b = await connect(srv)
        await b.send({"type": "execute", "id": "late", "program": POOLED_WRITE % 1})
        t0 = time.monotonic()
        f = await b.recv(timeout=30)
        assert f["type"] == "error" and f["code"] == "overloaded" and f["id"] == "late", f
        assert 0.25 < time.monotonic() - t0 < 10, time.monotonic() - t0
        await a.send({"type": "cancel", "target": "long"})
        f = await b.call({"type": "execute", "program": "?y(X)"}, timeout=30)
        assert f["type"] == "error" or f["rows"] == [], f
        for x in (a, b):
            await x.ws.close()


async def t_write_lane(binary):
    """With one compute permit, a write queued behind reads waits only for the read that
    runs: it goes before the reads queued ahead of it (admission lanes), and the lanes'
    counts say so."""
    env = {"INPUTLAYER_ADMISSION__COMPUTE_PERMITS": "1"}
    with Server(binary, env=env) as srv:
        a, w = await connect(srv), await connect(srv)
        readers = [await connect(srv) for _ in range(3)]
        await load_abc(a)
        for x in [w] + readers:  # their sessions open first (jobs of their own)
            f = await x.call({"type": "execute", "program": "?a(1)"})
            assert f["rows"] == [[1]], f
        await a.send({"type": "execute", "id": "long", "program": SLOW})
        await asyncio.sleep(0.3)
        for i, r in enumerate(readers):
            await r.send({"type": "execute", "id": "q%d" % i, "program": SLOW})
        await asyncio.sleep(0.3)
        await w.send({"type": "execute", "id": "w", "program": "+y(1)"})
        await asyncio.sleep(0.2)
        m = prometheus(srv)
        assert m['inputlayer_admission_lane_queued{lane="interactive"}'] == 3, m
        assert m['inputlayer_admission_lane_queued{lane="write"}'] == 1, m
        await a.send({"type": "cancel", "target": "long"})
        f = await w.recv(timeout=30)  # first-in-first-out, it would wait behind q0 for ever
        assert f["type"] == "result" and f["id"] == "w" and not f["errors"], f
        m = prometheus(srv)
        assert m['inputlayer_admission_lane_admitted_total{lane="write"}'] >= 1, m
        for _ in range(100):  # q0 takes the permit the write left
            m = prometheus(srv)
            if m['inputlayer_admission_lane_running{lane="interactive"}'] == 1:
                break
            await asyncio.sleep(0.05)
        assert m['inputlayer_admission_lane_running{lane="interactive"}'] == 1, m
        assert m['inputlayer_admission_lane_queued{lane="interactive"}'] == 2, m
        # the queued ones first: they leave the queue without running
        for i in (2, 1, 0):
            await readers[i].send({"type": "cancel", "target": "q%d" % i})
            f = await readers[i].recv(timeout=30)
            assert f["type"] == "error" and f["code"] == "cancelled", f
        m = prometheus(srv)
        assert m['inputlayer_admission_lane_stopped_waiting_total{lane="interactive"}'] == 2, m
        f = await w.call({"type": "execute", "program": "?y(X)"}, timeout=30)
        assert f["rows"] == [[1]], f
        for x in [a, w] + readers:
            await x.ws.close()


async def t_memory_limit(binary):
    sanitized = is_sanitized(binary)
    env = {"INPUTLAYER_STORAGE__PERFORMANCE__MAX_QUERY_MEMORY_BYTES": str(16 << 20)}
    with Server(binary, env=env) as srv:
        c = await connect(srv)
        for rel in "pq":
            rows = ", ".join("(%d)" % i for i in range(3000))
            await c.call({"type": "execute", "program": "+%s[%s]" % (rel, rows)})
        await still_answers(c)
        base = rss_kib(srv.proc.pid)
        f = await c.call({"type": "execute", "id": "x", "program": "?p(X), q(Y)"}, timeout=60)
        assert f["type"] == "error" and f["code"] == "resource_exhausted", f
        assert f["message"].startswith("Request exceeded the per-query memory limit"), f
        peak = rss_kib(srv.proc.pid, "VmHWM")
        if not sanitized:
            growth = (peak - base) * 1024
            assert growth < (16 << 20) + (64 << 20), (base, peak)
        # Within the limit the same shape answers exactly.
        f = await c.call({"type": "execute", "program": "?p(X), q(Y), X < 3, Y < 2"})
        assert f["type"] == "result" and len(f["rows"]) == 6, f
        await still_answers(c)
        await c.ws.close()


async def t_memory_returned(binary):
    """After a computation whose peak passed 64 MiB, freed memory goes back to the system
    within seconds (the purge a large peak schedules, and pages unused for a second)."""
    sanitized = is_sanitized(binary)
    with Server(binary) as srv:
        c = await connect(srv)
        for rel in "pq":
            rows = ", ".join("(%d)" % i for i in range(2000))
            await c.call({"type": "execute", "program": "+%s[%s]" % (rel, rows)})
        await still_answers(c)
        base = rss_kib(srv.proc.pid)
        await c.send({"type": "execute", "id": "x", "program": "?p(X), q(Y)"})
        f = await c.recv(timeout=120)
        while f["type"] in ("result_start", "result_chunk"):
            f = await c.recv(timeout=120)
        assert f["type"] == "result_end", f
        peak, held = rss_kib(srv.proc.pid, "VmHWM"), rss_kib(srv.proc.pid)
        await asyncio.sleep(2.5)
        now = rss_kib(srv.proc.pid)
        if not sanitized:
            # The query's memory went back: what the process holds is near where it began
            # (the purge may come before `held` is read, so only `now` is judged).
            assert (peak - base) * 1024 > 64 << 20, (base, peak)
            assert (now - base) * 1024 < 16 << 20, (base, peak, held, now)
        await still_answers(c)
        await c.ws.close()


async def t_query_strings_freed(binary):
    """Strings, long integers and vectors that only queries, `read` snapshots and
    explanations made are freed with their replies (the graph's plan cache holds its last
    64 programs' own, until they leave it or the graph goes), from an admin and from a
    viewer (whose statements the server parses to check its rights), alone or several in
    a program; so are those of writes the viewer is denied, and the keys of standing
    queries no fact holds, once unsubscribed. Thousands of such requests leave the intern
    table as they found it, but for what stays idle within its bounds for queries run
    again, and a string a write stores meanwhile stays."""
    with Server(binary, NO_MESSAGE_RATE) as srv:
        a = await connect(srv)
        for stmt in (".kg create strs", ".kg use strs", '+f("a", 1)', '+name("alice")',
                     "+doc(1, [0.5, 0.25])", ".user create vic pw-vic-1 viewer",
                     ".kg acl grant strs vic viewer"):
            assert (await run(a, stmt))["type"] == "result", stmt
        v, f = await login(srv, "vic", "pw-vic-1", kg="strs")
        assert f["type"] == "authenticated", f
        base = prometheus(srv)
        pad = "x" * 1000
        for i in range(300):
            for c in (a, v):
                for text in ('?f("probe-%d-%s", X)' % (i, pad),
                             '?name(N), G = concat(N, "-", "%d")' % i,
                             "?f(X, Y), Z = Y + %d" % (500000000000000 + i),
                             "?doc(I, V), D = euclidean(V, [%d.5, 1.0])" % i,
                             '.why ?f(X, Y), Z = concat(X, "why-", "%d")' % i,
                             '.why_not f("absent-%d", 1)' % i,
                             '?f("m1-%d", X)\n?f(X, Y), X = "m2-%d"' % (i, i)):
                    f = await run(c, text)
                    assert f["type"] == "result", (text, f)
                f = await c.call({"type": "read", "id": "r%d" % i, "queries": [
                    {"name": "a", "query": '?f(X, Y), X = "read-%d"' % i},
                    {"name": "b", "query": '?name(N), G = concat(N, "+", "%d")' % i}]})
                assert f["type"] == "snapshot", f
            f = await run(v, '+f("denied-%d", 1)' % i)
            assert f["type"] == "error" and "viewer access" in f["message"], f
        cached = prometheus(srv)
        assert (cached["inputlayer_interned_bytes"] - cached["inputlayer_interned_idle_bytes"]
                - base["inputlayer_interned_bytes"] < 80000), cached
        # a string a query holds and a write stores, then read back
        f = await run(a, '?name(N), G = concat(N, "!", "kept")')
        assert f["rows"] == [["alice", "alice!kept"]], f
        assert (await run(a, '+g("alice!kept")'))["type"] == "result"
        assert (await run(v, "?g(X)"))["rows"] == [["alice!kept"]]
        # standing queries keyed by strings of their own, subscribed and unsubscribed (a
        # key no fact holds goes with its last member); one keyed by a stored string
        for i in range(200):
            f = await run(v, '.subscribe k%d ?f("key-%d", X)' % (i % 3, i))
            assert f["type"] == "result" and f["rows"] == [], f
            if i % 3 == 2:
                for k in range(3):
                    f = await run(v, ".unsubscribe k%d" % k)
                    assert f["type"] == "result", f
        for k in range(2):
            assert (await run(v, ".unsubscribe k%d" % k))["type"] == "result"
        f = await run(v, '.subscribe ka ?f("a", X)')
        assert f["type"] == "result" and f["rows"] == [["a", 1]], f
        assert (await run(a, '+f("a", 2)'))["type"] == "result"
        f = await v.recv()
        assert f["type"] == "subscription_delta" and f["inserted"] == [["a", 2]], f
        assert (await run(v, ".unsubscribe ka"))["type"] == "result"
        await v.ws.close()
        for stmt in (".kg use default", ".kg drop strs"):
            assert (await run(a, stmt))["type"] == "result"
        now = prometheus(srv)

        def held(m, what):  # what something holds, not what is idle
            return m["inputlayer_interned_" + what] - m["inputlayer_interned_idle_" + what]
        # "alice!kept" is the one value interned for good since the base
        assert held(now, "values") - held(base, "values") == 1, (held(base, "values"),
                                                                 held(now, "values"))
        assert held(now, "bytes") - held(base, "bytes") < 100, now
        assert now["inputlayer_interned_transient_values"] == 0, now
        # what stays idle for queries run again is bounded: 65,536 values and 16 MiB
        assert now["inputlayer_interned_idle_values"] <= 65536 + 16, now
        assert now["inputlayer_interned_idle_bytes"] <= (16 << 20) + (1 << 16), now
        await a.ws.close()


async def t_slow_reader(binary):
    sanitized = is_sanitized(binary)
    # No deadline: under a sanitizer the last of 200 requests waits longer than 30 s.
    env = {"INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_MESSAGES_PER_SEC": "0",
           "INPUTLAYER_STORAGE__PERFORMANCE__QUERY_TIMEOUT_MS": "0"}
    with Server(binary, env=env) as srv:
        c = await connect(srv)
        pad = "y" * 100
        for k in range(4):
            rows = ", ".join('(%d, "%s")' % (k * 5000 + i, pad) for i in range(5000))
            f = await c.call({"type": "execute", "program": "+big[%s]" % rows})
            assert f["type"] == "result" and f["errors"] == [], f
        await still_answers(c)
        base = rss_kib(srv.proc.pid)
        # Each reply is about 2.6 MB: 500 MB if the server buffered them all. The join takes
        # longer than the inline budget, so the reads run on the pool, where nothing but
        # the in-flight bound keeps them from all being computed at once. Under a sanitizer,
        # which does not check the memory, fewer: the order and the draining are the same.
        n = 60 if sanitized else 200
        for i in range(n):
            await c.send({"type": "execute", "id": "b%d" % i,
                          "program": "?big(X, Y), big(X, Z)"})
        await asyncio.sleep(3)
        held = rss_kib(srv.proc.pid)
        print("slow reader: resident growth %d MiB" % ((held - base) // 1024))
        if not sanitized:
            assert (held - base) * 1024 < 150 << 20, (base, held)
        # Reading again drains everything, in order.
        for i in range(n):
            f = await c.recv(timeout=60)
            assert f["type"] == "result_start" and f["id"] == "b%d" % i, f
            while f["type"] != "result_end":
                f = await c.recv(timeout=60)
        # A program of several reads that overruns the inline budget runs again on the
        # pool and answers with its last query's table.
        f = await c.call({"type": "execute", "id": "m",
                          "program": "?big(X, Y), big(X, Z), X < 15000\n?big(7, Y)"}, timeout=60)
        assert f["type"] == "result" and f["id"] == "m" and f["rows"] == [[7, pad]], f
        await still_answers(c)
        await c.ws.close()


async def t_revoke_in_flight(binary):
    """Revoking a key while its connection has a request running and others queued: the
    connection gets the credential notice and is closed, no reply of those requests
    reaches it, the running read stops, and the server answers the next request."""
    with Server(binary) as srv:
        admin = await connect(srv)
        await load_abc(admin)
        k = (await run(admin, ".apikey create inflight"))["rows"][0][1]
        c = await connect(srv, key=k)
        await c.send({"type": "execute", "id": "long", "program": SLOW})
        await c.send({"type": "execute", "id": "next", "program": "?a(1)"})
        await asyncio.sleep(0.3)
        t0 = time.monotonic()
        f = await run(admin, ".apikey revoke inflight")
        assert f["type"] == "result", f
        frames, _ = await expect_closed(c, timeout=10)
        assert [x.get("code") for x in frames] == ["credential_revoked"], frames
        f = await admin.call({"type": "execute", "program": "?a(2)"}, timeout=30)
        assert f["rows"] == [[2]], f
        assert time.monotonic() - t0 < 5, time.monotonic() - t0
        await still_answers(admin)
        await admin.ws.close()


TESTS = [t_deadline, t_cancel, t_cancel_session_work, t_other_connections_live, t_overloaded,
         t_write_lane, t_memory_limit,
         t_memory_returned, t_query_strings_freed, t_slow_reader, t_revoke_in_flight]
