"""Concurrent writers and readers against an oracle (a server of its own). Several
connections write at once: inserts, deletes, conditional deletes, rule clauses added and
dropped, atomic programs, and read-modify-write increments of a counter guarded by
`expect_revision`; several others send `read` frames at once, each answered with the
revision it is exact at. Afterwards the committed programs, ordered by the revision their
replies gave, are replayed one by one into a second graph, and after each one every
revision that some read reported is evaluated there from scratch (its connection holds a
session fact, so nothing maintained is read): each read must equal that evaluation, row for
row. Every committed write has a revision of its own, with no gap and no repeat; the
counter ends at the number of increments that committed (no lost update); a program
refused by its precondition changed nothing.

Seeded: INPUTLAYER_TEST_SEED (default 1); INPUTLAYER_TEST_CONCURRENCY_OPS (per writer,
default 120)."""

import asyncio
import json

from common import NO_MESSAGE_RATE, OwnServer, connect, run, seeded

GRAPH = "conc"
ORACLE = "conc_oracle"
BASE_RULES = ["+reach(X, Y) <- edge(X, Y)", "+reach(X, Z) <- reach(X, Y), edge(Y, Z)",
              "+deg(X, count<Y>) <- edge(X, Y)", "+leaf(X) <- edge(_, X), !edge(X, _)"]
TOGGLED = "+two(X, Z) <- edge(X, Y), edge(Y, Z)"
QUERIES = [("edge", "?edge(X, Y)"), ("reach", "?reach(X, Y)"), ("deg", "?deg(X, N)"),
           ("leaf", "?leaf(X)"), ("two", "?two(X, Z)"), ("counter", "?counter(N)")]
WRITERS = 3
READERS = 3


def canon(rows):
    return sorted(json.dumps(r) for r in rows)


def answer(result):
    """A named result of a snapshot, or a query's result: its rows, or that it failed."""
    if result.get("type") == "error" or result.get("errors") or "rows" not in result:
        return "error"
    return canon(result["rows"])


def node(rng):
    return rng.randint(1, 7)


def writing_program(rng):
    """A program of one to three writing statements."""
    stmts = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        k = rng.randrange(20)
        if k < 8:
            stmts.append("+edge(%d, %d)" % (node(rng), node(rng)))
        elif k < 13:
            stmts.append("-edge(%d, %d)" % (node(rng), node(rng)))
        elif k < 15:
            stmts.append("+edge[(%d, %d), (%d, %d)]" % tuple(node(rng) for _ in range(4)))
        elif k < 17:
            stmts.append("-edge(X, Y) <- edge(X, Y), X = %d" % node(rng))
        elif k < 19:
            stmts.append(TOGGLED)
        else:
            stmts.append(".rule drop two")
    return "\n".join(stmts)


class Run:
    def __init__(self, rng, ops):
        self.rng, self.ops = rng, ops
        self.committed = {}  # revision -> program
        self.reads = []  # (revision, {name: answer})
        self.increments = 0
        self.refused = 0
        self.failed = 0

    def commit(self, f, program, where):
        """Notes a reply to a writing program: its revision, if it committed a change."""
        assert f["type"] in ("result", "error"), (where, program, f)
        if f["type"] == "error" or f["errors"]:
            self.failed += 1
            assert "revision" not in f, (where, program, f)
            return None
        if "revision" not in f:
            return None  # it changed nothing
        rev = f["revision"]
        assert rev not in self.committed, (where, "two commits with revision %d" % rev,
                                           self.committed[rev], program)
        self.committed[rev] = program
        return rev

    async def read(self, c, tag):
        f = await c.call({"type": "read", "id": tag, "queries": [
            {"name": name, "query": q} for name, q in QUERIES]})
        assert f["type"] == "snapshot" and "revision" in f, (tag, f)
        got = {r["name"]: answer(r) for r in f["results"]}
        self.reads.append((f["revision"], got))
        return f["revision"]

    async def writer(self, c, w):
        for i in range(self.ops):
            where = "writer %d, op %d" % (w, i)
            if self.rng.randrange(5) == 0:
                await self.increment(c, where)
            else:
                program = writing_program(self.rng)
                self.commit(await run(c, program), program, where)

    async def increment(self, c, where):
        """Reads the counter, then writes it plus one, expecting no change in between."""
        rev = await self.read(c, where)
        n = self.reads[-1][1]["counter"]
        assert n != "error" and len(n) == 1, (where, n)
        value = json.loads(n[0])[0]
        program = "-counter(%d)\n+counter(%d)" % (value, value + 1)
        f = await c.call({"type": "execute", "program": program, "expect_revision": rev,
                          "expect_relations": ["counter"]})
        if f["type"] == "error":
            assert f.get("code") == "precondition_failed", (where, f)
            self.refused += 1
            return
        if self.commit(f, program, where) is not None:
            self.increments += 1

    async def reader(self, c, stop):
        while not stop.is_set():
            await self.read(c, "r")


async def t_reads_match_their_revision(binary):
    seed, ops, rng = seeded("INPUTLAYER_TEST_CONCURRENCY_OPS", 120)
    r = Run(rng, ops)
    with OwnServer(binary, NO_MESSAGE_RATE) as srv:
        setup = await connect(srv)
        for g in (GRAPH, ORACLE):
            assert (await run(setup, ".kg create %s" % g))["type"] == "result"
            await run(setup, ".kg use %s" % g)
            f = await run(setup, "\n".join(BASE_RULES + ["+counter(0)"]))
            assert not f["errors"], f
        await run(setup, ".kg use %s" % GRAPH)
        first = await r.read(setup, "first")
        writers = [await connect(srv, kg=GRAPH) for _ in range(WRITERS)]
        readers = [await connect(srv, kg=GRAPH) for _ in range(READERS)]
        stop = asyncio.Event()
        reading = [asyncio.create_task(r.reader(c, stop)) for c in readers]
        await asyncio.gather(*(r.writer(c, w) for w, c in enumerate(writers)))
        stop.set()
        await asyncio.gather(*reading)
        last = await r.read(setup, "last")

        # every commit has its own revision, none missing
        revs = sorted(r.committed)
        assert revs == list(range(first + 1, last + 1)), (
            "revisions committed %s, reads from %d to %d" % (revs[:5], first, last))
        final = r.reads[-1][1]["counter"]
        assert final == [json.dumps([r.increments])], (final, r.increments)

        # the oracle: the committed programs replayed in revision order, evaluated afresh
        oracle = await connect(srv, kg=ORACLE)
        assert (await run(oracle, "oracle_session_marker(0)"))["errors"] == []
        wanted = {}
        for rev, got in r.reads:
            wanted.setdefault(rev, []).append(got)

        async def evaluate():
            return {name: answer(await run(oracle, q)) for name, q in QUERIES}

        async def check(rev):
            expected = await evaluate()
            for got in wanted.get(rev, []):
                for name, _ in QUERIES:
                    assert got[name] == expected[name], (
                        "seed %d: a read at revision %d saw %s = %s; the log replayed up to "
                        "it gives %s" % (seed, rev, name, got[name], expected[name]))

        await check(first)
        for rev in revs:
            f = await run(oracle, r.committed[rev])
            assert f["type"] == "result" and not f["errors"], (rev, r.committed[rev], f)
            await check(rev)
        for c in writers + readers + [setup, oracle]:
            await c.ws.close()
    print("     seed %d: %d commits (revisions %d to %d), %d reads at %d revisions, each equal "
          "to the log replayed; %d of %d increments refused by their precondition, none "
          "lost; %d programs failed whole" % (
              seed, len(revs), first + 1, last, len(r.reads), len(wanted), r.refused,
              r.refused + r.increments, r.failed))
    assert r.increments and len(wanted) > 10


TESTS = [t_reads_match_their_revision]
