"""Randomized concurrent load (a server of its own): several connections at once, each
a random mix of writes, queries, `read` snapshots, subscriptions coming and going,
graph switches, rules dropped and added back (their views fail and rebuild), relations
dropped, a graph dropped under others and made again, `.compact`, pipelined bursts
(some with a 1 ms deadline, one maybe cancelled), and pings. Whatever the interleaving:
every request gets exactly one reply with its id (a streamed one ends with
result_end), pushes carry no id, each pipelined write's mark is stored exactly when its
reply says it committed, the server stays up and answers, and at the end each
subscription that never saw an error holds (snapshot plus deltas) what a query returns.
The server's own checks (sanitizers in those builds) and a clean exit are checked by
OwnServer.

Seeded: INPUTLAYER_TEST_SEED (default 1); INPUTLAYER_TEST_CHAOS_OPS (per connection,
default 150)."""

import asyncio
import json
import random

from common import NO_MESSAGE_RATE, OwnServer, connect, run, seeded

GRAPHS = ["chaos_a", "chaos_b", "chaos_c"]  # chaos_c is dropped and made again
EPOCH = {g: 0 for g in GRAPHS}  # drops of each graph so far
RULES = ["+reach(X, Y) <- edge(X, Y)", "+reach(X, Z) <- reach(X, Y), edge(Y, Z)",
         "+deg(X, count<Y>) <- edge(X, Y)", "+leaf(X) <- edge(_, X), !edge(X, _)"]
QUERIES = ["?reach(X, Y)", "?reach(%d, Y)", "?deg(X, N)", "?deg(%d, N)", "?leaf(X)",
           "?edge(%d, Y)", "?reach(X, Y), X < %d"]
NOTES = ("persistent_update", "rule_change", "kg_change", "schema_change", "notice")
TERMINAL = ("result", "error", "snapshot", "pong", "cancel_ack", "result_end")


def row(r):
    return tuple(json.dumps(v) for v in r)


class Client:
    """One connection: its requests in flight by id, its subscriptions' states."""

    def __init__(self, name, rng, ws):
        self.name, self.rng, self.c = name, rng, ws
        self.graph, self.graph_epoch = None, None
        self.serial = 0
        self.marks = self.checked_marks = self.refused = 0
        self.waiting = {}  # id -> what was sent
        self.replies = {}  # id -> the terminal frame
        self.subs = {}     # name -> {query, rows, seq, broken}
        # request id -> (name, query, graph, its drops when sent) of a .subscribe in flight
        self.opening = {}
        self.reader = None

    async def read_loop(self):
        while True:
            f = json.loads(await self.c.ws.recv())
            t = f["type"]
            if t in NOTES or t.startswith("subscription"):
                assert "id" not in f, ("a push with an id", f)
                self.push(f)
                continue
            rid = f.get("id")
            assert rid in self.waiting, ("a reply to nothing in flight", f, self.name)
            if t in TERMINAL:
                assert rid not in self.replies, ("two replies", f)
                self.replies[rid] = f
                if rid in self.opening and "subscribed" in f:
                    # registered here, before the next frame: its deltas follow at once
                    name, q, graph, epoch = self.opening.pop(rid)
                    self.subs[name] = {"query": q, "rows": {row(r) for r in f["rows"]},
                                       "seq": 0, "broken": None, "graph": graph,
                                       "epoch": epoch}

    def push(self, f):
        s = self.subs.get(f.get("subscription"))
        if f["type"] == "subscription_delta" and s:
            if f["seq"] != s["seq"] + 1:
                s["broken"] = "seq %d after %d" % (f["seq"], s["seq"])
            s["seq"] = f["seq"]
            for r in map(row, f["retracted"]):
                if r not in s["rows"]:
                    s["broken"] = "retracted absent %s" % (r,)
                s["rows"].discard(r)
            for r in map(row, f["inserted"]):
                if r in s["rows"]:
                    s["broken"] = "inserted present %s" % (r,)
                s["rows"].add(r)
        elif f["type"] in ("subscription_error", "subscription_reset") and s:
            s["errored"] = True  # its rows are not followed from here on

    def where(self):
        """(graph, its drops so far) when the connection surely is on it; ("?", None) once
        another connection dropped it (this one was moved to default meanwhile)."""
        if self.graph in EPOCH and self.graph_epoch == EPOCH[self.graph]:
            return self.graph, self.graph_epoch
        return "?", None

    def set_graph(self, g):
        if self.where() != (g, EPOCH.get(g)):
            self.subs.clear()  # switching graph drops them
        self.graph, self.graph_epoch = g, EPOCH.get(g)

    async def request(self, frame, wait=True, opening=None):
        self.serial += 1
        rid = "%s-%d" % (self.name, self.serial)
        frame = dict(frame, id=rid)
        self.waiting[rid] = frame
        if opening:
            self.opening[rid] = opening  # before sending: the reader may see the reply first
        await self.c.send(frame)
        if wait:
            return await self.reply(rid)
        return rid

    async def reply(self, rid, timeout=60):
        for _ in range(int(timeout / 0.005)):
            if rid in self.replies:
                return self.replies[rid]
            if self.reader.done():
                self.reader.result()  # the reader's failed check, raised here
            await asyncio.sleep(0.005)
        raise AssertionError("no reply to %s: %s" % (rid, self.waiting[rid]))

    async def execute(self, program, wait=True):
        return await self.request({"type": "execute", "program": program}, wait)

    def value(self):
        return self.rng.randint(1, 6)

    async def op(self):
        rng = self.rng
        k = rng.randrange(100)
        if k < 35:
            sign = "+" if rng.randrange(3) else "-"
            await self.execute("%sedge(%d, %d)" % (sign, self.value(), self.value()))
        elif k < 45:
            q = rng.choice(QUERIES)
            await self.execute(q % self.value() if "%d" in q else q)
        elif k < 50:
            await self.request({"type": "read", "queries": [
                {"name": "a", "query": "?reach(X, Y)"}, {"name": "b", "query": "?deg(X, N)"}]})
        elif k < 62:
            await self.subscribe()
        elif k < 67 and self.subs:
            name = rng.choice(sorted(self.subs))
            f = await self.execute(".unsubscribe %s" % name)
            s = self.subs.pop(name)
            # gone already when another connection dropped its graph
            gone = s["epoch"] != EPOCH.get(s["graph"], -1) and f.get("code") == "not_found"
            assert f["type"] == "result" or gone, f
        elif k < 70:
            g = rng.choice(GRAPHS)
            f = await self.execute(".kg use %s" % g)
            if f["type"] == "result" and not f["errors"]:  # chaos_c may be gone just now
                self.set_graph(g)
        elif k < 73:
            # a rule goes and comes back: views over it fail, then rebuild
            await self.execute(".rule drop reach")
            await self.execute("\n".join(RULES[:2]))
        elif k < 74 and rng.randrange(2):
            await self.execute(".rel drop edge")
        elif k < 74:
            # the graph goes, with whoever uses it, and comes back: `.kg create` moves this
            # connection to it (its subscriptions go); others' views over it fail
            EPOCH["chaos_c"] += 1
            await self.execute(".kg drop chaos_c")
            f = await self.execute(".kg create chaos_c")
            if f["type"] == "result" and not f["errors"]:
                self.subs.clear()
                self.set_graph("chaos_c")
                await self.execute("+edge[(1, 2), (2, 3)]")
                await self.execute("\n".join(RULES))
        elif k < 76:
            await self.execute(".compact")
        elif k < 88:
            # a burst: several requests pipelined, some with a tiny deadline, one maybe
            # cancelled; each writes a mark of its own, present afterwards exactly when
            # its reply says it committed
            ids, epoch = {}, dict(EPOCH)
            for _ in range(rng.randint(2, 6)):
                self.marks += 1
                frame = {"type": "execute", "program": '+mark("%s", %d)\n+edge(%d, %d)' % (
                    self.name, self.marks, self.value(), self.value())}
                if rng.randrange(8) == 0:
                    frame["timeout_ms"] = 1
                ids[await self.request(frame, wait=False)] = self.marks
            if rng.randrange(2):
                f = await self.request({"type": "cancel", "target": rng.choice(sorted(ids))})
                assert f["type"] == "cancel_ack", f
            outcome = {}
            for rid, mark in ids.items():
                f = await self.reply(rid)
                ok = f["type"] == "result" and not f["errors"]
                assert ok or f["type"] == "error", f
                outcome[mark] = ok
            f = await self.execute('?mark("%s", N)' % self.name)
            if epoch == EPOCH and f["type"] == "result":  # no graph dropped meanwhile
                present = {r[1] for r in f["rows"]}
                for mark, ok in outcome.items():
                    assert (mark in present) == ok, (self.name, mark, ok, "mark present" if
                                                     mark in present else "mark absent")
                self.checked_marks += len(outcome)
                self.refused += sum(1 for ok in outcome.values() if not ok)
        elif k < 94:
            f = await self.request({"type": "ping"})
            assert f["type"] == "pong", f
        else:
            for rule in RULES[2:]:
                await self.execute(rule)

    async def subscribe(self):
        self.serial += 1
        name = "%s_s%d" % (self.name, self.serial)
        q = self.rng.choice(QUERIES)
        q = q % self.value() if "%d" in q else q
        rid = await self.request({"type": "execute", "program": ".subscribe %s %s" % (name, q)},
                                 wait=False, opening=(name, q) + self.where())
        await self.reply(rid)
        self.opening.pop(rid, None)  # refused: nothing registered


async def t_chaos_random(binary):
    seed, ops, rng = seeded("INPUTLAYER_TEST_CHAOS_OPS", 150)
    with OwnServer(binary, NO_MESSAGE_RATE) as srv:
        setup = await connect(srv)
        for g in GRAPHS:
            assert (await run(setup, ".kg create %s" % g))["type"] == "result"
            await run(setup, ".kg use %s" % g)
            await run(setup, "+edge[(1, 2), (2, 3), (3, 1), (4, 5)]")
            for rule in RULES:
                assert (await run(setup, rule))["type"] == "result"
        clients = []
        for i in range(4):
            g = GRAPHS[i % 2]
            cl = Client("c%d" % i, random.Random(rng.random()), await connect(srv, kg=g))
            cl.set_graph(g)
            cl.reader = asyncio.create_task(cl.read_loop())
            clients.append(cl)

        async def drive(cl):
            for _ in range(ops):
                await cl.op()
        await asyncio.gather(*(drive(cl) for cl in clients))
        # quiet now: every subscription that saw no error matches a fresh query
        checked = 0
        for cl in clients:
            f = await cl.request({"type": "ping"})  # every push before it has arrived
            assert f["type"] == "pong", f
            for name, s in cl.subs.items():
                if s.get("errored") or s["epoch"] != EPOCH.get(s["graph"], -1):
                    continue  # its view failed, or its graph was dropped since
                assert s["broken"] is None, (seed, cl.name, name, s["query"], s["broken"])
                f = await cl.execute(s["query"])
                assert f["type"] == "result", f
                want = {row(r) for r in f["rows"]}
                assert s["rows"] == want, (seed, cl.name, name, s["query"], sorted(s["rows"]),
                                           sorted(want))
                checked += 1
            assert not (set(cl.waiting) - set(cl.replies)), ("unanswered", cl.name)
        for cl in clients:
            cl.reader.cancel()
            await cl.c.ws.close()
        await setup.ws.close()
    marks = sum(cl.checked_marks for cl in clients)
    refused = sum(cl.refused for cl in clients)
    print("     4 connections x %d random operations (seed %d): %d subscriptions checked, %d "
          "pipelined writes applied exactly when acknowledged (%d refused: cancelled or past "
          "their deadline)" % (ops, seed, checked, marks, refused))


TESTS = [t_chaos_random]
