"""Reads beside writes (docs/server.md, "Reads beside writes"): a read on the pool pins its
session's graph and evaluates without the engine lock, so a long query holds up neither
another connection's reads nor its writes; the long query answers as of the revision it
pinned, and a graph dropped under it neither crashes it nor leaks its session state.

Each test sees the order of replies, never a time: while one connection's long query runs,
another connection's query and insert are answered before it. With every read holding the
engine lock, they would be answered after it."""

import asyncio
import os

from common import NO_MESSAGE_RATE, OwnServer, connect, prometheus, run

# A join of four edge scans over 60 edges with an arithmetic filter: 6.5 million
# combinations and 119 rows, about a second on a release build, several under a sanitizer.
EDGES = 60
LONG = ("?edge(A, B), edge(C, D), edge(E, F), edge(G, H), A < 30, "
        "A + C + E + G = B + D + F + H + 150")


def load_edges(n):
    return "+edge[" + ", ".join("(%d, %d)" % (i, (i * 7 + 3) % n) for i in range(n)) + "]"


async def long_query_beside(c_long, c_other, other_programs):
    """Sends the long query on c_long, then each program on c_other in turn; returns the
    long query's reply, the others' replies, and whether every other reply came first."""
    await c_long.send({"type": "execute", "program": LONG, "id": "long"})
    # the long query goes to the pool (inline it would overrun the 1 ms budget first)
    await asyncio.sleep(0.3)
    long_task = asyncio.ensure_future(c_long.recv(timeout=300))
    replies = []
    first = True
    for p in other_programs:
        replies.append(await run(c_other, p))
        first = first and not long_task.done()
    return await long_task, replies, first


async def t_reads_and_writes_beside_a_long_query(binary):
    args = NO_MESSAGE_RATE + ["--set", "admission.compute_permits=2"]
    with OwnServer(binary, args=args) as srv:
        a, b = await connect(srv), await connect(srv)
        f = await run(a, load_edges(EDGES))
        assert f["type"] == "result" and not f["errors"], f
        f = await run(a, LONG)
        assert f["type"] == "result" and len(f["rows"]) == 119, (f["type"], len(f["rows"]))
        rows = f["rows"]
        # the same query again: its program is known slow and goes to the pool directly
        long_reply, replies, first = await long_query_beside(
            a, b, ["?edge(1, Y)", "+edge(1, 31)", "?edge(1, Y)", "-edge(1, 31)",
                   "?edge(1, Y)"])
        for f in replies:
            assert f["type"] == "result" and not f["errors"], f
        assert [r["rows"] for r in replies[0::2]] == [[[1, 10]], [[1, 10], [1, 31]], [[1, 10]]]
        assert first, "a read or a write waited for the long query"
        # the long query saw the revision it pinned, before the insert
        assert long_reply["type"] == "result" and long_reply["rows"] == rows, long_reply["type"]
        await a.ws.close()
        await b.ws.close()


async def t_graph_dropped_under_a_pinned_read(binary):
    args = NO_MESSAGE_RATE + ["--set", "admission.compute_permits=2"]
    with OwnServer(binary, args=args) as srv:
        a, b = await connect(srv), await connect(srv)
        for p in [".kg create pinned_g", load_edges(EDGES)]:
            f = await run(a, p)
            assert f["type"] == "result" and not f["errors"], f
        first = await run(a, LONG)
        assert first["type"] == "result", first
        long_reply, replies, before = await long_query_beside(
            a, b, [".kg drop pinned_g", ".kg list"])
        assert replies[0]["type"] == "result" and not replies[0]["errors"], replies[0]
        assert before, "the drop waited for the long query"
        assert long_reply["type"] == "result" and long_reply["rows"] == first["rows"]
        # the connection was moved to `default`, as any session on a dropped graph
        f = await run(a, "?edge(X, Y)")
        assert f["type"] == "result" and f["rows"] == [], f
        await a.ws.close()
        await b.ws.close()


# About half a millisecond on a release build: dear enough to share the pool.
MEDIUM = "?edge(A, B), edge(C, D), edge(E, F), A < 1, A + C + E = B + D + F"


async def t_reads_from_several_connections_share_the_pool(binary):
    """While several connections read, a read that cost over 0.1 ms last time goes to the
    pool, where it pins its session: the workers evaluate side by side instead of every
    read waiting for the engine lock (inputlayer_reads_shared_total,
    inputlayer_reads_pinned_total). A lone connection's reads stay inline, and so does
    everything on a single CPU. Every answer is the same."""
    if len(os.sched_getaffinity(0)) < 2:
        print("     one CPU: reads are not shared (nothing to gain); skipped")
        return
    args = NO_MESSAGE_RATE + ["--set", "http.rate_limit.per_ip_max_rps=0"]
    with OwnServer(binary, args=args) as srv:
        conns = [await connect(srv) for _ in range(3)]
        f = await run(conns[0], load_edges(EDGES))
        assert f["type"] == "result" and not f["errors"], f
        expected = (await run(conns[0], MEDIUM))["rows"]
        for _ in range(5):
            f = await run(conns[0], MEDIUM)
            assert f["rows"] == expected
        alone = prometheus(srv)
        assert alone["inputlayer_reads_shared_total"] == 0, alone

        async def reads(c):
            for _ in range(15):
                f = await run(c, MEDIUM)
                assert f["type"] == "result" and f["rows"] == expected, f.get("type")
        await asyncio.gather(*(reads(c) for c in conns))
        m = prometheus(srv)
        assert m["inputlayer_reads_shared_total"] >= 1, m["inputlayer_reads_shared_total"]
        assert m["inputlayer_reads_pinned_total"] >= m["inputlayer_reads_shared_total"], m
        for c in conns:
            await c.ws.close()


TESTS = [t_reads_and_writes_beside_a_long_query, t_graph_dropped_under_a_pinned_read,
         t_reads_from_several_connections_share_the_pool]
