"""Protocol tests of standing queries (`.subscribe` / `.unsubscribe`, docs/server.md,
"Standing queries"): the snapshot with `subscribed`, one `subscription_delta` per change
from any connection, retraction on delete, a diamond keeping its row while one derivation
remains, unsubscribe, errors, dropping on `.kg use` and on close. Each test runs in a
knowledge graph of its own on the shared server and ends with the server answering."""

import asyncio
import json

from common import connect, run, still_answers


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


TESTS = [t_subs_snapshot_and_deltas, t_subs_diamond, t_subs_unsubscribe_and_errors,
         t_subs_close_frees]
