"""Randomized differential test of standing queries over /ws: random writes (single facts,
batches, deletes, conditional deletes, programs of several statements, no-ops) against
knowledge graphs with recursive, negated, aggregated and joined rules, watched by
`.subscribe` subscriptions and `subscribe` groups on several connections, most of them
keyed families (queries that differ only in a goal constant). After every write each
subscriber's state (its snapshot plus every delta) must equal a fresh `?query` of the
same text (on a connection with a session fact, so evaluated afresh rather than read
from a maintained relation); a delta must insert only absent rows and retract only
present ones, carry the write's revision, and follow the last seq, and deltas must
reach each connection in revision order while two connections pipeline writes at once;
subscribers write too (their reply first, then their deltas), and a `read` snapshot of
each connection's queries must agree with its subscriptions; subscriptions come and go
during the run (each new snapshot equal to the fresh result), and some open amid the
pipelined writes (their deltas must start after their snapshot's revision and add up to
the fresh state). t_subs_random_held does the same while one subscriber connection does not read:
its subscriptions hold their changes, netted, and must still add up, in revision order.

Besides the fixed rule sets, random programs (eval_random.Program).

Seeded: INPUTLAYER_TEST_SEED (default 1) and INPUTLAYER_TEST_SUBS_STEPS (writes per
rule set, default 120), INPUTLAYER_TEST_SUBS_PROGRAMS (random programs, default 4);
INPUTLAYER_TEST_SUBS_SET: more server settings (`key=value` separated by spaces, e.g.
`storage.persist.durability_mode=async`). A failure prints the seed and the last
writes."""

import asyncio
import json
import os
import random
import re

import eval_random
from common import OwnServer, connect, is_tsan, prometheus, run
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
    {"name": "triples",
     "rules": ["+link(X, Z) <- t(X, _, Z)", "+back(X, Y, Z) <- t(X, Y, Z), t(Z, Y, X)",
               "+via(X, Y, W) <- t(X, Y, Z), t(Z, Y, W), X != W"],
     "queries": ["?t(%K, %K, Z)", "?t(%K, Y, %K)", "?t(X, %K, Z)", "?back(%K, Y, Z)",
                 "?via(%K, %K, W)", "?link(%K, Z)", "?via(X, Y, W)"],
     "rels": ["t/3"],
     "later": ["+link(X, Z) <- t(Z, _, X)"]},
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

def random_rulesets(rng, count):
    """Rule sets of random stratified programs (eval_random.Program: joins, constants,
    recursion, negation, comparisons, computed values, aggregates) over e, f and g/1, each
    relation watched whole and keyed on a column, and a clause added halfway."""
    sets = []
    for i in range(count):
        prog = eval_random.Program(rng)
        queries = []
        for name, n in sorted(prog.arity.items()):
            cols = ["X", "Y"][:n]
            queries.append("?%s(%s)" % (name, ", ".join(cols)))
            for k in range(n):
                queries.append("?%s(%s)" % (name, ", ".join(
                    "%K" if j == k else cols[j] for j in range(n))))
        # halfway, one more clause for a relation that is not aggregated
        name = rng.choice(sorted(set(prog.arity) - prog.aggregated))
        later = prog.text(prog.clause(name, int(name[1:])))
        sets.append({"name": "program%d" % i, "rules": [prog.text(c) for c in prog.clauses],
                     "queries": queries, "rels": ["e", "f", "g/1"], "later": [later]})
    return sets


SUBSCRIBERS = 3  # connections
SINGLES = 6      # `.subscribe` subscriptions per connection at the start
GROUP = 4        # members of the one `subscribe` group per connection


def arity(rel):
    """A rule set's relation: its name and width ("t/3"; binary when not given)."""
    name, _, n = rel.partition("/")
    return name, int(n or 2)


class Failure(AssertionError):
    pass


def row(r):
    """A row as a set element that keeps 1 and 1.0 apart (distinct stored values)."""
    return tuple(json.dumps(v) for v in r)


def rows_of(f):
    if f.get("truncated"):
        raise Failure("a truncated result (max_result_rows is too low for the test): %s"
                      % str(f)[:300])
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
        self.counts = {}   # deltas per subscription or group since the counts were reset

    def where(self):
        return "seed %s, rule set %s, after %d writes:\n  %s" % (
            SEED, self.rs["name"], len(self.log), "\n  ".join(self.log[-12:]))

    def fail(self, msg):
        raise Failure("%s\n%s" % (msg, self.where()))

    def query(self):
        q = self.rng.choice(self.rs["queries"])
        # each %K a key of its own: a family keyed on one or two columns
        return re.sub("%K", lambda m: str(self.rng.randint(1, self.domain + 1)), q)

    async def run(self, c, program):
        """The reply to a program on a subscriber connection: after a held round, the notice
        of the notifications it missed may come first (t_subs_random_held)."""
        f = await run(c, program)
        while f.get("code") == "notifications_missed":
            f = await c.recv()
        return f

    async def fresh(self, q):
        if q not in self.fresh_cache:
            f = await run(self.oracle, q)
            if f["type"] != "result":
                self.fail("fresh %s: %s" % (q, f))
            self.fresh_cache[q] = rows_of(f)
        return self.fresh_cache[q]

    async def subscribe_one(self, c):
        self.serial += 1
        name, q = "s%d" % self.serial, self.query()
        f = await self.run(c, ".subscribe %s %s" % (name, q))
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
        while f.get("code") == "notifications_missed":  # as in Run.run
            f = await c.recv()
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
        # The oracle: a session fact of its own makes its queries evaluate the rules
        # afresh, never reading the maintained relations that unbound queries create.
        self.oracle = await connect(srv, kg=kg)
        f = await run(self.oracle, "oracle_session_marker(0)")
        assert f["type"] == "result" and f["errors"] == [], f
        for rel in self.rs["rels"]:
            name, n = arity(rel)
            await run(self.w, "+%s[%s]" % (name, ", ".join(
                "(%s)" % ", ".join(str(self.rng.randint(1, self.domain)) for _ in range(n))
                for _ in range(self.domain * n))))
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
        rel, n = arity(rng.choice(self.rs["rels"]))
        cols = ", ".join("XYZ"[:n])

        def fact(width=n):
            return "(%s)" % ", ".join(self.value(i == 0) for i in range(width))
        kind = rng.randrange(13)
        if kind < 4:
            return "+%s%s" % (rel, fact()), False
        if kind < 8:
            return "-%s%s" % (rel, fact()), False
        if kind == 8:
            return "+%s[%s]" % (rel, ", ".join(fact() for _ in range(rng.randint(2, 4)))), False
        if kind == 9:
            return "-%s(%s) <- %s(%s), X = %s" % (rel, cols, rel, cols, self.value(True)), False
        if kind == 10:
            other, m = arity(rng.choice(self.rs["rels"]))
            return "-%s%s\n+%s%s\n+%s%s" % (rel, fact(), other, fact(m), rel, fact()), False
        if kind == 11:
            # a failing statement (a fact of another width) after writes: the program is
            # rolled back whole
            wrong = "(1, 2, 3)" if n == 2 else "(1, 2)"
            return "+%s%s\n-%s%s\n+%s%s" % (rel, fact(), rel, fact(), rel, wrong), True
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
            if f["type"] in ("result_start", "result_chunk", "result_end") or \
                    f.get("code") == "notifications_missed":
                continue  # the big replies that held a connection back (t_subs_random_held)
            if f["type"] == "subscription_reset":
                # fell too far behind: what it held is dropped, and the name is free
                g = self.groups.pop(f["subscription"], None)
                for member in (g["members"].values() if g else ()):
                    del self.subs[member]
                if g is None and self.subs.pop(f["subscription"], None) is None:
                    self.fail("reset of an unknown subscription: %s" % f)
                STATS["resets"] += 1
                continue
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
                self.counts[f["subscription"]] = self.counts.get(f["subscription"], 0) + 1
                self.apply(f["subscription"], f["inserted"], f["retracted"], "delta")
            elif f["type"] == "subscription_group_delta":
                g = self.groups.get(f["subscription"])
                if g is None or g["conn"] is not c or f["seq"] != g["seq"] + 1:
                    self.fail("group delta out of order or unknown: %s" % f)
                g["seq"] = f["seq"]
                self.counts[f["subscription"]] = self.counts.get(f["subscription"], 0) + 1
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
        f = await self.run(c, ".unsubscribe %s" % name)
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
        f = await self.run(writer, prog)
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
            while f.get("code") == "notifications_missed":  # after a stall (held rounds)
                f = await c.recv()
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
        """Every connection still answers a ping; after a held round, the notice of the
        notifications a subscriber missed may come first, if nothing it sent since took it
        (as in Run.run)."""
        for c in self.conns + [self.w, self.w2, self.oracle]:
            f = await c.call({"type": "ping", "id": "alive"})
            while f.get("code") == "notifications_missed":
                f = await c.recv()
            assert f == {"type": "pong", "id": "alive"}, f
            await c.ws.close()


STATS = {"changes": 0, "comparisons": 0, "resets": 0}
SEED = int(os.environ.get("INPUTLAYER_TEST_SEED", "1"))
STEPS = int(os.environ.get("INPUTLAYER_TEST_SUBS_STEPS", "120"))
PROGRAMS = int(os.environ.get("INPUTLAYER_TEST_SUBS_PROGRAMS", "4"))


async def differential(binary, settings):
    rng = random.Random(SEED)
    args = ["--set", "http.rate_limit.ws_max_messages_per_sec=0"]
    for setting in settings + os.environ.get("INPUTLAYER_TEST_SUBS_SET", "").split():
        args += ["--set", setting]
    STATS.update(changes=0, comparisons=0, resets=0)
    with OwnServer(binary, args) as srv:
        for i, rs in enumerate(RULESETS + random_rulesets(rng, PROGRAMS)):
            r = Run(rng, rs, 5 + i % 3)
            await r.setup(srv)
            for _ in range(STEPS):
                await r.step()
            await r.close()
    print("     %s: %d rule sets x %d random writes (seed %d): %d delta rows applied, %d "
          "states compared" % (" ".join(settings) or "defaults", len(RULESETS) + PROGRAMS,
                               STEPS, SEED,
                               STATS["changes"], STATS["comparisons"]))
    assert STATS["changes"] > STEPS and STATS["comparisons"] > STEPS, STATS


async def t_subs_random_differential(binary):
    """Durable commits (a sync before the deltas, group commit across the writers), then
    commits that wait for no sync, where jobs finish as soon as they ran."""
    await differential(binary, [])
    await differential(binary, ["storage.persist.durability_mode=async"])


# Results stay under it (domain 4: at most 10 x 8 rows of a closure), and a subscription
# whose held changes pass it is reset.
HELD_CAP = 100


async def t_subs_random_held(binary):
    """A subscriber connection that stops reading while random writes go on: its
    subscriptions (and its group) hold their changes, netted, and send them as one delta
    each when it reads again; the deltas must still be exact set differences, in order,
    and add up to the fresh state. Max_result_rows is low enough that some of them may
    fall too far behind and be reset instead (then dropped from the check)."""
    if is_tsan(binary):
        return  # timing-bound: run by the normal and ASan builds, not under ThreadSanitizer
    rng = random.Random(SEED)
    args = ["--set", "http.rate_limit.ws_max_messages_per_sec=0",
            "--set", "storage.performance.max_result_rows=%d" % HELD_CAP]
    STATS.update(changes=0, comparisons=0, resets=0)
    held = netted = 0
    # The job that releases held deltas starts 50 ms late: a reply sent meanwhile (the
    # check's ping) must still wait for it, or the check would miss the held changes.
    with OwnServer(binary, args, env={"INPUTLAYER_TEST_RELEASE_DELAY_NS": "50000000"}) as srv:
        for rs in (RULESETS[0], RULESETS[2]):
            r = Run(rng, rs, 4)
            await r.setup(srv)
            pad = "z" * 50000
            for k in range(4):  # ?big(X, Y) answers 2.4 MB: 40 of them hold a reader back
                f = await run(r.w, "+big[%s]" % ", ".join(
                    '(%d, "%s")' % (k * 12 + i, pad) for i in range(12)))
                assert f["type"] == "result" and f["errors"] == [], f["type"]
            for _ in range(3):
                slow = r.conns[0]
                for i in range(40):
                    await slow.send({"type": "execute", "id": "big%d" % i,
                                     "program": "?big(X, Y)"})
                for _ in range(600):
                    if prometheus(srv).get("inputlayer_ws_connections_backpressured", 0) >= 1:
                        break
                    await asyncio.sleep(0.1)
                else:
                    raise AssertionError("the slow subscriber was not held back")
                revisions = set()
                for _ in range(12):
                    prog, fails = r.write()
                    r.log.append("(held) " + prog.replace("\n", "; "))
                    f = await run(r.w, prog)
                    if f["type"] != "result" or bool(f["errors"]) != fails:
                        r.fail("write: %s" % f)
                    if "revision" in f:
                        revisions.add(f["revision"])
                r.counts = {}
                await r.check(revisions)
                # Held and netted: a query's subscription on the slow reader gets no more
                # deltas than one on a reading connection, and (somewhere) fewer.
                fast, slowest = {}, {}
                for name, sub in r.subs.items():
                    if sub.get("group"):
                        continue
                    n, side = r.counts.get(name, 0), slowest if sub["conn"] is slow else fast
                    side[sub["query"]] = max(side.get(sub["query"], 0), n)
                for q in set(fast) & set(slowest):
                    if slowest[q] > fast[q]:
                        r.fail("%s: %d deltas while held, %d while read" % (
                            q, slowest[q], fast[q]))
                    netted += slowest[q] < fast[q]
                held += 1
                for _ in range(2):
                    await r.step()
                while sum(1 for s in r.subs.values() if not s.get("group")) < 2 * SINGLES:
                    await r.subscribe_one(rng.choice(r.conns))
            await r.close()
    print("     %d held rounds: %d delta rows applied, %d states compared, %d resets, %d "
          "netted" % (held, STATS["changes"], STATS["comparisons"], STATS["resets"], netted))
    assert netted, "no held round netted any subscription's deltas"


TESTS = [t_subs_random_differential, t_subs_random_held]
