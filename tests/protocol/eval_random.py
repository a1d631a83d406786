"""Randomized differential test of rule evaluation (a server of its own) against a naive
evaluator written here: random stratified programs (joins, constants, wildcards,
positive recursion, negation of base and lower relations, comparisons, a value computed
with + - * or % or copied (W = X * Y, W = X % 2, W = X), aggregates:
count, sum, min, max, count_distinct, avg, grouped or global) over random
facts, integers and now and then a float (2.0 is not 2 to a join or a set, but a
constant 2 matches it), each registered as persistent rules in a fresh knowledge graph.
Every derived relation must answer exactly the naive fixpoint, queried whole and with
one argument bound (the engine restricts bound queries by demand), both on a connection
without session state (maintained relations may answer) and on one with session facts
and a session rule (one more clause of a derived relation) of its own, which its
queries see and every rule evaluates over (evaluated afresh).

A second test keeps each program's relations maintained through a random sequence of
writes: programs of inserts and deletes of base facts (one fact, a list, several
statements in one atomic program; present, absent and repeated ones), conditional
deletes over base and derived relations, clauses added to a rule and removed from it;
after each write every derived relation must answer the naive fixpoint of the facts and
clauses then in force, and rules with ranking aggregates over them (top_k,
top_k_threshold, within_radius), which the naive evaluator does not model, what a
connection evaluating afresh answers.

Seeded: INPUTLAYER_TEST_SEED (default 1); INPUTLAYER_TEST_EVAL_ROUNDS (default 100),
INPUTLAYER_TEST_EVAL_WRITE_ROUNDS (default 40 programs, 25 writes each)."""

import json
import math
import operator

from common import NO_MESSAGE_RATE, OwnServer, connect, run, seeded

BASE = {"e": 2, "f": 2, "g": 1}
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
       "=": operator.eq, "!=": operator.ne}
VARS = "XYZW"
DOMAIN = 5


class Program:
    """Derived relations p0..pn-1, each with clauses; pi uses base relations and pj with
    j <= i positively (recursion through itself), and base relations or pj with j < i
    negated: stratified by construction."""

    def __init__(self, rng):
        self.rng = rng
        self.arity = {}
        self.clauses = []  # (head rel, head terms, body literals, aggregate or None)
        self.aggregated = set()
        for i in range(rng.randint(2, 4)):
            name = "p%d" % i
            if i and rng.randrange(3) == 0:
                # one clause over lower strata only, its head grouped (or global) with an
                # aggregate of a body variable
                self.arity[name] = rng.randint(1, 2)
                self.aggregated.add(name)
                self.clauses.append(self.aggregate_clause(name, i))
                continue
            self.arity[name] = rng.randint(1, 2)
            for _ in range(rng.randint(1, 3)):
                self.clauses.append(self.clause(name, i))

    def relations(self, below):
        """The base relations and p0..p(below - 1), with their arities."""
        rels = dict(BASE)
        rels.update({"p%d" % j: self.arity["p%d" % j] for j in range(below)
                     if "p%d" % j in self.arity})
        return rels

    def atoms(self, rels, most):
        """One to `most` positive atoms over rels, binding at least one variable; and the
        variables they bind."""
        while True:
            body, bound = [], set()
            for _ in range(self.rng.randint(1, most)):
                rel = self.rng.choice(sorted(rels))
                args = [self.term(bound) for _ in range(rels[rel])]
                body.append(("atom", rel, args))
                bound |= {a for a in args if a in VARS}
            if bound:
                return body, bound

    def aggregate_clause(self, name, i):
        rng = self.rng
        body, bound = self.atoms(self.relations(i), 2)
        if rng.randrange(2):
            a = rng.choice(sorted(bound))
            body.append(("cmp", rng.choice(sorted(OPS)), [a, str(rng.randint(1, DOMAIN))]))
        agg = (rng.choice(["count", "sum", "min", "max", "count_distinct", "avg"]),
               rng.choice(sorted(bound)))
        head = [rng.choice(sorted(bound))] if self.arity[name] == 2 else []
        return name, head, body, agg

    def term(self, bound_pool):
        rng = self.rng
        k = rng.randrange(10)
        if k < 6 or not bound_pool:
            return rng.choice(VARS[:3])
        if k < 8:
            return str(rng.randint(1, DOMAIN))
        return "_"

    def clause(self, name, i):
        rng = self.rng
        lower = self.relations(i)
        body, bound = self.atoms(self.relations(i + 1), 3)
        if rng.randrange(3) == 0 and all(lit[1] != name for lit in body):
            # W computed from the body's values (not in a recursive clause: it could
            # count up forever); a constant divisor, so never a division by zero
            op = rng.choice("+-*%=")  # "=": W = a, an alias
            a = rng.choice(sorted(bound))
            b = (str(rng.randint(1, 3)) if op == "%" or rng.randrange(2)
                 else rng.choice(sorted(bound)))
            body.append(("let", op, [a, b]))
            bound = bound | {"W"}
        head = [rng.choice(sorted(bound)) for _ in range(self.arity[name])]
        # a recursive clause needs a base case elsewhere to matter; fine either way
        for _ in range(rng.randint(0, 2)):
            k = rng.randrange(3)
            if k == 0:
                rel = rng.choice(sorted(lower))
                args = [rng.choice(sorted(bound)) if rng.randrange(4) else
                        str(rng.randint(1, DOMAIN)) for _ in range(lower[rel])]
                body.append(("not", rel, args))
            else:
                a = rng.choice(sorted(bound))
                b = rng.choice(sorted(bound)) if k == 1 else str(rng.randint(1, DOMAIN))
                body.append(("cmp", rng.choice(sorted(OPS)), [a, b]))
        return name, head, body, None

    def text(self, c):
        name, head, body, agg = c
        lits = []
        for kind, rel, args in body:
            if kind == "cmp":
                lits.append("%s %s %s" % (args[0], rel, args[1]))
            elif kind == "let" and rel == "=":
                lits.append("W = %s" % args[0])
            elif kind == "let":
                lits.append("W = %s %s %s" % (args[0], rel, args[1]))
            else:
                lits.append("%s%s(%s)" % ("!" if kind == "not" else "", rel, ", ".join(args)))
        terms = head + (["%s<%s>" % agg] if agg else [])
        return "+%s(%s) <- %s" % (name, ", ".join(terms), ", ".join(lits))


def value(t, env):
    """A term's value: a variable's binding, or an integer constant ("i", n)."""
    return env[t] if t in VARS else ("i", int(t))


def numeric_eq(v, c):
    """A value against a number, as an atom's constant or `V = c` compares: numerically."""
    return abs(v[1] - c[1]) < 1e-10


def matches(args, t, env, atom=None):
    """Whether tuple t fits the atom's arguments under env: bound variables strictly (1
    and 1.0 differ), constants numerically, `_` anything; returns the extended env or
    None. A positive atom's `_` is a column of the binding (it counts in aggregates):
    recorded as "_<atom>_<position>"."""
    e2 = dict(env)
    for pos, (a, v) in enumerate(zip(args, t)):
        if a == "_":
            if atom is not None:
                e2["_%d_%d" % (atom, pos)] = v
            continue
        if a in VARS:
            if a in e2 and e2[a] != v:
                return None
            e2[a] = v
        elif not numeric_eq(v, value(a, e2)):
            return None
    return e2


def compute(op, args, env):
    """`W = a op b`: integer arithmetic when both are integers, else floating point."""
    if op == "=":
        return value(args[0], env)
    (tx, x), (ty, y) = value(args[0], env), value(args[1], env)
    if op == "%":
        r = math.fmod(x, y)
    else:
        r = {"+": x + y, "-": x - y, "*": x * y}[op]
    return ("i", int(r)) if tx == ty == "i" else ("f", float(r))


def holds(kind, op, args, env, db):
    if kind == "cmp":
        x, y = value(args[0], env), value(args[1], env)
        if args[1] in VARS and op in ("=", "!="):
            return (x == y) == (op == "=")  # variable against variable: strict
        return OPS[op](x[1], y[1])
    # a negation: no tuple fits (its variables are bound)
    return not any(matches(args, t, env) is not None for t in db[op])


def solutions(body, db, env=None):
    """Every binding of the body's variables over db (positive atoms first, in order;
    negations and comparisons once their variables are bound). Values are ("i", n) or
    ("f", x): joins are strict, constants numeric, as in the engine."""
    env = env or {}
    atoms = [lit for lit in body if lit[0] == "atom"]
    checks = [lit for lit in body if lit[0] != "atom"]

    def walk(k, env):
        if k == len(atoms):
            env = dict(env)
            for kind, op, args in checks:  # in order: W is computed before its checks
                if kind == "let":
                    env["W"] = compute(op, args, env)
                elif not holds(kind, op, args, env, db):
                    return
            yield env
            return
        _, rel, args = atoms[k]
        for t in db[rel]:
            e2 = matches(args, t, env, k)
            if e2 is not None:
                yield from walk(k + 1, e2)
    yield from walk(0, env)


def aggregate(clause, db):
    """An aggregating clause: per group (the head's variables), over its distinct full
    body bindings (placeholders included): count them, sum the values as integers
    (floats truncated), min and max in the value order (any int before any float), count
    the distinct values, or average them as floats. An empty group has no row."""
    _, head, body, (kind, var) = clause
    groups = {}
    for env in solutions(body, db):
        groups.setdefault(tuple(env[h] for h in head), set()).add(
            tuple(sorted(env.items())))
    out = set()
    for key, bindings in groups.items():
        vals = [dict(b)[var] for b in bindings]
        order = sorted(vals, key=lambda v: (v[0] != "i", v[1]))
        if kind == "count":
            r = ("i", len(bindings))
        elif kind == "sum":
            r = ("i", sum(int(v[1]) for v in vals))
        elif kind == "min":
            r = order[0]
        elif kind == "max":
            r = order[-1]
        elif kind == "count_distinct":
            r = ("i", len(set(vals)))
        else:
            r = ("f", sum(float(v[1]) for v in vals) / len(vals))
        out.add(key + (r,))
    return out


def evaluate(prog, facts):
    db = {rel: set(ts) for rel, ts in facts.items()}
    for name in prog.arity:
        db[name] = set()
    for name in sorted(prog.arity):  # p0, p1, ...: each stratum to its fixpoint
        mine = [c for c in prog.clauses if c[0] == name]
        if name in prog.aggregated:
            db[name] = aggregate(mine[0], db)
            continue
        while True:
            new = set()
            for _, head, body, _ in mine:
                for env in solutions(body, db):
                    new.add(tuple(env[h] for h in head))
            if new <= db[name]:
                break
            db[name] |= new
    return db


def text(v):
    return "%d" % v[1] if v[0] == "i" else "%r" % v[1]


def rows(f):
    return sorted(json.dumps(r) for r in f["rows"])


async def fresh_graph(c, fresh, kg):
    """A new knowledge graph kg, current on both connections; `fresh` gets a session
    fact of its own there, so that its queries always evaluate afresh."""
    assert (await run(c, ".kg create %s" % kg))["type"] == "result"
    await run(c, ".kg use %s" % kg)
    await run(fresh, ".kg use %s" % kg)
    await run(fresh, "fresh_session_marker(0)")


async def t_eval_random(binary):
    seed, rounds, rng = seeded("INPUTLAYER_TEST_EVAL_ROUNDS", 100)
    compared = 0
    with OwnServer(binary, NO_MESSAGE_RATE) as srv:
        c = await connect(srv)
        fresh = await connect(srv)
        for r in range(rounds):
            await fresh_graph(c, fresh, "eval_%d" % r)
            facts = {}
            for rel, n in BASE.items():
                # now and then a float: 2.0 is another value than 2, matched numerically
                # by constants and strictly by joins
                ts = {tuple(("f", float(k)) if rng.randrange(10) == 0 else ("i", k)
                            for k in (rng.randint(1, DOMAIN) for _ in range(n)))
                      for _ in range(rng.randint(0, 10))}
                facts[rel] = ts
                if ts:
                    f = await run(c, "+%s[%s]" % (rel, ", ".join(
                        "(%s)" % ", ".join(text(v) for v in t) for t in sorted(ts))))
                    assert f["errors"] == [], f
                else:
                    await run(c, "+%s(%s)\n-%s(%s)" % ((rel, ", ".join(["1"] * n)) * 2))
            prog = Program(rng)
            texts = [prog.text(cl) for cl in prog.clauses]
            where = "seed %d, round %d, facts %s, rules:\n  %s" % (
                seed, r, {k: ["(%s)" % ", ".join(text(v) for v in t) for t in sorted(ts)]
                          for k, ts in facts.items()}, "\n  ".join(texts))
            for t in texts:
                f = await run(c, t)
                assert f["type"] == "result" and f["errors"] == [], (where, t, f)
            # the fresh connection's own session facts: its queries see them, and every
            # rule evaluates over the stored facts and them; the other connection's do not
            session = {rel: {tuple(("i", rng.randint(1, DOMAIN)) for _ in range(n))
                             for _ in range(rng.randint(0, 3))} for rel, n in BASE.items()}
            for rel, ts in session.items():
                for t in ts:
                    f = await run(fresh, "%s(%s)" % (rel, ", ".join(text(v) for v in t)))
                    assert f["type"] == "result" and f["errors"] == [], f
            where += "\nsession facts of the fresh connection: %s" % {
                k: sorted(v) for k, v in session.items() if v}
            # and a session rule: one more clause of a derived relation, for its queries only
            name = rng.choice(sorted(set(prog.arity) - prog.aggregated))
            extra = prog.clause(name, int(name[1:]))
            f = await run(fresh, prog.text(extra)[1:])
            assert f["type"] == "result" and f.get("statement_class") == "session_rule", f
            where += "\nsession rule of the fresh connection: %s" % prog.text(extra)[1:]
            want = evaluate(prog, facts)
            prog.clauses.append(extra)
            want_fresh = evaluate(prog, {rel: facts[rel] | session[rel] for rel in BASE})
            for name, n in sorted(prog.arity.items()):
                queries = [("?%s(%s)" % (name, ", ".join(VARS[:n])), lambda t: True)]
                for k in range(1, DOMAIN + 1):
                    args = [str(k)] + list(VARS[1:n])
                    queries.append(("?%s(%s)" % (name, ", ".join(args)),
                                    lambda t, k=k: numeric_eq(t[0], ("i", k))))
                    if n == 2:
                        queries.append(("?%s(X, %d)" % (name, k),
                                        lambda t, k=k: numeric_eq(t[1], ("i", k))))
                    # the same shape for every k: one cached program takes each value
                    queries.append(("?%s(%s), X > %d" % (name, ", ".join(VARS[:n]), k),
                                    lambda t, k=k: t[0][1] > k))
                for q, keep in queries:
                    for conn, model in ((c, want), (fresh, want_fresh)):
                        expect = sorted(json.dumps([v[1] for v in t]) for t in model[name]
                                        if keep(t))
                        f = await run(conn, q)
                        assert f["type"] == "result" and not f["truncated"], (where, q, f)
                        assert rows(f) == expect, (where, q, "got", rows(f), "want", expect)
                        compared += 1
        await c.ws.close()
        await fresh.ws.close()
    print("     %d random programs (seed %d): %d answers equal to the naive evaluation"
          % (rounds, seed, compared))


def fact_text(rel, t):
    return "%s(%s)" % (rel, ", ".join(text(v) for v in t))


def random_tuple(rng, n):
    return tuple(("i", rng.randint(1, DOMAIN)) for _ in range(n))


def fact_writes(rng, facts):
    """A program of one to three statements inserting or deleting base facts (one fact or
    a list; some present, some not), and the facts after it, statement by statement."""
    after = {rel: set(ts) for rel, ts in facts.items()}
    stmts = []
    for _ in range(rng.randint(1, 3)):
        rel = rng.choice(sorted(BASE))
        n = BASE[rel]
        present = sorted(after[rel])
        ts = [rng.choice(present) if present and rng.randrange(2) else random_tuple(rng, n)
              for _ in range(rng.choice([1, 1, 2, 4]))]
        sign = rng.choice("+-")
        if len(ts) == 1:
            stmts.append(sign + fact_text(rel, ts[0]))
        else:
            stmts.append("%s%s[%s]" % (sign, rel, ", ".join(
                "(%s)" % ", ".join(text(v) for v in t) for t in ts)))
        if sign == "+":
            after[rel] |= set(ts)
        else:
            after[rel] -= set(ts)
    return "\n".join(stmts), after


def conditional_delete(rng, prog, facts):
    """`-rel(args) <- body` over base and derived relations: its text and the facts after
    it (the target atom joins the body, evaluated over the state before)."""
    rel = rng.choice(sorted(BASE))
    args = [rng.choice(VARS[:3]) if rng.randrange(5) else str(rng.randint(1, DOMAIN))
            for _ in range(BASE[rel])]
    bound = {a for a in args if a in VARS}
    rels = prog.relations(len(prog.arity))
    body = []
    for _ in range(rng.randint(1, 2)):
        other = rng.choice(sorted(rels))
        body.append(("atom", other, [rng.choice(sorted(bound) + ["Z", "_"]) if rng.randrange(4)
                                     else str(rng.randint(1, DOMAIN))
                                     for _ in range(rels[other])]))
    db = evaluate(prog, facts)
    gone = {tuple(value(a, env) for a in args)
            for env in solutions([("atom", rel, args)] + body, db)}
    after = {r: set(ts) for r, ts in facts.items()}
    after[rel] -= gone
    lits = ", ".join("%s(%s)" % (r, ", ".join(a)) for _, r, a in body)
    return "-%s(%s) <- %s" % (rel, ", ".join(args), lits), after


def ranking_clause(rng, prog, name):
    """A clause of a ranking aggregate (top_k, top_k_threshold, within_radius) over the
    program's relations, which the naive evaluator does not model: its text and arity."""
    body, bound = prog.atoms(prog.relations(len(prog.arity)), 2)
    score = rng.choice(sorted(bound))
    group = [rng.choice(sorted(bound))] if rng.randrange(2) else []
    outs = [v for v in sorted(bound) if v != score and rng.randrange(2)]
    kind = rng.choice(["top_k", "top_k", "top_k_threshold", "within_radius"])
    params = {"top_k": [str(rng.randint(1, 3))],
              "top_k_threshold": [str(rng.randint(1, 3)), str(rng.randint(1, DOMAIN))],
              "within_radius": [str(rng.randint(1, DOMAIN))]}[kind]
    spec = "%s<%s>" % (kind, ", ".join(params + outs + [score + rng.choice([":asc", ":desc"])]))
    lits = ", ".join("%s(%s)" % (r, ", ".join(a)) for _, r, a in body)
    return "+%s(%s) <- %s" % (name, ", ".join(group + [spec]), lits), len(group) + len(outs) + 1


async def t_eval_random_writes(binary):
    seed, rounds, rng = seeded("INPUTLAYER_TEST_EVAL_WRITE_ROUNDS", 40)
    steps = 25
    compared = writes = 0
    with OwnServer(binary, NO_MESSAGE_RATE) as srv:
        c = await connect(srv)
        fresh = await connect(srv)
        for r in range(rounds):
            await fresh_graph(c, fresh, "writes_%d" % r)
            facts = {rel: {random_tuple(rng, n) for _ in range(rng.randint(0, 6))}
                     for rel, n in BASE.items()}
            for rel, ts in facts.items():
                for t in ts:
                    assert (await run(c, "+" + fact_text(rel, t)))["errors"] == []
            prog = Program(rng)
            clauses = []  # in the order the server lists them, duplicates dropped
            for cl in prog.clauses:
                f = await run(c, prog.text(cl))
                assert f["type"] == "result" and f["errors"] == [], (prog.text(cl), f)
                if cl not in clauses:
                    clauses.append(cl)
            prog.clauses = clauses
            # ranking aggregates over the program: the maintained answer against the one
            # evaluated afresh on the other connection
            ranked, texts = [], [prog.text(cl) for cl in clauses]
            for k in range(rng.randint(0, 2)):
                stmt, n = ranking_clause(rng, prog, "rank%d" % k)
                f = await run(c, stmt)
                assert f["type"] == "result" and f["errors"] == [], (stmt, f)
                texts.append(stmt)
                ranked.append(("rank%d" % k, n))
            history = ["rules:"] + ["  " + t for t in texts] + [
                "facts: %s" % sorted(fact_text(rel, t) for rel, ts in facts.items() for t in ts)]
            for step in range(steps + 1):
                if step:
                    k = rng.randrange(20)
                    plain = sorted(set(prog.arity) - prog.aggregated)
                    several = [n for n in plain if sum(cl[0] == n for cl in prog.clauses) > 1]
                    if k < 14:
                        stmt, facts = fact_writes(rng, facts)
                    elif k < 17:
                        stmt, facts = conditional_delete(rng, prog, facts)
                    elif k < 19 or not several:
                        name = rng.choice(plain)
                        cl = prog.clause(name, int(name[1:]))
                        stmt = prog.text(cl)
                        if cl not in prog.clauses:
                            prog.clauses.append(cl)
                    else:
                        name = rng.choice(several)
                        mine = [cl for cl in prog.clauses if cl[0] == name]
                        i = rng.randrange(len(mine))
                        stmt = ".rule remove %s %d" % (name, i + 1)
                        prog.clauses.remove(mine[i])
                    history.append(stmt.replace("\n", "; "))
                    f = await run(c, stmt)
                    assert f["type"] == "result" and f["errors"] == [], (history, f)
                    writes += 1
                want = evaluate(prog, facts)
                for name, n in sorted(prog.arity.items()):
                    q = "?%s(%s)" % (name, ", ".join(VARS[:n]))
                    f = await run(c, q)
                    expect = sorted(json.dumps([v[1] for v in t]) for t in want[name])
                    assert f["type"] == "result" and not f["truncated"], (q, f)
                    assert rows(f) == expect, ("seed %d round %d" % (seed, r), history, q,
                                               "got", rows(f), "want", expect)
                    compared += 1
                for name, n in ranked:
                    q = "?%s(%s)" % (name, ", ".join("V%d" % i for i in range(n)))
                    got, again = await run(c, q), await run(fresh, q)
                    assert got["type"] == again["type"] == "result", (q, got, again)
                    assert rows(got) == rows(again), ("seed %d round %d" % (seed, r), history,
                                                      q, "maintained", rows(got), "afresh",
                                                      rows(again))
                    compared += 1
        await c.ws.close()
        await fresh.ws.close()
    print("     %d random programs x %d writes (seed %d): %d writes, %d answers equal to "
          "the naive evaluation" % (rounds, steps, seed, writes, compared))


TESTS = [t_eval_random, t_eval_random_writes]
