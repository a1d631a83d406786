"""Randomized check of `.why` proof trees over /ws (a server of its own): random facts
(integers, and now and then a float: 1 and 1.0 are distinct values) under recursive,
negated, compared and joined rules, then `.why full ?rule(X, Y)` for each rule. Every
row's DAG must be a valid proof of its row: a rule node's rule, with its bindings, gives
its conclusion as its head and each child as its body literal (a stored fact that
exists, a derived tuple proven in turn, a negated atom that is absent), its comparisons
hold under the bindings, its alternatives are rule nodes of the same conclusion, a
conclusion is one node, and no proof goes round a cycle. The rows must be the query's
rows. (`X != Z`
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

    def tree(self, t, row):
        """One row's DAG: its root concludes the row, every node is a valid step, a
        conclusion is one node (alternatives aside), and no proof goes round a cycle."""
        assert t["version"] == 1 and len(t["roots"]) == 1, t
        nodes = t["nodes"]
        root = nodes[t["roots"][0]]
        assert [exact(v) for v in root["conclusion"]["args"]] == [exact(v) for v in row], \
            (root, row)
        alts = {a for n in nodes.values() for a in n.get("alternatives", [])}
        seen = {}
        for nid, n in nodes.items():
            if nid in alts or n["kind"] == "negation":
                continue
            c = n["conclusion"]
            key = (c["pred"], tuple(exact(v) for v in c["args"]))
            assert key not in seen, ("a conclusion written twice", nid, seen.get(key))
            seen[key] = nid
        for nid, n in nodes.items():
            self.node(nodes, nid, n)
        state = {}

        def walk(nid):
            assert state.get(nid) != 1, ("a circular proof through", nid)
            if state.get(nid) == 2:
                return
            state[nid] = 1
            n = nodes[nid]
            for ch in n.get("children", []) + n.get("alternatives", []):
                assert ch in nodes, ("a dangling id", ch)
                walk(ch)
            state[nid] = 2
        walk(t["roots"][0])
        assert set(state) == set(nodes), ("unreachable nodes", set(nodes) - set(state))

    def node(self, nodes, nid, n):
        self.nodes += 1
        kind = n["kind"]
        if kind == "negation":
            return
        c = n["conclusion"]
        tup = tuple(exact(v) for v in c["args"])
        assert tup in self.rel[c["pred"]], ("not in its relation", c)
        if kind == "fact":
            assert n["source"] == "edb", n
            return
        assert kind == "rule" and n["source"] == "derived", n
        head, body = n["rule_id"].split(" <- ")
        m = ATOM.match(head)
        assert m and m.group(2) == c["pred"], (head, c)
        b = n["bindings"]
        assert self.atom_tuple(m.group(3), b) == tup, ("head", n["rule_id"], b, tup)
        children = list(n.get("children", []))
        for lit in split_body(body):
            m = ATOM.match(lit)
            if m and m.group(1):
                child = nodes[children.pop(0)]
                assert child["kind"] == "negation", (lit, child)
                pattern = self.atom_tuple(m.group(3), b)
                assert child["conclusion"]["pred"] == m.group(2), (lit, child)
                assert not any(self.matches(pattern, t, m.group(3))
                               for t in self.rel[m.group(2)]), \
                    ("a negated atom that holds", lit, b)
            elif m:
                child = nodes[children.pop(0)]
                pattern = self.atom_tuple(m.group(3), b)
                assert child["kind"] in ("fact", "rule"), (lit, child)
                assert child["conclusion"]["pred"] == m.group(2), (lit, child)
                got = tuple(exact(v) for v in child["conclusion"]["args"])
                assert self.matches(pattern, got, m.group(3)), ("child", lit, b, got)
            else:
                m = CMP.match(lit)
                assert m, lit
                lhs, rhs = self.term(m.group(1), b), self.term(m.group(3), b)
                op, both_vars = m.group(2), m.group(3)[0].isupper()
                if both_vars and op in ("=", "!="):
                    holds = (lhs == rhs) == (op == "=")  # strict: 1 and 1.0 differ
                else:
                    holds = OPS[op](json.loads(lhs), json.loads(rhs))
                assert holds, ("a comparison that fails", lit, b)
        assert not children, ("children beyond the body", children)
        for a in n.get("alternatives", []):
            alt = nodes[a]
            assert alt["kind"] == "rule" and alt["conclusion"] == c, (alt, c)
            assert "alternatives" not in alt, alt


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
                for t, row in zip(trees, f["rows"]):
                    try:
                        checker.tree(t, row)
                    except AssertionError as e:
                        raise AssertionError("seed %d, round %d, %s row %s: %s" % (
                            seed, r, rel, row, e))
                rows += len(trees)
                nodes += checker.nodes
        await c.ws.close()
    print("     %d rounds: %d rows' proof trees checked, %d nodes (seed %d)"
          % (rounds, rows, nodes, seed))
    assert rows > rounds, rows


TESTS = [t_why_random]
