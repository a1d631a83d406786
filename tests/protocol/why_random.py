"""Randomized check of `.why` proof trees over /ws (a server of its own): random facts
(integers, and now and then a float: 1 and 1.0 are distinct values) under recursive,
negated, compared and joined rules, then `.why full ?rule(X, Y)` for each rule. Every
tree must be a valid proof of its row: a derivation's rule, with its bindings, gives the
node's tuple as its head and each child as its body literal (a stored fact that exists,
a derived tuple proven in turn or referenced once proven, a negated atom that is absent,
a comparison that holds), and a reference names a tuple already proven, never one whose
proof is still open (no circular proof). The rows must be the query's rows. (`X != Z`
between two variables is strict, as `=` is: 1 and 1.0 differ; against a constant,
numeric.)

Seeded: INPUTLAYER_TEST_SEED (default 1); INPUTLAYER_TEST_WHY_ROUNDS (default 8)."""

import json
import operator
import re

from common import NO_MESSAGE_RATE, OwnServer, connect, run, seeded

RULES = ["+reach(X, Y) <- edge(X, Y)",
         "+reach(X, Z) <- reach(X, Y), edge(Y, Z)",
         "+two(X, Z) <- edge(X, Y), edge(Y, Z), X != Z",
         "+open(X, Y) <- label(X, Y), !reach(X, Y), Y < 4",
         "+hot(X, Y) <- label(X, 1), reach(X, Y), !edge(Y, X)"]
DERIVED = ["reach", "two", "open", "hot"]
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
       "=": operator.eq, "!=": operator.ne}
ATOM = re.compile(r"^(!?)(\w+)\((.*)\)$")
CMP = re.compile(r"^(\w+) (<=|>=|!=|<|>|=) (\S+)$")


def exact(v):
    """A value that keeps 1 and 1.0 apart."""
    return json.dumps(v)


def split_body(body):
    out, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    return out + [cur.strip()]


class Checker:
    def __init__(self, relations):
        self.rel = relations  # name -> set of exact tuples
        self.done = {}        # proven node id -> atom
        self.open = set()     # node ids whose proof is in progress
        self.nodes = 0

    def term(self, t, bindings):
        if t == "_":
            return None  # anything
        if re.match(r"^[A-Z_]\w*$", t):
            assert t in bindings, ("unbound", t, bindings)
            return exact(bindings[t])
        return exact(json.loads(t))

    def atom_tuple(self, args, bindings):
        return tuple(self.term(a.strip(), bindings) for a in args.split(","))

    def matches(self, pattern, tup, args):
        """A variable's binding matches strictly; a constant in an atom matches numerically
        (the constant 1 matches a stored 1.0)."""
        if len(pattern) != len(tup):
            return False
        for p, t, a in zip(pattern, tup, args.split(",")):
            if p is None or p == t:
                continue
            a, v = a.strip(), json.loads(t)
            if a[0].isupper() or not isinstance(v, (int, float)) or isinstance(v, bool):
                return False
            if abs(json.loads(p) - v) >= 1e-10:
                return False
        return True

    def node(self, n):
        self.nodes += 1
        kind = n["kind"]
        if kind == "ref":
            assert n["id"] in self.done, ("reference to an unproven or open node", n)
            assert self.done[n["id"]] == n["atom"], (n, self.done[n["id"]])
            return
        tup = tuple(exact(v) for v in n["tuple"])
        assert tup in self.rel[n["relation"]], ("not in its relation", n["atom"])
        if kind == "fact":
            return
        assert kind == "derived", n
        assert n["id"] not in self.open and n["id"] not in self.done, ("id reused", n)
        self.open.add(n["id"])
        assert n["derivations"], ("a derived node without derivations", n["atom"])
        for d in n["derivations"]:
            self.derivation(d, n["relation"], tup)
        self.open.remove(n["id"])
        self.done[n["id"]] = n["atom"]

    def derivation(self, d, relation, tup):
        assert d["kind"] == "rule", d
        head, body = d["rule"].split(" <- ")
        m = ATOM.match(head)
        assert m and m.group(2) == relation, (head, relation)
        b = d["bindings"]
        assert self.atom_tuple(m.group(3), b) == tup, ("head", d["rule"], b, tup)
        lits = split_body(body)
        assert len(lits) == len(d["children"]), (lits, d["children"])
        for lit, child in zip(lits, d["children"]):
            m = ATOM.match(lit)
            if m and m.group(1):
                assert child["kind"] == "negation", (lit, child)
                pattern = self.atom_tuple(m.group(3), b)
                assert not any(self.matches(pattern, t, m.group(3))
                               for t in self.rel[m.group(2)]), \
                    ("a negated atom that holds", lit, b)
            elif m:
                pattern = self.atom_tuple(m.group(3), b)
                assert child["kind"] in ("fact", "derived", "ref"), (lit, child)
                assert child["atom"].startswith(m.group(2) + "("), (lit, child)
                if child["kind"] != "ref":
                    got = tuple(exact(v) for v in child["tuple"])
                    assert self.matches(pattern, got, m.group(3)), ("child", lit, b, got)
                self.node(child)
            else:
                m = CMP.match(lit)
                assert m and child["kind"] == "comparison", (lit, child)
                lhs, rhs = self.term(m.group(1), b), self.term(m.group(3), b)
                assert exact(child["lhs"]) == lhs and exact(child["rhs"]) == rhs, (lit, child)
                op, both_vars = m.group(2), m.group(3)[0].isupper()
                if both_vars and op in ("=", "!="):
                    holds = (lhs == rhs) == (op == "=")  # strict: 1 and 1.0 differ
                else:
                    holds = OPS[op](json.loads(lhs), json.loads(rhs))
                assert holds, ("a comparison that fails", lit, b)


def value(rng, domain):
    k = rng.randint(1, domain)
    return "%d.0" % k if rng.randrange(12) == 0 else str(k)


async def t_why_random(binary):
    seed, rounds, rng = seeded("INPUTLAYER_TEST_WHY_ROUNDS", 8)
    rows = nodes = 0
    with OwnServer(binary, NO_MESSAGE_RATE) as srv:
        c = await connect(srv)
        for r in range(rounds):
            kg = "why_random_%d" % r
            assert (await run(c, ".kg create %s" % kg))["type"] == "result"
            await run(c, ".kg use %s" % kg)
            domain = rng.randint(3, 6)
            for rel, n in (("edge", rng.randint(3, 12)), ("label", rng.randint(1, 6))):
                facts = ", ".join("(%s, %s)" % (value(rng, domain), value(rng, domain))
                                  for _ in range(n))
                assert (await run(c, "+%s[%s]" % (rel, facts)))["errors"] == []
            for rule in RULES:
                f = await run(c, rule)
                assert f["type"] == "result" and f["errors"] == [], (rule, f)
            relations = {}
            for rel in ["edge", "label"] + DERIVED:
                f = await run(c, "?%s(X, Y)" % rel)
                assert f["type"] == "result" and not f["truncated"], f
                relations[rel] = {tuple(exact(v) for v in row) for row in f["rows"]}
            for rel in DERIVED:
                f = await run(c, ".why full ?%s(X, Y)" % rel)
                assert f["type"] == "result", f
                got = {tuple(exact(v) for v in row) for row in f["rows"]}
                assert got == relations[rel], (seed, r, rel, got, relations[rel])
                trees = f.get("proof_trees", [])
                assert len(trees) == len(f["rows"]), (seed, r, rel, len(trees))
                checker = Checker(relations)
                for t in trees:
                    try:
                        checker.node(t["proof"])
                    except AssertionError as e:
                        raise AssertionError("seed %d, round %d, %s row %s: %s" % (
                            seed, r, rel, t["row"], e))
                rows += len(trees)
                nodes += checker.nodes
        await c.ws.close()
    print("     %d rounds: %d rows' proof trees checked, %d nodes (seed %d)"
          % (rounds, rows, nodes, seed))
    assert rows > rounds, rows


TESTS = [t_why_random]
