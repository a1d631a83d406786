"""Protocol tests of subscription groups (the v5 `subscribe` frame, docs/server.md,
"Subscription groups"): the `snapshot` with `subscribed`, every member at one revision;
one `subscription_group_delta` per change listing every member (unchanged ones flagged),
seq without gaps, nothing for a write no member sees; the shared name space and
`.unsubscribe`; validation; a failing member view reported once while every member keeps
its last result; dropping on graph switch; session facts invisible; streamed snapshots
and deltas; and (on a server of its own) a member over max_result_rows failing the
subscribe. Each test on the shared server runs in a knowledge graph of its own and ends
with the server answering."""

import asyncio
import json

from common import NO_MESSAGE_RATE, OwnServer, connect, prometheus, run, still_answers
from subs import next_push, no_frame, pair


def subscribe(name, queries, id=None):
    """A `subscribe` frame for {member name: query}, in order."""
    f = {"type": "subscribe", "subscription": name,
         "queries": [{"name": n, "query": q} for n, q in queries]}
    if id:
        f["id"] = id
    return f


async def group_delta(c):
    f = await next_push(c, 10)
    assert f["type"] == "subscription_group_delta", f
    return f


def members(d):
    return {m["name"]: m for m in d["members"]}


async def t_group_snapshot_and_deltas(srv):
    a, b = await pair(srv, "grp_basic")
    await run(b, "+e[(1, 2), (1, 3), (2, 3)]")
    await run(b, "+f[(7)]")
    # A single subscription beside the group: the same revisions.
    f = await run(a, ".subscribe single ?f(X)")
    assert f["type"] == "result", f
    queries = [("edges", "?e(X, Y)"), ("one", "?e(1, Y)"), ("two", "?e(2, Y)"), ("fs", "?f(X)")]
    f = await a.call(subscribe("g", queries, id="s"))
    assert f["type"] == "snapshot" and f["id"] == "s", f
    assert f["knowledge_graph"] == "grp_basic", f
    sub = f["subscribed"]
    assert sub["subscription"] == "g" and sub["revision"] == f["revision"], f
    assert [r["name"] for r in f["results"]] == ["edges", "one", "two", "fs"], f
    res = {r["name"]: r for r in f["results"]}
    assert res["edges"]["columns"] == ["X", "Y"], f
    assert sorted(res["edges"]["rows"]) == [[1, 2], [1, 3], [2, 3]], f
    assert sorted(res["one"]["rows"]) == [[1, 2], [1, 3]], f
    assert res["two"]["rows"] == [[2, 3]] and res["fs"]["rows"] == [[7]], f
    for r in f["results"]:
        assert r["truncated"] is False and r["total_count"] == len(r["rows"]), r
    rev0 = f["revision"]
    # A write one member sees: one group delta listing every member in order.
    f = await run(b, "+e(2, 9)", id="w")
    assert f["type"] == "result" and f["id"] == "w", f
    d = await group_delta(a)
    assert d["subscription"] == "g" and d["generation"] == sub["generation"], d
    assert d["knowledge_graph"] == "grp_basic" and "id" not in d, d
    assert d["seq"] == 1 and d["revision"] > rev0, d
    assert [m["name"] for m in d["members"]] == ["edges", "one", "two", "fs"], d
    m = members(d)
    assert m["edges"]["unchanged"] is False and m["edges"]["inserted"] == [[2, 9]], d
    assert m["two"]["unchanged"] is False and m["two"]["inserted"] == [[2, 9]], d
    assert m["two"]["retracted"] == [] and m["two"]["columns"] == ["2", "Y"], d
    for name in ("one", "fs"):
        assert m[name]["unchanged"] is True, d
        assert m[name]["inserted"] == [] and m[name]["retracted"] == [], d
    await no_frame(a)
    # A write no member sees sends nothing.
    await run(b, "+other(1)")
    await no_frame(a)
    # One request changing two members (and the single subscription): one group delta
    # and one subscription_delta, at the same revision.
    await run(b, "-e(1, 2)\n+f(8)")
    got = {}
    for _ in range(2):
        f = await next_push(a, 10)
        got[f["type"]] = f
    d, s = got["subscription_group_delta"], got["subscription_delta"]
    assert d["seq"] == 2 and d["revision"] == s["revision"] > rev0, got
    m = members(d)
    assert m["edges"]["retracted"] == [[1, 2]] and m["one"]["retracted"] == [[1, 2]], d
    assert m["fs"]["inserted"] == [[8]] and m["two"]["unchanged"] is True, d
    assert s["inserted"] == [[8]], s
    # The subscriber's own write: its reply, then the delta.
    f = await run(a, "+e(1, 4)", id="own")
    assert f["type"] == "result" and f["id"] == "own", f
    d = await group_delta(a)
    assert d["seq"] == 3 and members(d)["one"]["inserted"] == [[1, 4]], d
    # .unsubscribe ends the group; the single subscription stays.
    f = await run(a, ".unsubscribe g")
    assert f["type"] == "result" and f["rows"] == [["Unsubscribed 'g'."]], f
    await run(b, "+e(1, 5)")
    await no_frame(a)
    await run(b, "+f(11)")
    f = await next_push(a, 10)
    assert f["type"] == "subscription_delta" and f["subscription"] == "single", f
    f = await run(a, ".unsubscribe g")
    assert f["type"] == "error" and f["code"] == "not_found", f
    # The same name again: a new generation, seq from 1.
    f = await a.call(subscribe("g", [("fs", "?f(X)")]))
    assert f["type"] == "snapshot" and f["subscribed"]["generation"] > sub["generation"], f
    await run(b, "+f(12)")
    got = [await next_push(a, 10) for _ in range(2)]
    d = [x for x in got if x["type"] == "subscription_group_delta"][0]
    assert d["seq"] == 1 and d["members"][0]["inserted"] == [[12]], got
    await still_answers(a)
    await still_answers(b)
    await a.ws.close()
    await b.ws.close()


async def t_group_errors(srv):
    a, b = await pair(srv, "grp_errors")
    await run(b, "+e[(1, 2)]")

    async def refused(frame, code, text):
        f = await a.call(frame)
        assert f["type"] == "error" and f["code"] == code and text in f["message"], (frame, f)
        if "id" in frame:
            assert f["id"] == frame["id"], f

    ok = [("x", "?e(X, Y)")]
    await refused(subscribe("bad/name", ok, id="n"), "validation", "name")
    await refused(subscribe("", ok), "validation", "name")
    await refused(subscribe("x" * 129, ok), "validation", "name")
    await refused(subscribe("g", []), "validation", "at least one query")
    await refused(subscribe("g", [("x", "?e(X, Y)"), ("x", "?e(X, 1)")]),
                  "validation", "names two queries 'x'")
    await refused(subscribe("g", [("", "?e(X, Y)")]), "validation", "empty name")
    await refused(subscribe("g", [("x", "e(X, Y)")]), "validation", "must start with '?'")
    await refused(subscribe("g", [("x", "+e(3, 4)")]), "validation", "must start with '?'")
    await refused(subscribe("g", [("x", "?e(X, Y)\n?e(Y, X)")]), "validation", "single query")
    await refused(subscribe("g", [("x", "?e(X, Y)"), ("bad", "?e(X, Y")]),
                  "validation", "Query 'bad'")
    await refused(subscribe("g", [("x", "?e(X, Y), limit(1)")]), "validation", "limit")
    await refused(subscribe("g", [("x", "?e(X, Y), limit(1, 1)")]), "validation", "limit")
    await refused(subscribe("g", [("x", "?e(X:desc, Y)")]), "validation", "sort")
    # A query whose view cannot be kept: the members before it do not stay subscribed.
    await run(b, "+q(1, 2)")
    await run(b, "+p(X, Y) <- q(X, Y)")
    await run(b, "+q(X, Y) <- p(X, Y), !e(X, Y)")
    await run(b, "+p(X, count<Y>) <- q(X, Y)")
    await refused(subscribe("g", [("x", "?e(X, Y)"), ("p", "?p(X, Y)")]),
                  "validation", "Query 'p': Cannot subscribe")
    # Malformed frames.
    await refused({"type": "subscribe", "queries": []}, "invalid_request", "subscription")
    await refused({"type": "subscribe", "subscription": "g"}, "invalid_request", "queries")
    await refused({"type": "subscribe", "subscription": "g", "queries": [{"name": "x"}]},
                  "invalid_request", "query")
    await refused({"type": "subscribe", "subscription": "g", "queries": {"x": "?e(X)"}},
                  "invalid_request", "queries")
    # A failed subscribe registered nothing: the name is free, no view stayed open.
    f = await run(a, ".unsubscribe g")
    assert f["type"] == "error" and f["code"] == "not_found", f
    # One name space with `.subscribe`, both ways.
    f = await run(a, ".subscribe s ?e(X, Y)")
    assert f["type"] == "result", f
    await refused(subscribe("s", ok, id="c1"), "conflict", "already exists")
    f = await a.call(subscribe("g", ok))
    assert f["type"] == "snapshot", f
    f = await run(a, ".subscribe g ?e(X, Y)")
    assert f["type"] == "error" and f["code"] == "conflict", f
    await refused(subscribe("g", ok), "conflict", "already exists")
    # A group counts once per member against the connection's 64 subscriptions.
    many = [("q%d" % i, "?e(%d, Y)" % i) for i in range(63)]
    await refused(subscribe("big", many), "validation", "Too many subscriptions")
    f = await a.call(subscribe("big", many[:62]))
    assert f["type"] == "snapshot" and len(f["results"]) == 62, f
    f = await run(a, ".subscribe one_more ?e(X, Y)")
    assert f["type"] == "error" and "Too many" in f["message"], f
    for name in ("big", "g", "s"):
        f = await run(a, ".unsubscribe %s" % name)
        assert f["type"] == "result", f
    await still_answers(a)
    await a.ws.close()
    await b.ws.close()


async def t_group_graph_switch_and_session(srv):
    a, b = await pair(srv, "grp_switch")
    await run(b, "+e[(1, 2)]")
    # Session facts and rules of the subscriber take no part.
    f = await run(a, "e(5, 5)")
    assert f["type"] == "result", f
    f = await run(a, "sr(X) <- e(X, Y)")
    assert f["type"] == "result", f
    f = await a.call(subscribe("g", [("e", "?e(X, Y)"), ("sr", "?sr(X)")]))
    assert f["type"] == "snapshot", f
    assert f["results"][0]["rows"] == [[1, 2]] and f["results"][1]["rows"] == [], f
    await run(a, "e(6, 6)")
    await no_frame(a)
    await run(b, "+e(3, 4)")
    d = await group_delta(a)
    assert members(d)["e"]["inserted"] == [[3, 4]] and members(d)["sr"]["unchanged"], d
    # Switching graph drops the group silently.
    f = await run(a, ".kg use default")
    assert f["type"] == "result", f
    await run(b, "+e(7, 8)")
    await no_frame(a)
    f = await run(a, ".unsubscribe g")
    assert f["type"] == "error" and f["code"] == "not_found", f
    # Closing a connection closes its groups' views.
    views0 = prometheus(srv)["inputlayer_subscription_views"]
    c = await connect(srv, kg="grp_switch")
    f = await c.call(subscribe("g", [("a", "?e(X, Y)"), ("b", "?e(Y, X)")]))
    assert f["type"] == "snapshot", f
    assert prometheus(srv)["inputlayer_subscription_views"] == views0 + 2
    await c.ws.close()
    for _ in range(100):
        if prometheus(srv)["inputlayer_subscription_views"] == views0:
            break
        await asyncio.sleep(0.05)
    assert prometheus(srv)["inputlayer_subscription_views"] == views0
    await still_answers(a)
    await still_answers(b)
    await a.ws.close()
    await b.ws.close()


async def t_group_member_failure(srv):
    """A rule change under which one member's view cannot be kept (unstratified rules):
    one subscription_error, nothing more while it lasts; when the rules are fixed, one
    delta per member relative to the last delivered result, including what changed
    meanwhile in the members that kept working."""
    a, b = await pair(srv, "grp_fail")
    await run(b, "+e[(1, 2), (2, 3)]")
    await run(b, "+q(1, 2)")
    await run(b, "+p(X, Y) <- q(X, Y)")
    f = await a.call(subscribe("g", [("p", "?p(X, Y)"), ("e", "?e(X, Y)")]))
    assert f["type"] == "snapshot" and f["results"][0]["rows"] == [[1, 2]], f
    await run(b, "+q(X, Y) <- p(X, Y), !e(X, Y)")
    await no_frame(a)
    await run(b, "+p(X, count<Y>) <- q(X, Y)")  # p and q now negate through a cycle
    f = await next_push(a, 10)
    assert f["type"] == "subscription_error" and f["subscription"] == "g", f
    assert "Query 'p'" in f["message"] and "id" not in f, f
    await run(b, "+e(7, 7)")  # member e changes while the group is held
    await no_frame(a)
    await run(b, ".rule drop q")
    d = await group_delta(a)
    assert d["seq"] == 1, d
    m = members(d)
    # p's last delivered result was {(1, 2)}; it is now {(1, 1), (1, 2)}.
    f = await run(b, "?p(X, Y)")
    assert sorted(f["rows"]) == [[1, 1], [1, 2]], f
    assert m["p"]["inserted"] == [[1, 1]] and m["p"]["retracted"] == [], d
    assert m["e"]["inserted"] == [[7, 7]], d
    await run(b, "+e(8, 8)")
    d = await group_delta(a)
    assert d["seq"] == 2 and members(d)["p"]["unchanged"], d
    await still_answers(a)
    await a.ws.close()
    await b.ws.close()


async def t_group_streamed(srv):
    """A snapshot over 1 MiB comes as snapshot_start, chunks and snapshot_end; a delta
    over 1 MiB as subscription_group_delta_start, chunks and _end."""
    a, b = await pair(srv, "grp_stream")
    n = 20000
    pad = "s" * 48
    for start in range(0, n, 5000):
        rows = ", ".join('("%s%d", %d)' % (pad, i, i) for i in range(start, start + 5000))
        f = await run(b, "+big[%s]" % rows)
        assert f["type"] == "result", f
    await run(b, "+small(1)")
    await a.send(subscribe("g", [("small", "?small(X)"), ("big", "?big(X, Y)")], id="s"))
    f = await next_push(a, 30)
    assert f["type"] == "snapshot_start" and f["id"] == "s", f
    assert f["subscribed"]["subscription"] == "g", f
    assert [(r["name"], r["row_count"], r["total_count"]) for r in f["results"]] == \
        [("small", 1, 1), ("big", n, n)], f
    assert f["results"][1]["columns"] == ["X", "Y"], f
    rows = {0: [], 1: []}
    index = 0
    while True:
        f = await next_push(a, 30)
        assert f.get("id") == "s", f
        if f["type"] == "snapshot_end":
            assert f["chunk_count"] == index, f
            break
        assert f["type"] == "snapshot_chunk" and f["chunk_index"] == index, f
        assert 0 < len(f["rows"]) <= 500, len(f["rows"])
        rows[f["result"]] += f["rows"]
        index += 1
    assert rows[0] == [[1]] and len(rows[1]) == n, (rows[0], len(rows[1]))
    assert {r[1] for r in rows[1]} == set(range(n))
    # One write retracting every row of big: a streamed delta.
    f = await run(b, "-big(X, Y) <- big(X, Y)")
    assert f["type"] == "result", f
    f = await next_push(a, 30)
    assert f["type"] == "subscription_group_delta_start", f
    assert f["seq"] == 1 and f["knowledge_graph"] == "grp_stream", f
    assert [(m["name"], m["unchanged"], m["inserted_count"], m["retracted_count"])
            for m in f["members"]] == [("small", True, 0, 0), ("big", False, 0, n)], f
    retracted, index = [], 0
    while True:
        f = await next_push(a, 30)
        if f["type"] == "subscription_group_delta_end":
            assert f["chunk_count"] == index and f["seq"] == 1, f
            break
        assert f["type"] == "subscription_group_delta_chunk", f
        assert f["chunk_index"] == index and f["member"] == 1 and f["inserted"] == [], f
        assert 0 < len(f["retracted"]) <= 500
        retracted += f["retracted"]
        index += 1
    assert sorted(r[1] for r in retracted) == list(range(n))
    # A small change afterwards is one frame again.
    await run(b, "+small(2)")
    d = await group_delta(a)
    assert d["seq"] == 2 and members(d)["small"]["inserted"] == [[2]], d
    await still_answers(a)
    await a.ws.close()
    await b.ws.close()


TESTS = [t_group_snapshot_and_deltas, t_group_errors, t_group_graph_switch_and_session,
         t_group_member_failure, t_group_streamed]


async def t_group_max_result_rows(binary):
    """A member over max_result_rows fails the whole subscribe: a group snapshot is never
    truncated, and nothing is registered."""
    with OwnServer(binary, ["--set", "storage.performance.max_result_rows=3"]) as srv:
        a = await connect(srv)
        await run(a, "+e[(1, 1), (1, 2), (1, 3), (2, 1)]")
        f = await a.call(subscribe("g", [("two", "?e(2, Y)"), ("all", "?e(X, Y)")], id="s"))
        assert f["type"] == "error" and f["id"] == "s", f
        assert "Query 'all'" in f["message"] and "max_result_rows" in f["message"], f
        f = await run(a, ".unsubscribe g")
        assert f["type"] == "error" and f["code"] == "not_found", f
        assert prometheus(srv)["inputlayer_subscription_views"] == 0
        f = await a.call(subscribe("g", [("two", "?e(2, Y)"), ("one", "?e(1, Y)")]))
        assert f["type"] == "snapshot", f
        assert [r["total_count"] for r in f["results"]] == [1, 3], f
        assert not any(r["truncated"] for r in f["results"]), f
        await still_answers(a)
        await a.ws.close()


async def t_group_views_beside(binary):
    """A group's new views are computed on one pin of the graph with the engine free:
    another connection's read and write answer before the snapshot, which includes that
    write in every member, at one revision; and a query whose view cannot be opened
    refuses the whole group, leaving no view behind."""
    from subs import COSTLY
    args = NO_MESSAGE_RATE + ["--set", "admission.compute_permits=2"]
    with OwnServer(binary, args) as srv:
        a, b = await pair(srv, "grp_beside")
        edges = ", ".join("(%d, %d)" % (i, (i * 7 + 3) % 60) for i in range(60))
        assert (await run(a, "+edge[%s]" % edges))["errors"] == []
        queries = [("big", COSTLY), ("from59", "?edge(59, Y)")]
        await a.ws.send(json.dumps(subscribe("g", queries, id="s")))
        await asyncio.sleep(0.3)
        task = asyncio.ensure_future(a.recv(timeout=300))
        first = True
        for p in ["?edge(1, Y)", "+edge(59, 0)"]:
            f = await run(b, p)
            assert f["type"] == "result" and not f["errors"], f
            first = first and not task.done()
        f = await task
        assert f["type"] == "snapshot" and f["id"] == "s", f.get("message")
        assert first, "a read or a write waited for the group's views"
        res = members({"members": f["results"]})
        assert sorted(res["from59"]["rows"]) == [[59, 0], [59, 56]], res["from59"]
        q = await run(b, COSTLY)
        assert sorted(res["big"]["rows"]) == sorted(q["rows"]) and len(q["rows"]) == 122
        assert (await run(b, "-edge(59, 0)"))["errors"] == []
        d = await group_delta(a)
        m = members(d)
        assert len(m["big"]["retracted"]) == 3 and m["from59"]["retracted"] == [[59, 0]], d
        # refused as a whole: the first member's new view goes too
        f = await a.call(subscribe("h", [("ok", "?edge(X, 1)"), ("bad", "?edge(X, Y), Z > 1")]))
        assert f["type"] == "error" and "Query 'bad'" in f["message"], f
        assert prometheus(srv)["inputlayer_subscription_views"] == 2
        await still_answers(a)
        await still_answers(b)
        await a.ws.close()
        await b.ws.close()


OWN_SERVER_TESTS = [t_group_max_result_rows, t_group_views_beside]
