"""Reads beside writes (docs/server.md, "Reads beside writes"): a read on the pool pins its
session's graph and evaluates without the engine lock, so a long query holds up neither
another connection's reads nor its writes; the long query answers as of the revision it
pinned, and a graph dropped under it neither crashes it nor leaks its session state.

Each test sees the order of replies, never a time: while one connection's long query runs,
another connection's query and insert are answered before it. With every read holding the
engine lock, they would be answered after it."""

import asyncio
import json
import os

from common import NO_MESSAGE_RATE, OwnServer, connect, is_sanitized, prometheus, run

# A join of four edge scans over 60 edges with an arithmetic filter: 6.5 million
# combinations and 119 rows, about a second on a release build, several under a sanitizer.
EDGES = 60
LONG = ("?edge(A, B), edge(C, D), edge(E, F), edge(G, H), A < 30, "
        "A + C + E + G = B + D + F + H + 150")


def load_edges(n):
    return "+edge[" + ", ".join("(%d, %d)" % (i, (i * 7 + 3) % n) for i in range(n)) + "]"


async def two_with_edges(srv):
    """Two connections, the edges loaded through the first."""
    a, b = await connect(srv), await connect(srv)
    f = await run(a, load_edges(EDGES))
    assert f["type"] == "result" and not f["errors"], f
    return a, b


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
        a, b = await two_with_edges(srv)
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


async def t_snapshot_too_old(binary):
    """Old versions kept for pinned reads are bounded
    (storage.performance.max_snapshot_memory_bytes): writes that replace more than that
    while a long query reads its pin stop the query with snapshot_too_old, nothing
    applied; what it kept is freed, the writes were never held up, and the query asked
    again reads the current revision."""
    args = NO_MESSAGE_RATE + ["--set", "admission.compute_permits=2",
                              "--set", "storage.performance.max_snapshot_memory_bytes=65536"]
    with OwnServer(binary, args=args) as srv:
        a, b = await connect(srv), await connect(srv)
        bigs = ["+big[" + ", ".join("(%d)" % (k * 10000 + i) for i in range(10000)) + "]"
                for k in range(2)]
        for p in [load_edges(EDGES)] + bigs:
            f = await run(a, p)
            assert f["type"] == "result" and not f["errors"], f
        first = await run(a, LONG)
        assert first["type"] == "result", first
        # 20,000 rows deleted while the long query reads them: some 300 KB of nodes
        # that only its pin still reaches
        # (the delete runs while the query does: it is what stops it)
        stopped, replies, _ = await long_query_beside(a, b, ["-big(X) <- big(X)", "?big(X)"])
        assert replies[0]["type"] == "result" and not replies[0]["errors"], replies[0]
        assert replies[1]["rows"] == [], replies[1]
        assert stopped["type"] == "error" and stopped["code"] == "snapshot_too_old", stopped
        assert "max_snapshot_memory_bytes" in stopped["message"], stopped
        m = prometheus(srv)
        assert m['inputlayer_requests_stopped_total{guard="snapshot_too_old"}'] == 1, m
        assert m["inputlayer_snapshot_memory_bytes"] == 0, m["inputlayer_snapshot_memory_bytes"]
        again = await run(a, LONG)
        assert again["type"] == "result" and again["rows"] == first["rows"], again["type"]
        await a.ws.close()
        await b.ws.close()


# A conditional delete whose body costs about twice LONG and matches nothing: a write that
# holds the engine lock that long and changes nothing.
LONG_WRITE = ("-edge(A, B) <- edge(A, B), edge(C, D), edge(E, F), edge(G, H), A < 60, "
              "A + C + E + G = B + D + F + H + 100000")


async def t_pinned_read_ends_during_a_long_write(binary):
    """A pinned read that ends while a long write holds the engine lock answers at once:
    its unpin needs no lock (docs/engine.md, "Concurrency"). With the unpin under the lock,
    its reply would come after the write's."""
    if is_sanitized(binary):
        # an order of replies under load, on the normal build; under the sanitizers the
        # same paths run in test_pin (ASan) and the threads test (TSan)
        return
    args = NO_MESSAGE_RATE + ["--set", "admission.compute_permits=2"]
    with OwnServer(binary, args=args) as srv:
        a, b = await two_with_edges(srv)
        first = await run(a, LONG)
        assert first["type"] == "result", first
        await a.send({"type": "execute", "program": LONG, "id": "long"})
        await asyncio.sleep(0.2)  # the read pins first
        await b.send({"type": "execute", "program": LONG_WRITE, "id": "write"})
        read = asyncio.ensure_future(a.recv(timeout=600))
        write = asyncio.ensure_future(b.recv(timeout=600))
        done, _ = await asyncio.wait({read, write}, return_when=asyncio.FIRST_COMPLETED)
        assert read in done and write not in done, "the read's reply waited for the write"
        assert read.result()["type"] == "result" and read.result()["rows"] == first["rows"]
        f = await write
        assert f["type"] == "result" and not f["errors"], f
        f = await run(a, "?edge(1, Y)")
        assert f["rows"] == [[1, 10]], f
        await a.ws.close()
        await b.ws.close()


async def read_during_long_write(a, b, wait):
    """Sends on `a` a write that deletes the edges of LONG's rows, with twice its work, and
    `wait` seconds into it reads every edge on `b`: the read must answer first, with every
    edge (the revision before the write), and then the write."""
    await a.send({"type": "execute", "id": "write", "program":
                  LONG_WRITE.replace("100000", "150")})
    write = asyncio.ensure_future(a.recv(timeout=600))
    await asyncio.sleep(wait)
    read = asyncio.ensure_future(run(b, "?edge(X, Y)"))
    done, _ = await asyncio.wait({read, write}, return_when=asyncio.FIRST_COMPLETED)
    assert read in done and write not in done, "the read waited for the write"
    assert len(read.result()["rows"]) == EDGES, read.result()
    f = await write
    assert f["type"] == "result" and not f["errors"], f


async def t_read_beside_a_long_write(binary):
    """A read that arrives while a long write holds the engine lock answers at once, as of
    the revision before the write: the write published it when it began, pinned reads
    having run lately (inputlayer_reads_published_total). With every read waiting for the
    lock, its reply would come after the write's."""
    if is_sanitized(binary):
        # an order of replies under load, on the normal build; under the sanitizers the
        # same paths run in test_pin (ASan) and the threads test (TSan)
        return
    args = NO_MESSAGE_RATE + ["--set", "admission.compute_permits=2"]
    with OwnServer(binary, args=args) as srv:
        a, b = await two_with_edges(srv)
        f = await run(b, LONG)  # a pinned read (it spills to the pool): pins ran lately
        assert f["type"] == "result", f
        await read_during_long_write(a, b, 0.3)
        f = await run(b, "?edge(X, Y)")
        assert len(f["rows"]) < EDGES, len(f["rows"])
        assert prometheus(srv)["inputlayer_reads_published_total"] >= 1
        await a.ws.close()
        await b.ws.close()


async def t_read_beside_a_long_write_with_no_read_before(binary):
    """A write on the pool publishes the revision before it whether or not reads ran
    lately, and a program of several statements publishes it for its whole transaction:
    a read that arrives meanwhile, on a server that had run no read yet, answers at once
    as of that revision, and so do an explanation (`.why`) and a listing (`.rule`). With
    only the writes that follow pinned reads publishing, the read would wait for the
    write; with explanations and listings serialized, they would."""
    if is_sanitized(binary):
        # an order of replies under load, on the normal build; under the sanitizers the
        # same paths run in test_pin (ASan) and the threads test (TSan)
        return
    args = NO_MESSAGE_RATE + ["--set", "admission.compute_permits=2"]
    with OwnServer(binary, args=args) as srv:
        a, b = await two_with_edges(srv)
        for program in [LONG_WRITE, "+edge(100, 101)\n" + LONG_WRITE]:
            await a.send({"type": "execute", "id": "write", "program": program})
            write = asyncio.ensure_future(a.recv(timeout=600))
            await asyncio.sleep(0.3)
            read = asyncio.ensure_future(run(b, "?edge(X, Y)"))
            done, _ = await asyncio.wait({read, write}, return_when=asyncio.FIRST_COMPLETED)
            assert read in done and write not in done, "the read waited for " + program
            # the revision before the program: not its first statement's edge
            assert len(read.result()["rows"]) == EDGES, read.result()
            # an explanation reads that revision too, pinned, without waiting
            why = await run(b, ".why ?edge(100, Y)")
            assert not write.done(), "the explanation waited for " + program
            assert why["type"] == "result" and why["rows"] == [], why
            # and so does a listing
            rules = await run(b, ".rule")
            assert not write.done(), "the listing waited for " + program
            assert rules["type"] == "result", rules
            f = await write
            assert f["type"] == "result" and not f["errors"], f
        f = await run(b, "?edge(100, Y)")
        assert f["rows"] == [[100, 101]], f
        assert prometheus(srv)["inputlayer_reads_published_total"] >= 2
        await a.ws.close()
        await b.ws.close()


async def t_other_graph_and_graph_listings_beside_a_long_write(binary):
    """A write publishes, with its own graph, every graph another session is on: a read of
    another graph than the one a long write changes answers at once, as of that graph's
    latest commit (a `read` frame with its revision), and so do `.kg list` and `.status`
    (the list of graphs as of the last statement that created or dropped one), on that
    graph and on the writer's. With only the writer's graph published, the reads of the
    other graph would wait for the write; with `.kg list` and `.status` reading the
    engine's list under its lock, they would too."""
    # an order of replies under load, on the normal build; under the sanitizers only what
    # the replies hold (the same paths run in test_pin and the threads test)
    ordered = not is_sanitized(binary)
    args = NO_MESSAGE_RATE + ["--set", "admission.compute_permits=2"]
    with OwnServer(binary, args=args) as srv:
        a, b = await two_with_edges(srv)
        c = await connect(srv)
        for p in [".kg create other", "+node[(1), (2)]", "+node(3)", "-node(1)"]:
            f = await run(b, p)
            assert f["type"] == "result" and not f["errors"], f
        revision = f["revision"]
        # the notification round the graph's creation asks for runs first: one that
        # waits for the engine lock holds the second worker (docs/server.md, "Not built
        # yet")
        await asyncio.sleep(0.5)
        await a.send({"type": "execute", "id": "write", "program": LONG_WRITE})
        write = asyncio.ensure_future(a.recv(timeout=600))
        await asyncio.sleep(0.3)
        read = asyncio.ensure_future(run(b, "?node(X)"))
        done, _ = await asyncio.wait({read, write}, return_when=asyncio.FIRST_COMPLETED)
        assert not ordered or (read in done and write not in done), "the read waited"
        await read
        assert sorted(read.result()["rows"]) == [[2], [3]], read.result()
        f = await b.call({"type": "read", "id": "r", "queries": [
            {"name": "n", "query": "?node(X)"}]})
        assert not ordered or not write.done(), "the read frame waited for the write"
        assert f["type"] == "snapshot" and f["revision"] == revision, (revision, f)
        assert sorted(f["results"][0]["rows"]) == [[2], [3]], f
        for conn, current in [(b, "other"), (c, "default")]:
            f = await run(conn, ".kg list")
            assert not ordered or not write.done(), "`.kg list` waited for the write"
            assert f["type"] == "result" and [r[0] for r in f["rows"]] == [
                "Knowledge Graphs:"] + ["  %s%s" % (g, " *" if g == current else "")
                                        for g in ["default", "other"]], f
            f = await run(conn, ".status")
            assert not ordered or not write.done(), "`.status` waited for the write"
            assert f["type"] == "result" and ["  Knowledge graphs: 2"] in f["rows"], f
        f = await write
        assert f["type"] == "result" and not f["errors"], f
        assert not ordered or prometheus(srv)["inputlayer_reads_published_total"] >= 6
        await a.ws.close()
        await b.ws.close()
        await c.ws.close()


def load_vectors(n):
    """n vectors of four elements near [0.5, 0.5, 0.5, 0.5], each its own."""
    return "+emb[" + ", ".join(
        "(%d, [%.2f, %.2f, %.2f, 0.5])" % (i, 0.5 + (i % 10) / 100, 0.5 + (i // 10 % 5) / 100,
                                          0.5 + (i // 50 % 5) / 100) for i in range(n)) + "]"


NEAREST = '?hnsw_nearest("e", [0.5, 0.5, 0.5, 0.5], 3, Id, D)'


async def t_vector_search_beside_a_long_write(binary):
    """A graph with a vector index is pinned like any other: a vector search that arrives
    while a long write holds the engine lock answers at once, from the revision the write
    published before it began, whose nearest vectors it returns (not the exact match the
    write adds, nor without the ones it deletes). With such graphs never pinned, the
    search would wait for the write."""
    args = NO_MESSAGE_RATE + ["--set", "admission.compute_permits=2"]
    with OwnServer(binary, args=args) as srv:
        a, b = await two_with_edges(srv)
        for program in ["+emb(id: int, vec: vector)",
                        ".index create e on emb(vec) metric euclidean", load_vectors(250)]:
            f = await run(a, program)
            assert f["type"] == "result" and not f["errors"], f
        before = await run(b, NEAREST)
        assert before["type"] == "result" and [r[0] for r in before["rows"]] == [0, 1, 10], before
        program = ("+emb(1000, [0.5, 0.5, 0.5, 0.5])\n-emb(X, V) <- emb(X, V), X < 3\n" +
                   LONG_WRITE)
        await a.send({"type": "execute", "id": "write", "program": program})
        write = asyncio.ensure_future(a.recv(timeout=600))
        await asyncio.sleep(0.3)
        read = asyncio.ensure_future(run(b, NEAREST))
        done, _ = await asyncio.wait({read, write}, return_when=asyncio.FIRST_COMPLETED)
        # under a sanitizer the order of replies is not kept to (the other tests above
        # skip there); what a search answers beside the write is still its revision's
        if not is_sanitized(binary):
            assert read in done and write not in done, "the vector search waited for the write"
        if read in done and write not in done:
            assert read.result()["rows"] == before["rows"], read.result()
        f = await write
        assert f["type"] == "result" and not f["errors"], f
        f = await run(b, NEAREST)
        assert [r[0] for r in f["rows"]] == [10, 50, 1000], f
        if not is_sanitized(binary):
            assert prometheus(srv)["inputlayer_reads_published_total"] >= 1
        await a.ws.close()
        await b.ws.close()


RULE_READ = "?long(A, B, C, D, E, F, G, H)"


async def t_first_read_of_a_rule_beside_a_write(binary):
    """The first unbound read of a persistent rule makes it a maintained view (the read
    policy). On the pool that read is pinned: it computes the view on its pin, without the
    engine lock, so a write beside it is answered first; the graph adopts the view after
    it, caught up with that write, and maintains it from then on. With the view made
    under the engine lock, the write would wait for the read."""
    args = NO_MESSAGE_RATE + ["--set", "admission.compute_permits=2"]
    with OwnServer(binary, args=args) as srv:
        a, b = await two_with_edges(srv)
        f = await run(a, "+long(A, B, C, D, E, F, G, H) <- " + LONG[1:])
        assert f["type"] == "result" and not f["errors"], f
        await a.send({"type": "execute", "program": RULE_READ, "id": "first"})
        await asyncio.sleep(0.3)  # it overruns the inline budget and goes to the pool
        first = asyncio.ensure_future(a.recv(timeout=300))
        # (59, 0) makes three more rows
        write = await run(b, "+edge(59, 0)")
        read = await run(b, "?edge(59, Y)")
        assert not first.done(), "the write waited for the rule's first read"
        assert write["type"] == "result" and not write["errors"], write
        assert read["rows"] == [[59, 0], [59, 56]], read
        before = await first
        assert before["type"] == "result" and len(before["rows"]) == 119, before["type"]
        # the view adopted, caught up with the write: what evaluating gives now
        evaluated = await run(b, LONG)
        assert len(evaluated["rows"]) == 122, len(evaluated["rows"])
        f = await run(a, RULE_READ)
        assert sorted(f["rows"]) == sorted(evaluated["rows"]), len(f["rows"])
        f = await run(b, "-edge(59, 0)")
        assert f["type"] == "result" and not f["errors"], f
        f = await run(a, RULE_READ)
        assert sorted(f["rows"]) == sorted(before["rows"]), len(f["rows"])
        assert prometheus(srv)["inputlayer_reads_pinned_total"] >= 1
        await a.ws.close()
        await b.ws.close()


async def t_read_beside_a_long_write_and_a_notification_round(binary):
    """With more sessions than the I/O thread runs notification rounds for itself (64), a
    round goes to the pool; one that comes due while a long write holds the engine lock
    is parked off its worker until the lock goes, so a read arriving then still takes the
    second worker and answers at once. With the round waiting for the lock on that worker,
    the read queued behind it until the write ended."""
    if is_sanitized(binary):
        return  # an order of replies under load, on the normal build
    args = NO_MESSAGE_RATE + ["--set", "admission.compute_permits=2"]
    with OwnServer(binary, args=args) as srv:
        a, b = await two_with_edges(srv)
        others = [await connect(srv) for _ in range(70)]
        f = await run(b, LONG)  # a pinned read: pins ran lately, writes publish
        assert f["type"] == "result", f
        # the first write's round runs at once; the second's comes due a window later
        # (3 ms a session), while the long write runs
        for p in ["+other(1)", "+other(2)"]:
            assert (await run(b, p))["errors"] == []
        await read_during_long_write(a, b, 0.6)
        # the parked round ran after the write: every connection got the notifications
        for c in others[:3]:
            seen = set()
            while "other" not in seen:
                n = json.loads(await asyncio.wait_for(c.ws.recv(), 30))
                if n["type"] == "persistent_update":
                    seen.add(n["relation"])
        for c in [a, b] + others:
            await c.ws.close()


# A chain of 1,100 nodes: its closure (604,450 pairs) is big enough to be searched on
# several threads (src/exec/closure.c: partitions times nodes at least a million).
CHAIN = 1100
CLOSURE_COUNT = "?n(C)"


async def pool_idle(srv):
    """Waits until no job has run on the pool or waited for it for a while (the paced
    notification rounds of the writes before come a few milliseconds after them), so that
    every permit but the next statement's is spare."""
    quiet, last = 0, None
    for _ in range(100):
        m = prometheus(srv)
        now = (m["inputlayer_compute_permits_in_use"], m["inputlayer_compute_queued"],
               m["inputlayer_notification_rounds_total"])
        quiet = quiet + 1 if now[:2] == (0, 0) and now == last else 0
        if quiet == 3:
            return
        last = now
        await asyncio.sleep(0.1)
    raise AssertionError("the pool stayed busy")


async def t_recursion_threads_from_spare_permits(binary):
    """A big recursion on a worker shares its work out to one thread per compute permit
    nobody else holds (docs/server.md, "Threads"): alone on the server it runs on two
    threads, beside another connection's long query on one, and on two again after."""
    args = NO_MESSAGE_RATE + ["--set", "admission.compute_permits=2",
                              "--set", "storage.performance.eval_threads=2",
                              "--set", "storage.performance.maintained_views=false"]
    key = "inputlayer_statements_threaded_total"
    with OwnServer(binary, args=args) as srv:
        a, b = await two_with_edges(srv)
        chain = "+e[" + ", ".join("(%d, %d)" % (i, i + 1) for i in range(CHAIN - 1)) + "]"
        for p in [chain, "+reach(X, Y) <- e(X, Y)", "+reach(X, Z) <- reach(X, Y), e(Y, Z)",
                  "+n(count<X>) <- reach(X, Y)"]:
            f = await run(a, p)
            assert f["type"] == "result" and not f["errors"], f
        await pool_idle(srv)
        before = prometheus(srv)[key]
        # alone: it overruns the inline budget, then runs on a worker with the other idle
        alone = await run(a, CLOSURE_COUNT)
        assert alone["type"] == "result" and alone["rows"], alone
        n = prometheus(srv)[key]
        assert n == before + 1, ("a lone big recursion on several threads", before, n)
        # beside the long query, which holds the other permit for its whole run
        long_reply, replies, first = await long_query_beside(b, a, [CLOSURE_COUNT])
        assert long_reply["type"] == "result", long_reply["type"]
        assert replies[0]["rows"] == alone["rows"], replies[0]
        assert first, "the long query ended before the recursion ran"
        n = prometheus(srv)[key]
        assert n == before + 1, ("a second thread while the other permit was held", before, n)
        await pool_idle(srv)
        again = await run(a, CLOSURE_COUNT)
        assert again["rows"] == alone["rows"], again
        n = prometheus(srv)[key]
        assert n == before + 2, ("a lone big recursion on several threads again", before, n)
        await a.ws.close()
        await b.ws.close()


TESTS = [t_reads_and_writes_beside_a_long_query, t_graph_dropped_under_a_pinned_read,
         t_reads_from_several_connections_share_the_pool, t_snapshot_too_old,
         t_pinned_read_ends_during_a_long_write, t_read_beside_a_long_write,
         t_read_beside_a_long_write_with_no_read_before, t_first_read_of_a_rule_beside_a_write,
         t_other_graph_and_graph_listings_beside_a_long_write,
         t_vector_search_beside_a_long_write,
         t_read_beside_a_long_write_and_a_notification_round,
         t_recursion_threads_from_spare_permits]
