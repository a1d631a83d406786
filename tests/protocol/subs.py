"""Protocol tests of standing queries (`.subscribe` / `.unsubscribe`, docs/server.md,
"Standing queries"): the snapshot with `subscribed`, one `subscription_delta` per change
from any connection, retraction on delete, a diamond keeping its row while one derivation
remains, unsubscribe, errors, dropping on `.kg use` and on close, and keyed families (many
subscriptions differing in a goal constant share one view and each gets exactly its
rows, checked against private views). Each test runs in a knowledge graph of its own on
the shared server and ends with the server answering."""

import asyncio
import json

from common import NO_MESSAGE_RATE, OwnServer, connect, login, prometheus, run, still_answers


NOTES = ("persistent_update", "rule_change", "kg_change", "schema_change")


async def next_push(c, wait):
    """The next frame that is not a notification (those have tests of their own)."""
    while True:
        f = json.loads(await asyncio.wait_for(c.ws.recv(), wait))
        if f["type"] not in NOTES:
            return f


async def no_frame(c, wait=0.3):
    """Asserts that no frame but notifications arrives within `wait` seconds."""
    try:
        f = await next_push(c, wait)
    except asyncio.TimeoutError:
        return
    raise AssertionError("unexpected frame: %s" % f)


async def pair(srv, kg):
    """Two connections on a fresh knowledge graph `kg`."""
    a = await connect(srv)
    f = await run(a, ".kg create %s" % kg)
    assert f["type"] == "result", f
    b = await connect(srv, kg=kg)
    return a, b


async def delta(c):
    f = await next_push(c, 10)
    assert f["type"] == "subscription_delta", f
    return f


async def t_subs_snapshot_and_deltas(srv):
    a, b = await pair(srv, "subs_basic")
    f = await run(b, "+e[(1, 2), (2, 3)]")
    assert f["type"] == "result", f
    f = await run(a, ".subscribe s1 ?e(X, Y)", id="sub")
    assert f["type"] == "result" and f["id"] == "sub", f
    assert f["columns"] == ["X", "Y"] and sorted(f["rows"]) == [[1, 2], [2, 3]], f
    sub = f["subscribed"]
    assert sub["subscription"] == "s1" and sub["generation"] >= 1, f
    rev0 = sub["revision"]
    # An insert on another connection: its reply, then exactly one delta to the subscriber.
    f = await run(b, "+e(3, 4)", id="w")
    assert f["type"] == "result" and f["id"] == "w", f
    d = await delta(a)
    assert d["subscription"] == "s1" and d["generation"] == sub["generation"], d
    assert d["knowledge_graph"] == "subs_basic" and d["seq"] == 1 and d["revision"] > rev0, d
    assert d["columns"] == ["X", "Y"] and d["inserted"] == [[3, 4]] and d["retracted"] == [], d
    await no_frame(a)
    await no_frame(b)
    # A write that changes nothing the view shows pushes nothing.
    await run(b, "+other(1)")
    await no_frame(a)
    # A delete retracts the row; seq and revision go on.
    await run(b, "-e(1, 2)")
    d2 = await delta(a)
    assert d2["inserted"] == [] and d2["retracted"] == [[1, 2]], d2
    assert d2["seq"] == 2 and d2["revision"] > d["revision"], d2
    # The subscriber's own write: reply first, then the delta.
    f = await run(a, "+e(5, 6)", id="own")
    assert f["type"] == "result" and f["id"] == "own", f
    d3 = await delta(a)
    assert d3["inserted"] == [[5, 6]] and d3["seq"] == 3, d3
    await still_answers(a)
    await still_answers(b)
    await a.ws.close()
    await b.ws.close()


async def t_subs_diamond(srv):
    a, b = await pair(srv, "subs_diamond")
    await run(b, "+e[(1, 2), (1, 3), (2, 4), (3, 4)]")
    await run(b, "+path(X, Y) <- e(X, Z), e(Z, Y)")
    f = await run(a, ".subscribe p ?path(X, Y)")
    assert f["rows"] == [[1, 4]], f
    await run(b, "-e(1, 2)")  # (1, 4) still derived through 3
    await no_frame(a)
    await run(b, "-e(3, 4)")  # the last derivation goes
    d = await delta(a)
    assert d["retracted"] == [[1, 4]] and d["inserted"] == [] and d["seq"] == 1, d
    await run(b, "+e(3, 4)")
    d = await delta(a)
    assert d["inserted"] == [[1, 4]] and d["seq"] == 2, d
    await still_answers(a)
    await a.ws.close()
    await b.ws.close()


async def t_subs_unsubscribe_and_errors(srv):
    a, b = await pair(srv, "subs_unsub")
    f = await run(a, ".subscribe s ?e(X)")
    assert f["type"] == "result" and f["rows"] == [], f
    gen = f["subscribed"]["generation"]
    f = await run(a, ".subscribe s ?e(X)", id="dup")
    assert f["type"] == "error" and f["code"] == "conflict" and f["id"] == "dup", f
    f = await run(a, ".subscribe bad/name ?e(X)")
    assert f["type"] == "error" and "name" in f["message"], f
    f = await run(a, ".subscribe lim ?e(X), limit(1)")
    assert f["type"] == "error" and f["message"].startswith("Cannot subscribe"), f
    f = await run(a, ".subscribe s2 ?e(X)\n?e(X)")
    assert f["type"] == "error" and "only statement" in f["message"], f
    f = await run(a, ".unsubscribe nosuch")
    assert f["type"] == "error" and f["code"] == "not_found", f
    f = await run(a, ".unsubscribe s")
    assert f["type"] == "result" and f["rows"] == [["Unsubscribed 's'."]], f
    await run(b, "+e(1)")
    await no_frame(a)
    # The same name again: a new generation.
    f = await run(a, ".subscribe s ?e(X)")
    assert f["rows"] == [[1]] and f["subscribed"]["generation"] > gen, f
    # Switching graph drops the subscription silently.
    f = await run(a, ".kg use default")
    assert f["type"] == "result", f
    await run(b, "+e(2)")
    await no_frame(a)
    f = await run(a, ".unsubscribe s")
    assert f["type"] == "error" and f["code"] == "not_found", f
    await still_answers(a)
    await a.ws.close()
    await b.ws.close()


async def t_subs_close_frees(srv):
    a, b = await pair(srv, "subs_close")
    c = await connect(srv, kg="subs_close")
    for i in range(5):
        f = await run(a, ".subscribe v%d ?e(X)" % i)
        assert f["type"] == "result", f
    f = await run(c, ".subscribe w ?e(X)")
    assert f["type"] == "result", f
    await a.ws.close()  # its views are closed with the connection (ASan checks leaks)
    await asyncio.sleep(0.2)
    await run(b, "+e(7)")
    d = await delta(c)
    assert d["subscription"] == "w" and d["inserted"] == [[7]], d
    await c.ws.close()  # left open at shutdown would leak too: closed here
    # Dropping the graph under a subscriber moves it to default and drops the view.
    d_ = await connect(srv, kg="subs_close")
    f = await run(d_, ".subscribe z ?e(X)")
    assert f["type"] == "result", f
    await run(b, ".kg use default")
    f = await run(b, ".kg drop subs_close")
    assert f["type"] == "result", f
    await no_frame(d_)
    f = await run(d_, ".unsubscribe z")
    assert f["type"] == "error" and f["code"] == "not_found", f
    await still_answers(b)
    await still_answers(d_)
    await b.ws.close()
    await d_.ws.close()


def views_and_subs(srv):
    m = prometheus(srv)
    return m["inputlayer_subscription_views"], m["inputlayer_subscriptions_active"]


async def sync(c):
    """The deltas that reached c before the reply to a query sent now (pushes of finished
    writes leave before any later reply)."""
    await c.send({"type": "execute", "program": "?r1(0, Y)", "id": "sync"})
    deltas = []
    while True:
        f = await next_push(c, 10)
        if f.get("id") == "sync":
            assert f["type"] == "result", f
            return deltas
        assert f["type"] == "subscription_delta", f
        deltas.append(f)


def key(row):
    """A row's key column as a number or string (the int key 7 gets the stored 7.0)."""
    return row[0]


async def t_subs_keyed_family(srv):
    w = await connect(srv)
    assert (await run(w, ".kg create subs_family"))["type"] == "result"
    await run(w, ".kg use subs_family")
    await run(w, "+r1[%s]" % ", ".join("(%d, %d)" % (k, 10 * k) for k in range(0, 300, 3)))
    await run(w, '+r1[("a", 1), ("b", 2)]')
    await run(w, "+r2[(3, 0), (3, 30), (4, 60)]")
    views0, subs0 = views_and_subs(srv)
    # 300 subscriptions ?r1(K, Y), 60 per connection: 298 integer keys and two strings.
    keys = [str(k) for k in range(298)] + ['"a"', '"c"']
    conns, state, names = [], {}, {}
    for i, k in enumerate(keys):
        if i % 60 == 0:
            conns.append(await connect(srv, kg="subs_family"))
        c = conns[-1]
        name = "k%d" % i
        f = await run(c, ".subscribe %s ?r1(%s, Y)" % (name, k))
        assert f["type"] == "result" and "subscribed" in f, f
        assert f["columns"][1] == "Y" and (k.startswith('"') or f["columns"][0] == k), f
        state[name] = {tuple(r) for r in f["rows"]}
        names[name] = k
    # Private views to compare with: a comparison and a constant outside the goal are
    # not lifted (each of these is a view of its own).
    p = await connect(srv, kg="subs_family")
    sample = list(range(20))
    for k in sample:
        f = await run(p, ".subscribe p%d ?r1(X, Y), X = %d" % (k, k))
        assert f["type"] == "result", f
        state["p%d" % k] = {tuple(r) for r in f["rows"]}
    f = await run(p, ".subscribe j3 ?r1(X, Y), r2(3, Y)")
    state["j3"] = {tuple(r) for r in f["rows"]}
    f = await run(p, ".subscribe j4 ?r1(X, Y), r2(4, Y)")
    state["j4"] = {tuple(r) for r in f["rows"]}
    views, subs = views_and_subs(srv)
    assert views - views0 == 1 + len(sample) + 2, (views0, views)
    assert subs - subs0 == len(keys) + len(sample) + 2, (subs0, subs)
    # Writes: new keys, deletes, a float key (7.0 is the int key 7's), a row that comes
    # and goes within one request (no delta), strings, keys nobody subscribed to.
    writes = ["+r1[%s]" % ", ".join("(%d, %d)" % (k, 10 * k + 1) for k in range(0, 300, 2)),
              "-r1[(0, 0), (3, 30), (6, 60)]",
              "+r1(7.0, 777)",
              "+r1(8, 1)\n-r1(8, 1)",
              '+r1[("a", 5), ("c", 6), ("d", 7)]',
              "+r1[(1000, 1), (2.5, 3)]",
              "-r1(X, Y) <- r1(X, Y), Y = 61",
              "+r2(3, 71)",
              "+r1(9, 71)"]
    for prog in writes:
        f = await run(w, prog)
        assert f["type"] == "result", (prog, f)
    seqs = {}
    for c in conns + [p]:
        for d in await sync(c):
            name = d["subscription"]
            assert d["seq"] == seqs.get(name, 0) + 1, d
            seqs[name] = d["seq"]
            for r in d["inserted"]:
                assert tuple(r) not in state[name], (name, r)
                state[name].add(tuple(r))
            for r in d["retracted"]:
                assert tuple(r) in state[name], (name, r)
                state[name].remove(tuple(r))
            if name in names:  # a family member gets rows of its own key only
                k = names[name]
                want = k.strip('"') if k.startswith('"') else int(k)
                for r in d["inserted"] + d["retracted"]:
                    assert key(r) == want, (name, r)
    # Every family member holds exactly what its query returns now, and the sampled
    # ones what their private views hold.
    for name, k in names.items():
        f = await run(w, "?r1(%s, Y)" % k)
        assert state[name] == {tuple(r) for r in f["rows"]}, (name, state[name], f["rows"])
    for k in sample:
        assert state["k%d" % k] == state["p%d" % k], k
    assert state["k7"] == {(7.0, 777)}, state["k7"]
    assert state["k8"] == {(8, 81)} and seqs["k8"] == 1, (state["k8"], seqs["k8"])
    assert state["k299"] == {("c", 6)}, state["k299"]
    for j in ("j3", "j4"):
        f = await run(w, "?r1(X, Y), r2(%s, Y)" % j[1])
        assert state[j] == {tuple(r) for r in f["rows"]}, (j, state[j])
    assert state["j3"] == {(9, 71)}, state["j3"]
    # Unsubscribing and closing drop members; the last one closes the family's view.
    f = await run(conns[0], ".unsubscribe k0")
    assert f["type"] == "result", f
    views, subs = views_and_subs(srv)
    assert views - views0 == 1 + len(sample) + 2 and subs - subs0 == len(keys) + 21, (views, subs)
    for c in conns + [p]:
        await still_answers(c)
        await c.ws.close()
    for _ in range(100):
        if views_and_subs(srv) == (views0, subs0):
            break
        await asyncio.sleep(0.05)
    assert views_and_subs(srv) == (views0, subs0), (views_and_subs(srv), views0, subs0)
    await still_answers(w)
    await w.ws.close()


async def t_subs_access_revoked(srv):
    """Read access is asked before every delta: a revoked grant stops them at once with
    one subscription_error (access_denied); the subscription keeps its last delivered
    result and, once access is back, gets what changed meanwhile as one delta."""
    a, _ = await pair(srv, "subs_acl")
    f = await run(a, ".user create sally pw-sally-1 viewer")
    assert f["type"] == "result", f
    await run(a, ".kg acl grant subs_acl sally viewer")
    s, f = await login(srv, "sally", "pw-sally-1", kg="subs_acl")
    assert f["type"] == "authenticated", f
    w = await connect(srv, kg="subs_acl")
    f = await run(s, ".subscribe mine ?e(X)", id="sub")
    assert f["type"] == "result" and f["rows"] == [], f
    await run(w, "+e(1)")
    d = await delta(s)
    assert d["inserted"] == [[1]] and d["seq"] == 1, d
    await run(a, ".kg acl revoke subs_acl sally")
    await run(w, "+e(2)")
    f = await next_push(s, 10)
    assert f == {"type": "subscription_error", "subscription": "mine",
                 "generation": d["generation"], "message": "Access denied",
                 "code": "access_denied"}, f
    await run(w, "+e(3)")
    await no_frame(s)
    await run(a, ".kg acl grant subs_acl sally viewer")
    await run(w, "-e(2)")
    d = await delta(s)
    assert d["inserted"] == [[3]] and d["retracted"] == [] and d["seq"] == 2, d
    await no_frame(s)
    await run(a, ".user drop sally")
    await still_answers(w)


async def t_subs_streamed(srv):
    """A snapshot over 1 MiB comes as result_start (with subscribed), chunks and
    result_end; a delta over 1 MiB as subscription_delta_start, chunks and _end, whose
    rows together are the change."""
    a, b = await pair(srv, "subs_stream")
    pad = "p" * 400
    for k in range(4):
        rows = ", ".join('(%d, "%s")' % (k * 1000 + i, pad) for i in range(1000))
        await run(a, "+big[%s]" % rows)
    for k in range(3):
        rows = ", ".join('(%d, "%s")' % (10000 + k * 1000 + i, pad) for i in range(1000))
        await run(a, "+spare[%s]" % rows)
    await b.send({"type": "execute", "id": "sub", "program": ".subscribe s ?big(X, Y)"})
    f = await next_push(b, 30)
    assert f["type"] == "result_start" and f["id"] == "sub", f
    assert f["subscribed"]["subscription"] == "s" and f["total_count"] == 4000, f
    got, chunks = [], 0
    while True:
        f = await next_push(b, 30)
        if f["type"] == "result_end":
            break
        assert f["type"] == "result_chunk" and f["chunk_index"] == chunks, f
        assert len(f["rows"]) <= 500, len(f["rows"])
        got += f["rows"]
        chunks += 1
    assert f["row_count"] == 4000 and f["chunk_count"] == chunks, f
    assert sorted(r[0] for r in got) == list(range(4000)), len(got)
    # A write retracting 3000 rows, then one adding 3000: each over 1 MiB, streamed.
    await run(a, "-big(X, Y) <- big(X, Y), X < 3000")
    d = await next_push(b, 30)
    assert d["type"] == "subscription_delta_start" and d["seq"] == 1, d
    assert d["columns"] == ["X", "Y"], d
    ins, ret, n = [], [], 0
    while True:
        f = await next_push(b, 30)
        if f["type"] == "subscription_delta_end":
            break
        assert f["type"] == "subscription_delta_chunk" and f["chunk_index"] == n, f
        ins += f["inserted"]
        ret += f["retracted"]
        n += 1
    assert f["chunk_count"] == n and f["inserted_count"] == 0 and \
        f["retracted_count"] == 3000 and f["seq"] == 1, f
    assert sorted(r[0] for r in ret) == list(range(3000)) and ins == [], len(ret)
    f = await run(a, "+big(X, Y) <- spare(X, Y)")
    assert f["type"] == "result", f
    d = await next_push(b, 30)
    assert d["type"] == "subscription_delta_start" and d["seq"] == 2, d["type"]
    count = 0
    while True:
        f = await next_push(b, 30)
        if f["type"] == "subscription_delta_end":
            break
        count += len(f["inserted"])
    assert count == 3000 and f["inserted_count"] == 3000, (count, f)
    await still_answers(b)


async def reply(c, program):
    """The reply to program, past the pushes that come before it."""
    await c.send({"type": "execute", "id": "r", "program": program})
    while True:
        f = await next_push(c, 10)
        if f.get("id") == "r":
            return f


async def t_subs_keyed_numeric(srv):
    """A keyed member's snapshot comes from its family's rows grouped by key, and holds
    exactly what its own query returns: the int key 2 also gets the stored 2.0, not 2.5;
    later members of the family read the grouping, kept up to date by writes."""
    a, b = await pair(srv, "subs_numeric")
    await run(a, '+e[(2, "int"), (2.0, "float"), (2.5, "half"), (3, "three"), ("2", "str")]')
    for name, key in (("n2", 2), ("n3", 3), ("n4", 4)):
        f = await run(b, ".subscribe %s ?e(%d, Y)" % (name, key))
        assert f["type"] == "result", f
        own = await run(a, "?e(%d, Y)" % key)
        assert sorted(map(str, f["rows"])) == sorted(map(str, own["rows"])), (f, own)
    await run(a, '+e[(4.0, "four"), (2, "again")]\n-e(3, "three")')
    f = await reply(b, ".subscribe late ?e(2, Y)")
    own = await run(a, "?e(2, Y)")
    assert sorted(map(str, f["rows"])) == sorted(map(str, own["rows"])), (f, own)
    assert len(f["rows"]) == 3, f
    f = await reply(b, ".subscribe late3 ?e(3, Y)")
    assert f["rows"] == [], f
    f = await reply(b, ".subscribe late4 ?e(4, Y)")
    assert [r[1] for r in f["rows"]] == ["four"], f
    await still_answers(b)


async def t_write_revision(srv):
    """A program that changed persistent state says at which revision its writes are
    visible (protocol-later.md 1.8), the revision its subscription delta carries; one
    that changed nothing (a query, a duplicate insert) carries none."""
    a, b = await pair(srv, "subs_revision")
    f = await run(b, ".subscribe r ?e(X)", id="sub")
    rev0 = f["subscribed"]["revision"]
    f = await run(a, "+e(1)")
    assert f["type"] == "result" and f["revision"] == rev0 + 1, f
    d = await delta(b)
    assert d["revision"] == f["revision"] and d["inserted"] == [[1]], d
    f = await run(a, "+e(1)")
    assert "revision" not in f, f
    f = await run(a, "?e(X)")
    assert "revision" not in f, f
    f = await run(a, "+e(2)\n+e(3)\n?e(X)")  # one program, one revision
    assert f["revision"] == rev0 + 2 and sorted(f["rows"]) == [[1], [2], [3]], f
    f = await run(a, "+other(1)")
    assert f["revision"] == rev0 + 3, f  # a write to the graph, if not to e
    await still_answers(a)


async def t_expect_revision(srv):
    """execute.expect_revision: the program runs only while its graph is at that
    revision (precondition_failed otherwise, nothing applied); expect_epoch must be this
    run's stream_epoch; a program that writes nothing may not carry one."""
    a, b = await pair(srv, "subs_expect")
    f = await run(a, "+e(1)")
    rev = f["revision"]
    f = await b.call({"type": "execute", "program": "+e(2)", "expect_revision": rev})
    assert f["type"] == "result" and f["revision"] == rev + 1, f
    # Another writer expecting the same revision loses: nothing of it is applied.
    f = await a.call({"type": "execute", "program": "+e(3)\n+e(4)", "expect_revision": rev})
    assert f["type"] == "error" and f["code"] == "precondition_failed", f
    assert "is at revision %d, not %d" % (rev + 1, rev) in f["message"], f
    f = await a.call({"type": "execute", "program": "+e(5)", "expect_revision": rev + 5})
    assert f["code"] == "precondition_failed" and "not issued yet" in f["message"], f
    f = await run(a, "?e(X)")
    assert sorted(f["rows"]) == [[1], [2]], f
    f = await a.call({"type": "execute", "program": "+e(6)", "expect_revision": rev + 1,
                      "expect_epoch": "0000000000000000"})
    assert f["code"] == "precondition_failed" and "stream_epoch" in f["message"], f
    for bad in ({"program": "?e(X)", "expect_revision": rev + 1},
                {"program": ".why ?e(X)", "expect_revision": rev + 1},
                {"program": ".why_not e(9)", "expect_revision": rev + 1},
                {"program": "+e(7)", "expect_revision": -1},
                {"program": "+e(7)", "expect_revision": "1"},
                {"program": "+e(7)", "expect_epoch": "x"}):
        f = await a.call(dict(type="execute", **bad))
        assert f["type"] == "error" and f["code"] == "invalid_request", (bad, f)
    f = await run(a, "?e(X)")
    assert sorted(f["rows"]) == [[1], [2]], f
    await still_answers(a)


async def t_subs_limit(srv):
    """http.rate_limit.ws_max_subscriptions (64 by default) bounds the subscriptions of a
    connection."""
    a, b = await pair(srv, "subs_limit")
    for i in range(64):
        f = await run(b, ".subscribe s%d ?e(X, %d)" % (i, i))
        assert f["type"] == "result", f
    f = await run(b, ".subscribe one_more ?e(X)")
    assert f["type"] == "error" and \
        f["message"] == "Too many subscriptions on this connection (max 64)", f
    await run(b, ".unsubscribe s0")
    f = await run(b, ".subscribe one_more ?e(X)")
    assert f["type"] == "result", f
    await still_answers(b)


async def t_subs_runaway_recursion(binary):
    """A write that sends a subscribed recursion past any fixpoint (a cycle under a
    counter) is acknowledged within the maintenance budget (the query timeout, 300 ms
    here) instead of holding the server forever; the subscription gets
    subscription_error, queries evaluate (and time out, as they would), and once the
    cycle is gone a new subscription works."""
    args = NO_MESSAGE_RATE + ["--set", "storage.performance.query_timeout_ms=300"]
    with OwnServer(binary, args) as srv:
        a, b = await pair(srv, "runaway")
        for p in ["+edge[(1, 2), (2, 3)]", "+dist(X, Y, 1) <- edge(X, Y)",
                  "+dist(X, Z, D) <- dist(X, Y, D0), edge(Y, Z), D = D0 + 1"]:
            assert (await run(a, p))["errors"] == []
        f = await run(b, ".subscribe d ?dist(X, Y, D)")
        assert f["type"] == "result" and len(f["rows"]) == 3 and f["subscribed"], f
        f = await a.call({"type": "execute", "program": "+edge(2, 2)"}, 30)
        assert f["type"] == "result" and f["errors"] == [], f
        f = await next_push(b, 10)
        assert f["type"] == "subscription_error" and f["subscription"] == "d", f
        assert "is not maintained" in f["message"], f
        f = await run(a, "?dist(1, Y, D)")
        assert f["type"] == "error" and f["code"] == "deadline_exceeded", f
        # subscribing meanwhile fails within the budget too
        f = await run(b, ".subscribe d3 ?dist(X, Y, D)")
        assert f["type"] == "error" and "took more than 300 ms" in f["message"], f
        assert (await run(a, "-edge(2, 2)"))["errors"] == []
        f = await run(b, ".subscribe d2 ?dist(1, Y, D)")
        assert f["type"] == "result" and sorted(f["rows"]) == [[1, 2, 1], [1, 3, 2]], f
        await still_answers(a)
        await still_answers(b)
        await a.ws.close()
        await b.ws.close()


# A join of four edge scans over 60 edges with an arithmetic filter (as pinned.py's long
# query): its view takes about a second to compute on a release build.
COSTLY = ("?edge(A, B), edge(C, D), edge(E, F), edge(G, H), A < 30, "
          "A + C + E + G = B + D + F + H + 150")


async def t_subs_first_result_beside(binary):
    """The first subscription of a costly query computes its view on a pin of the graph
    with the engine free: another connection's read and write answer before it does. Its
    snapshot includes the write made meanwhile (the view was caught up with the commits
    since the pin) and equals the query's answer; deltas follow as for any subscription.
    With the view computed under the engine lock, the read and the write waited for it."""
    args = NO_MESSAGE_RATE + ["--set", "admission.compute_permits=2"]
    with OwnServer(binary, args=args) as srv:
        a, b = await pair(srv, "beside")
        edges = ", ".join("(%d, %d)" % (i, (i * 7 + 3) % 60) for i in range(60))
        assert (await run(a, "+edge[%s]" % edges))["errors"] == []
        await a.ws.send(json.dumps({"type": "execute", "program": ".subscribe big " + COSTLY,
                                    "id": "sub"}))
        await asyncio.sleep(0.3)
        sub_task = asyncio.ensure_future(a.recv(timeout=300))
        replies = []
        first = True
        # edge(59, 0) adds three rows to the query's 119
        for p in ["?edge(1, Y)", "+edge(59, 0)", "?edge(59, Y)"]:
            replies.append(await run(b, p))
            first = first and not sub_task.done()
        assert [sorted(r["rows"]) for r in replies[0::2]] == [[[1, 10]], [[59, 0], [59, 56]]], \
            replies
        f = await sub_task
        assert f["type"] == "result" and f["id"] == "sub" and f["subscribed"], f.get("message")
        assert first, "a read or a write waited for the subscription's view"
        q = await run(b, COSTLY)
        assert len(q["rows"]) == 122 and sorted(f["rows"]) == sorted(q["rows"]), \
            (len(f["rows"]), len(q["rows"]))
        assert f["subscribed"]["revision"] >= 2, f["subscribed"]
        assert (await run(b, "-edge(59, 0)"))["errors"] == []
        d = await next_push(a, 30)
        assert d["type"] == "subscription_delta" and d["inserted"] == [], d
        assert len(d["retracted"]) == 3 and all(r[7] == 0 for r in d["retracted"]), d
        # a second subscription of the family joins the view already there
        f = await run(b, ".subscribe big2 " + COSTLY)
        assert f["type"] == "result" and len(f["rows"]) == 119, f.get("message")
        await still_answers(a)
        await still_answers(b)
        await a.ws.close()
        await b.ws.close()


OWN_SERVER_TESTS = [t_subs_runaway_recursion, t_subs_first_result_beside]

TESTS = [t_subs_snapshot_and_deltas, t_subs_diamond, t_subs_unsubscribe_and_errors,
         t_subs_close_frees, t_subs_keyed_family, t_subs_access_revoked, t_subs_streamed,
         t_subs_keyed_numeric, t_write_revision, t_expect_revision, t_subs_limit]
