"""Randomized differential test of atomic programs (a server of its own): random
programs of two to five writing statements (inserts, deletes, conditional deletes, batch
inserts, rule clauses, `.rule drop`, `.clear`), run whole in one knowledge graph and one
statement at a time in a twin graph (queried afresh: its connection has a session
fact, so it reads no maintained relation). A program that commits must leave the two graphs
equal (every base relation, every derived relation, the rule list), move the revision
once, and push its net change to a subscriber as one delta per subscription (the
difference of the subscription's rows before and after it). A program whose statement
fails must change nothing at all, move no revision and push nothing.

Seeded: INPUTLAYER_TEST_SEED (default 1); INPUTLAYER_TEST_ATOMIC_PROGRAMS (default 150)."""

import asyncio
import json

from common import NO_MESSAGE_RATE, OwnServer, connect, run, seeded

BASE = ["edge", "label"]
DERIVED = {"reach": "?reach(X, Y)", "deg": "?deg(X, N)", "leaf": "?leaf(X)"}
CLAUSES = ["+reach(X, Y) <- edge(X, Y)", "+reach(X, Z) <- reach(X, Y), edge(Y, Z)",
           "+reach(X, Y) <- label(X, Y)", "+deg(X, count<Y>) <- edge(X, Y)",
           "+leaf(X) <- edge(_, X), !edge(X, _)"]
NOTES = ("persistent_update", "rule_change", "kg_change", "schema_change")


def canon(rows):
    return sorted(json.dumps(r) for r in rows)


def statement(rng):
    rel = rng.choice(BASE)

    def fact():
        return "(%d, %d)" % (rng.randint(1, 5), rng.randint(1, 5))
    k = rng.randrange(20)
    if k < 7:
        return "+%s%s" % (rel, fact())
    if k < 11:
        return "-%s%s" % (rel, fact())
    if k < 13:
        return "+%s[%s, %s]" % (rel, fact(), fact())
    if k < 15:
        return "-%s(X, Y) <- %s(X, Y), X = %d" % (rel, rel, rng.randint(1, 5))
    if k < 18:
        return rng.choice(CLAUSES)
    if k < 19:
        return ".rule drop %s" % rng.choice(sorted(DERIVED))
    return ".clear prefix %s" % rel


async def state(c):
    """Everything the graph holds: base and derived relations, and the rules."""
    out = {}
    for rel in BASE:
        f = await run(c, "?%s(X, Y)" % rel)
        out[rel] = canon(f["rows"]) if f["type"] == "result" else f["type"]
    for rel, q in DERIVED.items():
        f = await run(c, q)
        out[rel] = canon(f["rows"]) if f["type"] == "result" and not f["errors"] else "error"
    out["rules"] = (await run(c, ".rule list"))["rows"]
    return out


async def pushes(c):
    """The subscription deltas that reached c before the reply to a ping sent now."""
    await c.send({"type": "ping", "id": "sync"})
    out = []
    while True:
        f = json.loads(await asyncio.wait_for(c.ws.recv(), 10))
        if f.get("id") == "sync":
            return out
        if f["type"] not in NOTES:
            out.append(f)


async def t_atomic_random(binary):
    seed, n, rng = seeded("INPUTLAYER_TEST_ATOMIC_PROGRAMS", 150)
    committed = failed = 0
    with OwnServer(binary, NO_MESSAGE_RATE) as srv:
        a = await connect(srv)  # runs programs whole in atomic_a
        b = await connect(srv)  # the twin, one statement at a time in atomic_b
        for c, g in ((a, "atomic_a"), (b, "atomic_b")):
            assert (await run(c, ".kg create %s" % g))["type"] == "result"
            await run(c, ".kg use %s" % g)
            await run(c, "+edge[(1, 2), (2, 3)]\n+label[(3, 1)]")
            for clause in CLAUSES[:2]:
                await run(c, clause)
        # the twin's session fact makes its queries evaluate afresh (no maintained relation)
        assert (await run(b, "twin_session_marker(0)"))["errors"] == []
        sub = await connect(srv, kg="atomic_a")
        subs = {}
        rev = None  # atomic_a's revision: only this connection writes to it
        for i, (rel, q) in enumerate(sorted(DERIVED.items()) + [("edge", "?edge(X, Y)")]):
            f = await run(sub, ".subscribe s%d %s" % (i, q))
            subs["s%d" % i] = {"query": q, "rows": set(canon(f["rows"]))
                               if f["type"] == "result" and "subscribed" in f else None}
        for p in range(n):
            stmts = [statement(rng) for _ in range(rng.randint(2, 5))]
            fail_at = rng.randrange(len(stmts) + 1) if rng.randrange(3) == 0 else None
            if fail_at is not None:
                stmts.insert(fail_at, "+edge(1, 2, 3)")  # an arity error
            program = "\n".join(stmts)
            where = "seed %d, program %d:\n%s" % (seed, p, program)
            before = await state(a)
            f = await run(a, program)
            assert f["type"] == "result", (where, f)
            if fail_at is not None:
                failed += 1
                assert f["errors"] and "revision" not in f, (where, f)
                assert await state(a) == before, (where, "a failed program changed the graph")
                assert await pushes(sub) == [], (where, "a failed program pushed deltas")
                continue
            if f["errors"]:
                # a statement failed on its own (e.g. dropping a rule that is not there):
                # the whole program is rolled back too
                failed += 1
                assert "revision" not in f and await state(a) == before, (where, f)
                assert await pushes(sub) == [], (where, "a failed program pushed deltas")
                continue
            committed += 1
            if "revision" in f:
                assert rev is None or f["revision"] == rev + 1, (where, rev, f["revision"])
                rev = f["revision"]
            else:  # it changed nothing
                assert await state(a) == before, (where, "no revision, but a change", f)
            for s in stmts:
                await run(b, s)
            after = await state(a)
            assert after == await state(b), (where, after, await state(b))
            got = {}
            for d in await pushes(sub):
                if d["type"] == "subscription_error":
                    subs[d["subscription"]]["rows"] = None  # its view failed: not followed
                    continue
                assert d["type"] == "subscription_delta", (where, d)
                assert d["subscription"] not in got, (where, "two deltas for one program", d)
                got[d["subscription"]] = d
            for name, s in subs.items():
                if s["rows"] is None:
                    continue
                now = await run(a, s["query"])
                if now["type"] != "result" or now["errors"]:
                    s["rows"] = None  # its view failed (a rule dropped): not followed
                    continue
                now_rows = set(canon(now["rows"]))
                d = got.get(name)
                ins = set(canon(d["inserted"])) if d else set()
                ret = set(canon(d["retracted"])) if d else set()
                assert ins == now_rows - s["rows"] and ret == s["rows"] - now_rows, (
                    where, name, s["query"], sorted(ins), sorted(ret))
                s["rows"] = now_rows
        for c in (a, b, sub):
            await c.ws.close()
    print("     %d programs (seed %d): %d committed, equal to their statements run one by "
          "one; %d rolled back whole" % (n, seed, committed, failed))
    assert committed and failed, (committed, failed)


TESTS = [t_atomic_random]
