"""Protocol tests of snapshot reads (the v5 `read` frame, docs/server.md "Snapshot
reads"): named queries answered by one `snapshot` in request order at one revision, the
revision agreeing with standing queries and moving only with writes to the graph, session
facts and rules left out, every validation error (the read fails as a whole), the
`max_result_rows` cap flagged `truncated`, a large snapshot streamed as
`snapshot_start/_chunk/_end`, deadlines and cancel, reads pipelined beside other requests,
and read access. TESTS run on the shared server of run.py, each in a knowledge graph of
its own; OWN_TESTS start servers of their own. Each test ends with the server answering."""

import asyncio
import time

from common import OwnServer, connect, login, run, still_answers

NAMED_RESULT = {"name", "columns", "rows", "total_count", "truncated"}


def q(**named):
    """The `queries` of a read, in the order given."""
    return [{"name": n, "query": text} for n, text in named.items()]


async def read(c, queries, id=None, **extra):
    frame = {"type": "read", "queries": queries}
    if id:
        frame["id"] = id
    frame.update(extra)
    return await c.call(frame)


async def graph(srv, kg):
    """A connection on a fresh knowledge graph `kg`."""
    a = await connect(srv)
    f = await run(a, ".kg create %s" % kg)
    assert f["type"] == "result", f
    return a


def snapshot(f, kg):
    assert f["type"] == "snapshot" and f["knowledge_graph"] == kg, f
    assert isinstance(f["revision"], int) and isinstance(f["execution_time_ms"], int), f
    for r in f["results"]:
        assert set(r) == NAMED_RESULT, r
    return {r["name"]: r for r in f["results"]}


async def t_read_snapshot(srv):
    a = await graph(srv, "read_basic")
    await run(a, "+edge[(1, 2), (2, 3), (3, 4)]")
    await run(a, "+path(X, Y) <- edge(X, Y)\n+path(X, Z) <- path(X, Y), edge(Y, Z)")
    f = await read(a, q(paths="?path(1, Y)", edges="?edge(X, Y)", none="?nothing(X)",
                        top="?edge(X:desc, Y), limit(2)"), id="r1")
    assert f["id"] == "r1", f
    assert [r["name"] for r in f["results"]] == ["paths", "edges", "none", "top"], f
    res = snapshot(f, "read_basic")
    assert res["paths"]["columns"] == ["1", "Y"], f
    assert res["paths"]["rows"] == [[1, 2], [1, 3], [1, 4]], f
    assert res["edges"] == {"name": "edges", "columns": ["X", "Y"],
                            "rows": [[1, 2], [2, 3], [3, 4]], "total_count": 3,
                            "truncated": False}, f
    # An empty result has no columns; rows keep the engine's order (the sort annotation).
    assert res["none"] == {"name": "none", "columns": [], "rows": [], "total_count": 0,
                           "truncated": False}, f
    assert res["top"]["rows"] == [[3, 4], [2, 3]] and res["top"]["total_count"] == 2, f
    # Without an id none is echoed; the same query under two names is two results.
    f = await read(a, q(x="?edge(1, Y)", y="?edge(1, Y)"))
    assert "id" not in f and [r["rows"] for r in f["results"]] == [[[1, 2]], [[1, 2]]], f
    # A read after a write of the same connection sees it (a write is a barrier).
    await a.send({"type": "execute", "id": "w", "program": "+edge(4, 5)"})
    await a.send({"type": "read", "id": "r2", "queries": q(p="?path(1, Y)")})
    f = await a.recv()
    assert f["id"] == "w" and f["type"] == "result", f
    f = await a.recv()
    assert f["id"] == "r2" and f["results"][0]["rows"] == [[1, 2], [1, 3], [1, 4], [1, 5]], f
    await still_answers(a)
    await a.ws.close()


async def t_read_revisions(srv):
    a = await graph(srv, "read_rev")
    b = await connect(srv, kg="read_rev")
    r0 = (await read(a, q(e="?e(X)")))["revision"]
    # No write, no new revision; a subscription's snapshot names the same one.
    assert (await read(a, q(e="?e(X)")))["revision"] == r0
    f = await run(a, ".subscribe s ?e(X)")
    assert f["subscribed"]["revision"] == r0, f
    # A write moves it, and the delta and the next read agree on where to.
    await run(b, "+e(1)")
    d = await a.recv(timeout=10)
    assert d["type"] == "subscription_delta" and d["inserted"] == [[1]], d
    f = await read(a, q(e="?e(X)"))
    assert f["revision"] == d["revision"] > r0 and f["results"][0]["rows"] == [[1]], (f, d)
    r1 = f["revision"]
    # A write that changes nothing, a session fact and writes to another graph leave it.
    await run(b, "+e(1)")
    await run(b, "e(7)")
    o = await graph(srv, "read_rev_other")
    await run(o, "+x(1)")
    assert (await read(a, q(e="?e(X)")))["revision"] == r1
    # Reads pipelined while another connection writes: revisions never go back, and a
    # read's results all belong to its revision (here: the two queries agree).
    f = await run(a, ".unsubscribe s")
    assert f["type"] == "result", f
    writer = asyncio.ensure_future(writes(srv, "read_rev", 40))
    revs = []
    for round_ in range(8):
        for i in range(6):
            await a.send({"type": "read", "id": "p%d" % i,
                          "queries": q(first="?w(X)", second="?w(X), X >= 0")})
        for i in range(6):
            f = await a.recv()
            assert f["type"] == "snapshot" and f["id"] == "p%d" % i, f
            first, second = f["results"]
            assert first["rows"] == second["rows"], f
            revs.append(f["revision"])
    await writer
    assert revs == sorted(revs), revs
    f = await read(a, q(w="?w(X)"))
    assert f["revision"] >= revs[-1] and len(f["results"][0]["rows"]) == 40, f
    await still_answers(a)
    for c in (a, b, o):
        await c.ws.close()


async def writes(srv, kg, n):
    c = await connect(srv, kg=kg)
    for i in range(n):
        f = await run(c, "+w(%d)" % i)
        assert f["type"] == "result", f
    await c.ws.close()


async def t_read_session_invisible(srv):
    a = await graph(srv, "read_session")
    await run(a, "+p[(1), (2)]")
    await run(a, "+both(X) <- p(X)")
    await run(a, "p(99)")
    await run(a, "mine(X) <- p(X)")
    f = await run(a, "?both(X)")
    assert f["rows"] == [[1], [2], [99]], f  # execute sees the session's facts
    f = await read(a, q(p="?p(X)", both="?both(X)", mine="?mine(X)"))
    res = snapshot(f, "read_session")
    assert res["p"]["rows"] == [[1], [2]] and res["both"]["rows"] == [[1], [2]], f
    assert res["mine"]["rows"] == [] and res["mine"]["columns"] == [], f
    # The session is untouched by the read.
    f = await run(a, "?mine(X)")
    assert f["rows"] == [[1], [2], [99]], f
    await still_answers(a)
    await a.ws.close()


async def t_read_validation(srv):
    a = await graph(srv, "read_valid")
    await run(a, "+v(1)")

    async def refused(queries, *parts, code="validation"):
        f = await read(a, queries, id="bad")
        assert f["type"] == "error" and f["code"] == code and f["id"] == "bad", f
        for part in parts:
            assert part in f["message"], (part, f)

    await refused([], "at least one query")
    await refused(q(ok="?v(X)", broken="?v(X Y)"), "Query 'broken'")
    await refused(q(ok="?v(X)", open_="?v(X"), "Query 'open_'")
    await refused(q(w="+v(2)"), "Query 'w'", "must start with '?'")
    await refused(q(blank="   "), "must start with '?'")
    await refused(q(two="?v(X)\n?v(Y)"), "Query 'two'", "single query")
    await refused([{"name": "d", "query": "?v(X)"}, {"name": "d", "query": "?v(Y)"}],
                  "names two queries 'd'")
    await refused([{"name": "", "query": "?v(X)"}], "empty name")
    many = [{"name": "n%d" % i, "query": "?v(X)"} for i in range(3000)]
    await refused(many + [{"name": "n5", "query": "?v(Y)"}, {"name": "n1", "query": "?v(Y)"}],
                  "names two queries 'n5'")
    f = await read(a, many[:500])
    assert [r["name"] for r in f["results"]] == ["n%d" % i for i in range(500)], f
    # Malformed frames are invalid requests.
    for frame in ({"type": "read", "id": "bad"},
                  {"type": "read", "id": "bad", "queries": {"a": "?v(X)"}},
                  {"type": "read", "id": "bad", "queries": ["?v(X)"]},
                  {"type": "read", "id": "bad", "queries": [{"name": "a"}]},
                  {"type": "read", "id": "bad", "queries": [{"name": 1, "query": "?v(X)"}]},
                  {"type": "read", "id": "bad", "queries": q(a="?v(X)"), "timeout_ms": -1}):
        f = await a.call(frame)
        assert f["type"] == "error" and f["code"] == "invalid_request", (frame, f)
        assert f["id"] == "bad" and f["message"].startswith("Invalid message format"), f
    # The write in a refused read never ran; the graph is as it was.
    f = await read(a, q(v="?v(X)"))
    assert f["results"][0]["rows"] == [[1]], f
    await still_answers(a)
    await a.ws.close()


async def t_read_streamed(srv):
    a = await graph(srv, "read_stream")
    pad = "y" * 100
    for k in range(4):
        rows = ", ".join('(%d, "%s")' % (k * 5000 + i, pad) for i in range(5000))
        f = await run(a, "+big[%s]" % rows)
        assert f["type"] == "result", f
    await run(a, "+small[(1), (2), (3)]")
    await a.send({"type": "read", "id": "s",
                  "queries": q(small="?small(X)", big="?big(X, Y)", none="?none(X)",
                               tail="?big(X, Y), X >= 19990")})
    f = await a.recv()
    assert f["type"] == "snapshot_start" and f["id"] == "s", f
    assert f["knowledge_graph"] == "read_stream" and isinstance(f["revision"], int), f
    assert f["results"] == [
        {"name": "small", "columns": ["X"], "row_count": 3, "total_count": 3, "truncated": False},
        {"name": "big", "columns": ["X", "Y"], "row_count": 20000, "total_count": 20000,
         "truncated": False},
        {"name": "none", "columns": [], "row_count": 0, "total_count": 0, "truncated": False},
        {"name": "tail", "columns": ["X", "Y"], "row_count": 10, "total_count": 10,
         "truncated": False}], f
    got = {0: [], 1: [], 2: [], 3: []}
    order, index = [], 0
    while True:
        f = await a.recv()
        assert f["id"] == "s", f
        if f["type"] == "snapshot_end":
            break
        assert f["type"] == "snapshot_chunk" and f["chunk_index"] == index, f
        assert set(f) == {"type", "id", "result", "chunk_index", "rows"}, f
        assert 0 < len(f["rows"]) <= 500, len(f["rows"])
        got[f["result"]].extend(f["rows"])
        order.append(f["result"])
        index += 1
    assert f == {"type": "snapshot_end", "id": "s", "chunk_count": index}, f
    assert order == sorted(order) and 2 not in order, order  # results in order, none empty
    assert got[0] == [[1], [2], [3]], got[0]
    assert [r[0] for r in got[1]] == list(range(20000)) and got[1][0][1] == pad
    assert [r[0] for r in got[3]] == list(range(19990, 20000)), got[3]
    await still_answers(a)
    await a.ws.close()


async def t_read_pipelined(srv):
    a = await graph(srv, "read_pipe")
    await run(a, "+n[(1), (2), (3)]")
    n = 60
    for i in range(n):
        kind = i % 4
        if kind == 0:
            await a.send({"type": "read", "id": "x%d" % i, "queries": q(n="?n(X)", one="?n(1)")})
        elif kind == 1:
            await a.send({"type": "execute", "id": "x%d" % i, "program": "?n(X)"})
        elif kind == 2:
            await a.send({"type": "read", "id": "x%d" % i, "queries": q(two="?n(2)")})
        else:
            await a.send({"type": "ping", "id": "x%d" % i})
    for i in range(n):
        f = await a.recv()
        assert f["id"] == "x%d" % i, (i, f)
        kind = i % 4
        if kind == 0:
            assert f["type"] == "snapshot", f
            assert [r["rows"] for r in f["results"]] == [[[1], [2], [3]], [[1]]], f
        elif kind == 1:
            assert f["type"] == "result" and f["rows"] == [[1], [2], [3]], f
        elif kind == 2:
            assert f["type"] == "snapshot" and f["results"][0]["rows"] == [[2]], f
        else:
            assert f["type"] == "pong", f
    await still_answers(a)
    await a.ws.close()


async def t_read_access(srv):
    a = await graph(srv, "read_acl")
    await run(a, "+secret[(1), (2)]")
    f = await run(a, ".user create rita pw-rita-1 viewer")
    assert f["type"] == "result", f
    f = await run(a, ".kg acl grant read_acl rita viewer")
    assert f["type"] == "result", f
    r, f = await login(srv, "rita", "pw-rita-1", kg="read_acl")
    assert f["type"] == "authenticated", f
    # A viewer may read.
    f = await read(r, q(s="?secret(X)"), id="ok")
    assert f["type"] == "snapshot" and f["results"][0]["rows"] == [[1], [2]], f
    # Without read access on the graph (revoked while connected) the read is refused.
    f = await run(a, ".kg acl revoke read_acl rita")
    assert f["type"] == "result", f
    f = await read(r, q(s="?secret(X)"), id="no")
    assert f == {"type": "error", "id": "no", "message": "Access denied",
                 "code": "access_denied"}, f
    await still_answers(r)
    await run(a, ".user drop rita")
    await a.ws.close()


async def t_integer_rows_exact(srv):
    """Rows of integers come back as the numbers they are, through the server's one-pass
    encoder of small integers (src/server/srv_rows.c: two digits per division) and its
    general path (integers too large to sit in the value itself), by execute and read."""
    a = await graph(srv, "read_ints")
    values = [0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 1001, 65535, 123456789,
              2 ** 47 - 1, 2 ** 47, 2 ** 62, 2 ** 63 - 1, -1, -9, -10, -99, -100, -101,
              -12345, -2 ** 47, -2 ** 47 - 1, -2 ** 63]
    rows = sorted([v, i] for i, v in enumerate(values))
    await run(a, "+ints[" + ", ".join("(%d, %d)" % (v, i) for v, i in rows) + "]")
    f = await run(a, "?ints(V, I)")
    assert sorted(f["rows"]) == rows, f
    f = await read(a, q(ints="?ints(V, I)"))
    assert sorted(snapshot(f, "read_ints")["ints"]["rows"]) == rows, f
    await a.ws.close()


TESTS = [t_read_snapshot, t_read_revisions, t_read_session_invisible, t_read_validation,
         t_read_streamed, t_read_pipelined, t_read_access, t_integer_rows_exact]

# ---- on servers of their own ----------------------------------------------------------

# A recursion without a fixpoint, and a long join in constant memory (guards.py).
NAT = "+nat(0)\n+nat(Y) <- nat(X), Y = X + 1"
SLOW = "?a(X), b(Y), c(Z), X = Y + Z + 1000000"


async def t_read_truncated(binary):
    with OwnServer(binary, ["--set", "storage.performance.max_result_rows=3"]) as srv:
        c = await connect(srv)
        await run(c, "+n[%s]" % ", ".join("(%d)" % i for i in range(10)))
        f = await read(c, q(all="?n(X)", desc="?n(X:desc)", two="?n(X), limit(2)"))
        res = snapshot(f, "default")
        assert res["all"] == {"name": "all", "columns": ["X"], "rows": [[0], [1], [2]],
                              "total_count": 10, "truncated": True}, f
        assert res["desc"]["rows"] == [[9], [8], [7]] and res["desc"]["truncated"], f
        assert res["two"]["rows"] == [[0], [1]] and not res["two"]["truncated"], f
        assert res["two"]["total_count"] == 2, f
        f = await run(c, "?n(X)")
        assert f["row_count"] == 3 and f["total_count"] == 10 and f["truncated"], f
        await still_answers(c)
        await c.ws.close()


async def load_abc(c, n=2000):
    for rel in "abc":
        f = await run(c, "+%s[%s]" % (rel, ", ".join("(%d)" % i for i in range(n))))
        assert f["type"] == "result", f


async def t_read_deadline_and_cancel(binary):
    with OwnServer(binary) as srv:
        c = await connect(srv)
        f = await run(c, NAT)
        assert f["type"] == "result" and f["errors"] == [], f
        await load_abc(c)
        # The deadline stops every query of the read: no snapshot, the deadline's error.
        t0 = time.monotonic()
        f = await read(c, q(quick="?a(1)", endless="?nat(X)"), id="d", timeout_ms=300)
        took = time.monotonic() - t0
        assert f["type"] == "error" and f["code"] == "deadline_exceeded" and f["id"] == "d", f
        assert f["message"] == ("Request deadline exceeded before it began committing; "
                                "nothing was applied"), f
        assert 0.25 <= took < 10, took
        await still_answers(c)
        # A running read is cancelled: `cancelled`, then the ack.
        await c.send({"type": "read", "id": "long", "queries": q(quick="?a(1)", slow=SLOW)})
        await asyncio.sleep(0.3)
        t0 = time.monotonic()
        await c.send({"type": "cancel", "id": "k1", "target": "long"})
        f = await c.recv()
        assert f["type"] == "error" and f["code"] == "cancelled" and f["id"] == "long", f
        f = await c.recv()
        assert f == {"type": "cancel_ack", "id": "k1", "target": "long",
                     "outcome": "cancelled"}, f
        assert time.monotonic() - t0 < 5, time.monotonic() - t0
        # A read waiting behind another read is cancelled where it waits; the one running
        # goes on until its own cancel.
        await c.send({"type": "read", "id": "r1", "queries": q(slow=SLOW)})
        await c.send({"type": "read", "id": "r2", "queries": q(a="?a(1)")})
        await asyncio.sleep(0.2)
        await c.send({"type": "cancel", "id": "k2", "target": "r2"})
        await c.send({"type": "cancel", "id": "k3", "target": "r1"})
        got = [await c.recv() for _ in range(4)]
        assert [g["id"] for g in got] == ["r1", "r2", "k2", "k3"], got
        assert got[0]["code"] == "cancelled" and got[1]["code"] == "cancelled", got
        assert got[2]["outcome"] == "cancelled" and got[3]["outcome"] == "cancelled", got
        # A finished read is no longer a target.
        f = await read(c, q(a="?a(1)"), id="done")
        assert f["type"] == "snapshot", f
        f = await c.call({"type": "cancel", "id": "k4", "target": "done"})
        assert f["outcome"] == "not_found", f
        await still_answers(c)
        await c.ws.close()


OWN_TESTS = [t_read_truncated, t_read_deadline_and_cancel]
