"""Randomized differential test of standing queries over /ws: random writes (single facts,
batches, deletes, conditional deletes, programs of several statements, no-ops) against
knowledge graphs with recursive, negated, aggregated and joined rules, watched by
`.subscribe` subscriptions and `subscribe` groups on several connections, most of them
keyed families (queries that differ only in a goal constant). After every write each
subscriber's state (its snapshot plus every delta) must equal a fresh `?query` of the
same text; a delta must insert only absent rows and retract only present ones, carry the
write's revision, and follow the last seq, and deltas must reach each connection in
revision order while two connections pipeline writes at once; subscribers write too
(their reply first, then their deltas), and a `read` snapshot of each connection's
queries must agree with its subscriptions; subscriptions come and go during the run
(each new snapshot equal to the fresh result), and some open amid the pipelined writes
(their deltas must start after their snapshot's revision and add up to the fresh
state).

Seeded: INPUTLAYER_TEST_SEED (default 1) and INPUTLAYER_TEST_SUBS_STEPS (writes per
rule set, default 120); INPUTLAYER_TEST_SUBS_SET: more server settings (`key=value`
separated by spaces, e.g. `storage.persist.durability_mode=async`). A failure prints the
seed and the last writes."""

import json
import os
import random

from common import OwnServer, connect, run, still_answers
from subs import next_push

# Templates: %K is a key the test picks (a goal constant: members of one keyed family).
RULESETS = [
    {"name": "closure",
     "rules": ["+reach(X, Y) <- edge(X, Y)", "+reach(X, Z) <- reach(X, Y), edge(Y, Z)"],
     "queries": ["?reach(X, Y)", "?reach(%K, Y)", "?reach(X, %K)", "?edge(%K, Y)"],
     "rels": ["edge"],
     "later": ["+reach(X, X) <- edge(X, _)"]},
    {"name": "negation",
     "rules": ["+reach(X, Y) <- edge(X, Y)", "+reach(X, Z) <- reach(X, Y), edge(Y, Z)",
               "+unreached(X, Y) <- label(X, Y), !reach(X, Y)",
               "+lonely(X) <- label(X, _), !edge(X, _)"],
     "queries": ["?unreached(X, Y)", "?unreached(%K, Y)", "?lonely(X)", "?reach(%K, Y)"],
     "rels": ["edge", "label"],
     "later": ["+reach(X, Y) <- label(Y, X)"]},
    {"name": "aggregates",
     "rules": ["+deg(X, count<Y>) <- edge(X, Y)", "+total(X, sum<Y>) <- edge(X, Y)",
               "+lo(X, min<Y>) <- edge(X, Y)", "+best(top_k<2, X, Y:desc>) <- edge(X, Y)",
               "+reach(X, Y) <- edge(X, Y)", "+reach(X, Z) <- reach(X, Y), edge(Y, Z)",
               "+fan(X, count<Y>) <- reach(X, Y)"],
     "queries": ["?deg(%K, N)", "?total(X, S)", "?lo(%K, M)", "?best(X, Y)", "?fan(%K, N)",
                 "?deg(X, N)"],
     "rels": ["edge"]},
    {"name": "joins",
     "rules": ["+two_hop(X, Z) <- edge(X, Y), edge(Y, Z)",
               "+hot(X, Y) <- label(X, 1), two_hop(X, Y)"],
     "queries": ["?two_hop(%K, Z)", "?two_hop(X, %K)", "?hot(X, Y)", "?hot(%K, Y)",
                 "?edge(X, Y), label(Y, %K)"],
     "rels": ["edge", "label"],
     "later": ["+hot(X, Y) <- label(X, 2), edge(X, Y)"]},
    {"name": "arithmetic",
     "rules": ["+dbl(X, Z) <- edge(X, Y), Z = Y * 2 + 1", "+big(X, Y) <- edge(X, Y), Y > 3",
               "+mx(X, max<Y>) <- edge(X, Y)", "+av(X, avg<Y>) <- edge(X, Y)",
               "+cd(X, count_distinct<Z>) <- edge(X, Y), edge(Y, Z)",
               "+both(X, Y) <- big(X, Y), !label(X, Y)"],
     "queries": ["?dbl(%K, Z)", "?big(X, Y)", "?mx(%K, M)", "?av(X, A)", "?cd(%K, N)",
                 "?both(X, Y)", "?dbl(X, Z), Z > 7"],
     "rels": ["edge", "label"],
     "later": ["+big(X, Y) <- label(X, Y), X < Y"]},
]

SUBSCRIBERS = 3  # connections
SINGLES = 6      # `.subscribe` subscriptions per connection at the start
GROUP = 4        # members of the one `subscribe` group per connection


class Failure(AssertionError):
    pass


def row(r):
    """A row as a set element that keeps 1 and 1.0 apart (distinct stored values)."""
    return tuple(json.dumps(v) for v in r)


def rows_of(f):
    rows = [row(r) for r in f["rows"]]
    if len(set(rows)) != len(rows):
        raise Failure("duplicate rows in %s" % f)
    return set(rows)


class Run:
    """One rule set on a knowledge graph of its own: a writer, the subscribers, and the
    state each subscription should hold."""

    def __init__(self, rng, rs, domain):
        self.rng, self.rs, self.domain = rng, rs, domain
        self.log = []     # the writes so far, for the failure message
        self.subs = {}    # name -> {conn, query, rows, seq, generation, group}
        self.groups = {}  # group name -> {conn, members: {member: sub name}, seq}
        self.fresh_cache = {}
        self.serial = 0
        self.later_done = False
        self.opening = {}  # name -> query of a `.subscribe` sent but not answered yet

    def where(self):
        return "seed %s, rule set %s, after %d writes:\n  %s" % (
            SEED, self.rs["name"], len(self.log), "\n  ".join(self.log[-12:]))

    def fail(self, msg):
        raise Failure("%s\n%s" % (msg, self.where()))

    def query(self):
        q = self.rng.choice(self.rs["queries"])
        return q.replace("%K", str(self.rng.randint(1, self.domain + 1)))

    async def fresh(self, q):
        if q not in self.fresh_cache:
            f = await run(self.w, q)
            if f["type"] != "result":
                self.fail("fresh %s: %s" % (q, f))
            self.fresh_cache[q] = rows_of(f)
        return self.fresh_cache[q]

    async def subscribe_one(self, c):
        self.serial += 1
        name, q = "s%d" % self.serial, self.query()
        f = await run(c, ".subscribe %s %s" % (name, q))
        if f["type"] != "result" or "subscribed" not in f:
            self.fail("subscribe %s: %s" % (q, f))
        got, want = rows_of(f), await self.fresh(q)
        if got != want:
            self.fail("snapshot of %s: %s, fresh %s" % (q, sorted(got), sorted(want)))
        self.subs[name] = {"conn": c, "query": q, "rows": got, "seq": 0,
                           "generation": f["subscribed"]["generation"]}

    async def subscribe_group(self, c):
        self.serial += 1
        gname = "g%d" % self.serial
        queries = [("m%d" % i, self.query()) for i in range(GROUP)]
        frame = {"type": "subscribe", "subscription": gname, "id": gname,
                 "queries": [{"name": n, "query": q} for n, q in queries]}
        f = await c.call(frame)
        if f["type"] != "snapshot":
            self.fail("group %s: %s" % (queries, f))
        members = {}
        for r, (m, q) in zip(f["results"], queries):
            got = rows_of(r)
            if r["name"] != m or got != await self.fresh(q):
                self.fail("group snapshot of %s: %s" % (q, r))
            sub = "%s.%s" % (gname, m)
            self.subs[sub] = {"conn": c, "query": q, "rows": got, "group": gname}
            members[m] = sub
        self.groups[gname] = {"conn": c, "members": members, "seq": 0}

    async def setup(self, srv):
        kg = "rand_%s" % self.rs["name"]
        self.w = await connect(srv)
        f = await run(self.w, ".kg create %s" % kg)
        assert f["type"] == "result", f
        await run(self.w, ".kg use %s" % kg)
        self.w2 = await connect(srv, kg=kg)
        for rel in self.rs["rels"]:
            await run(self.w, "+%s[%s]" % (rel, ", ".join(
                "(%d, %d)" % (self.rng.randint(1, self.domain), self.rng.randint(1, self.domain))
                for _ in range(self.domain))))
        for rule in self.rs["rules"]:
            f = await run(self.w, rule)
            assert f["type"] == "result", (rule, f)
        self.conns = [await connect(srv, kg=kg) for _ in range(SUBSCRIBERS)]
        for c in self.conns:
            for _ in range(SINGLES):
                await self.subscribe_one(c)
            await self.subscribe_group(c)

    def value(self, first):
        """Mostly integers; now and then a float (the int key 3 also matches a stored 3.0)
        and, in a first column, a string."""
        rng, k = self.rng, self.rng.randint(1, self.domain)
        roll = rng.randrange(20)
        if roll == 0:
            return "%d.0" % k
        if roll == 1 and first:
            return '"%s"' % rng.choice("ab")
        return str(k)

    def write(self):
        """A random program: (text, whether it must fail and change nothing)."""
        rng = self.rng
        rel = rng.choice(self.rs["rels"])

        def fact():
            return "(%s, %s)" % (self.value(True), self.value(False))
        kind = rng.randrange(13)
        if kind < 4:
            return "+%s%s" % (rel, fact()), False
        if kind < 8:
            return "-%s%s" % (rel, fact()), False
        if kind == 8:
            return "+%s[%s]" % (rel, ", ".join(fact() for _ in range(rng.randint(2, 4)))), False
        if kind == 9:
            return "-%s(X, Y) <- %s(X, Y), X = %s" % (rel, rel, self.value(True)), False
        if kind == 10:
            other = rng.choice(self.rs["rels"])
            return "-%s%s\n+%s%s\n+%s%s" % (rel, fact(), other, fact(), rel, fact()), False
        if kind == 11:
            # a failing statement after a write: the program is rolled back whole
            return "+%s%s\n-%s%s\n+%s(1, 2, 3)" % (rel, fact(), rel, fact(), rel), True
        # a fact inserted and deleted in one program: nothing changes
        f = fact()
        return "+%s%s\n-%s%s" % (rel, f, rel, f), False

    def apply(self, sub, ins, ret, what):
        rows = self.subs[sub]["rows"]
        STATS["changes"] += len(ins) + len(ret)
        for r in map(row, ret):
            if r not in rows:
                self.fail("%s of %s retracts absent row %s" % (what, sub, r))
            rows.remove(r)
        for r in map(row, ins):
            if r in rows:
                self.fail("%s of %s inserts present row %s" % (what, sub, r))
            rows.add(r)

    async def collect(self, c, revisions):
        """Applies the deltas that reached c before the reply to a ping sent now; each must
        carry one of `revisions` (those of the writes just made), in increasing order."""
        await c.send({"type": "ping", "id": "sync"})
        last = 0
        while True:
            f = await next_push(c, 10)
            if f.get("id") == "sync":
                assert f["type"] == "pong", f
                return
            if f.get("id", "").startswith("open-"):
                name = f["id"][5:]
                if f["type"] != "result" or "subscribed" not in f:
                    self.fail("subscribe %s: %s" % (self.opening[name], f))
                self.subs[name] = {"conn": c, "query": self.opening.pop(name),
                                   "rows": rows_of(f), "seq": 0,
                                   "generation": f["subscribed"]["generation"],
                                   "since": f["subscribed"]["revision"]}
                continue
            sub = self.subs.get(f.get("subscription"), {})
            if f.get("revision", 0) <= sub.get("since", 0):
                self.fail("delta at revision %s, not after its snapshot's %d: %s" % (
                    f.get("revision"), sub["since"], f))
            if f.get("revision") not in revisions or f["revision"] < last:
                self.fail("delta at revision %s (after %d), the writes' are %s: %s" % (
                    f.get("revision"), last, sorted(revisions), f))
            last = f["revision"]
            if f["type"] == "subscription_delta":
                s = self.subs.get(f["subscription"])
                if s is None or s["conn"] is not c or s.get("group"):
                    self.fail("delta of an unknown subscription: %s" % f)
                if f["seq"] != s["seq"] + 1 or f["generation"] != s["generation"]:
                    self.fail("delta out of order (seq %d after %d): %s" % (f["seq"], s["seq"], f))
                if not f["inserted"] and not f["retracted"]:
                    self.fail("empty delta: %s" % f)
                s["seq"] = f["seq"]
                self.apply(f["subscription"], f["inserted"], f["retracted"], "delta")
            elif f["type"] == "subscription_group_delta":
                g = self.groups.get(f["subscription"])
                if g is None or g["conn"] is not c or f["seq"] != g["seq"] + 1:
                    self.fail("group delta out of order or unknown: %s" % f)
                g["seq"] = f["seq"]
                if all(m["unchanged"] for m in f["members"]):
                    self.fail("group delta with no change: %s" % f)
                for m in f["members"]:
                    if m["unchanged"] and (m["inserted"] or m["retracted"]):
                        self.fail("unchanged member with rows: %s" % f)
                    self.apply(g["members"][m["name"]], m["inserted"], m["retracted"],
                               "group delta")
            else:
                self.fail("unexpected frame: %s" % f)

    async def churn(self):
        """Now and then one subscription goes and another comes (a snapshot checked)."""
        singles = [n for n, s in self.subs.items() if not s.get("group")]
        name = self.rng.choice(singles)
        c = self.subs[name]["conn"]
        f = await run(c, ".unsubscribe %s" % name)
        if f["type"] != "result":
            self.fail("unsubscribe %s: %s" % (name, f))
        del self.subs[name]
        await self.subscribe_one(c)

    async def step(self):
        prog, fails = self.write()
        if self.rs.get("later") and not self.later_done and len(self.log) >= STEPS // 2:
            # a rule changes under the subscriptions: their views are rebuilt, and each
            # gets the difference as a delta
            prog, fails, self.later_done = "\n".join(self.rs["later"]), False, True
        # Now and then a subscriber writes: its reply comes before its own deltas.
        writer = self.w if self.rng.randrange(5) else self.rng.choice(self.conns)
        self.log.append(prog.replace("\n", "; "))
        f = await run(writer, prog)
        # A failing statement rolls the program back: a result naming it, no revision.
        if f["type"] != "result" or bool(f["errors"]) != fails or (fails and "revision" in f):
            self.fail("write: %s" % f)
        # A write that changed nothing has no revision, and must push nothing.
        await self.check({f["revision"]} if "revision" in f else set())
        if self.rng.randrange(10) == 0:
            await self.churn()
        if self.rng.randrange(8) == 0:
            await self.burst()

    async def burst(self):
        """Both writers pipeline several programs at once (group commit, concurrent
        commits); the deltas must come in revision order and add up to the fresh state."""
        sent = {self.w: [], self.w2: []}
        for i in range(12):
            c = self.w if i % 2 else self.w2
            prog, fails = self.write()
            self.log.append("(burst) " + prog.replace("\n", "; "))
            await c.send({"type": "execute", "program": prog, "id": "b%d" % i})
            sent[c].append((prog, fails))
            if i == 5 and self.rng.randrange(2):
                # a subscription opened amid the writes: its snapshot is exact at some
                # revision among them, and its deltas follow from there (collect)
                self.serial += 1
                name, q = "s%d" % self.serial, self.query()
                sc = self.rng.choice(self.conns)
                self.opening[name] = q
                await sc.send({"type": "execute", "program": ".subscribe %s %s" % (name, q),
                               "id": "open-" + name})
        revisions = set()
        for c, progs in sent.items():
            for i, (prog, fails) in enumerate(progs):
                f = await c.recv()
                if f["type"] != "result" or bool(f["errors"]) != fails:
                    self.fail("burst write %s: %s" % (prog, f))
                if "revision" in f:
                    revisions.add(f["revision"])
        await self.check(revisions)

    async def check(self, revisions):
        self.fresh_cache = {}
        for c in self.conns:
            await self.collect(c, revisions)
            # A `read` snapshot of the connection's queries agrees with its subscriptions
            # (and its revision with the deltas').
            mine = sorted({s["query"] for s in self.subs.values() if s["conn"] is c})
            f = await c.call({"type": "read", "id": "read", "queries": [
                {"name": "q%d" % i, "query": q} for i, q in enumerate(mine)]})
            if f["type"] != "snapshot" or (revisions and f["revision"] < max(revisions)):
                self.fail("read: %s" % f)
            got = {q: rows_of(r) for q, r in zip(mine, f["results"])}
            for name, s in self.subs.items():
                if s["conn"] is c and got[s["query"]] != s["rows"]:
                    self.fail("%s (%s) holds %s, a read at revision %d %s" % (
                        name, s["query"], sorted(s["rows"]), f["revision"],
                        sorted(got[s["query"]])))
        for name, s in self.subs.items():
            want = await self.fresh(s["query"])
            STATS["comparisons"] += 1
            if s["rows"] != want:
                self.fail("%s (%s) holds %s, fresh %s (missing %s, foreign %s)" % (
                    name, s["query"], sorted(s["rows"]), sorted(want),
                    sorted(want - s["rows"]), sorted(s["rows"] - want)))

    async def close(self):
        for c in self.conns + [self.w, self.w2]:
            await still_answers(c)
            await c.ws.close()


STATS = {"changes": 0, "comparisons": 0}
SEED = int(os.environ.get("INPUTLAYER_TEST_SEED", "1"))
STEPS = int(os.environ.get("INPUTLAYER_TEST_SUBS_STEPS", "120"))


async def differential(binary, settings):
    rng = random.Random(SEED)
    args = ["--set", "http.rate_limit.ws_max_messages_per_sec=0"]
    for setting in settings + os.environ.get("INPUTLAYER_TEST_SUBS_SET", "").split():
        args += ["--set", setting]
    STATS.update(changes=0, comparisons=0)
    with OwnServer(binary, args) as srv:
        for i, rs in enumerate(RULESETS):
            r = Run(rng, rs, 5 + i % 3)
            await r.setup(srv)
            for _ in range(STEPS):
                await r.step()
            await r.close()
    print("     %s: %d rule sets x %d random writes (seed %d): %d delta rows applied, %d "
          "states compared" % (" ".join(settings) or "defaults", len(RULESETS), STEPS, SEED,
                               STATS["changes"], STATS["comparisons"]))
    assert STATS["changes"] > STEPS and STATS["comparisons"] > STEPS, STATS


async def t_subs_random_differential(binary):
    """Durable commits (a sync before the deltas, group commit across the writers), then
    commits that wait for no sync, where jobs finish as soon as they ran."""
    await differential(binary, [])
    await differential(binary, ["storage.persist.durability_mode=async"])


TESTS = [t_subs_random_differential]
