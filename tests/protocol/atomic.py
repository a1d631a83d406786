"""Protocol tests of atomic programs (docs/server.md, "Atomic programs") and of revision
preconditions scoped by expect_relations: a program of several statements that writes
commits all of them or none (a failing statement rolls back the ones before it; the
reply names it), statements that cannot join a transaction refuse the whole program,
a committed program moves the revision once and is reported once (one notification per
relation, one subscription delta with its net change), and expect_revision with
expect_relations checks only the scope. Each test runs in a knowledge graph of its own
on the shared server and ends with the server answering."""

import asyncio
import json

from common import connect, run, still_answers

NOTES = ("persistent_update", "rule_change", "kg_change", "schema_change")


async def pair(srv, kg):
    """Two connections on a fresh knowledge graph `kg`."""
    a = await connect(srv)
    f = await run(a, ".kg create %s" % kg)
    assert f["type"] == "result", f
    b = await connect(srv, kg=kg)
    return a, b


async def frames_until_quiet(c, wait=0.5):
    """Every frame that arrives until none has for `wait` seconds."""
    out = []
    while True:
        try:
            out.append(json.loads(await asyncio.wait_for(c.ws.recv(), wait)))
        except asyncio.TimeoutError:
            return out


async def reply(c, program, **extra):
    """The reply to an execute, skipping the notifications that may come before it."""
    req = {"type": "execute", "program": program, "id": "q"}
    req.update(extra)
    await c.send(req)
    while True:
        f = json.loads(await asyncio.wait_for(c.ws.recv(), 30))
        if f["type"] not in NOTES:
            assert f.get("id") == "q", f
            return f


async def rows(c, query):
    f = await reply(c, query)
    assert f["type"] == "result", f
    return sorted(f["rows"])


def suffix(n, first, last):
    return " (rolled back: none of the program's %d write statements %d-%d was applied)" % (
        n, first, last)


async def t_atomic_rollback(srv):
    """A failing statement rolls back the program: nothing is applied, the reply is one
    message row with the rollback suffix and errors[] names the statement."""
    a, _ = await pair(srv, "atomic_rollback")
    f = await reply(a, "+p(1)")
    rev = f["revision"]
    # The third statement fails: the first two are not applied.
    f = await reply(a, "+p(2)\n+q(1)\n.rule drop missing\n?p(X)")
    msg = ("Rule 'missing' not found: Failed to drop rule: Rule 'missing' does not exist"
           + suffix(3, 0, 2))
    assert f["type"] == "result" and f["columns"] == ["message"], f
    assert f["rows"] == [[msg]] and f["row_count"] == 1, f
    assert len(f["errors"]) == 1 and f["errors"][0]["index"] == 2, f
    assert f["errors"][0]["code"] == "not_found" and f["errors"][0]["message"] == msg, f
    assert "revision" not in f, f
    assert await rows(a, "?p(X)") == [[1]]
    assert await rows(a, "?q(X)") == []
    # The example of the notes: two writes, the second fails.
    f = await reply(a, "+p(3)\n.rule drop missing")
    assert f["rows"] == [["Rule 'missing' not found: Failed to drop rule: Rule 'missing' "
                          "does not exist" + suffix(2, 0, 1)]], f
    # A failure after the only write: no other write, no suffix; the query after it does
    # not run.
    f = await reply(a, "?p(X)\n+p(4)\n+p(5, 6)\n?p(X)")
    assert f["columns"] == ["message"] and len(f["rows"]) == 1, f
    assert "rolled back" in f["rows"][0][0] and f["errors"][0]["index"] == 2, f
    f = await reply(a, "+p(4)\n?p(X)\n+p(\"x\", 1)")
    assert f["rows"][0][0].startswith("Arity mismatch") and f["errors"][0]["index"] == 2, f
    assert f["rows"][0][0].endswith(suffix(2, 0, 2)), f
    f = await reply(a, "?p(X)\n+p(7, 8)")
    assert f["rows"] == [[f["errors"][0]["message"]]] and "rolled back" not in f["rows"][0][0], f
    # Rules, schemas and clears are rolled back too.
    f = await reply(a, "+d(X) <- p(X)\n+s(a: int)\n.clear prefix p\n+p(\"bad\", 1)")
    assert f["errors"][0]["index"] == 3 and f["rows"][0][0].endswith(suffix(4, 0, 3)), f
    assert await rows(a, "?p(X)") == [[1]]
    f = await reply(a, ".rule list")
    assert f["rows"] == [["No rules defined."]], f
    f = await reply(a, ".rel")
    assert all("s (" not in r[0] for r in f["rows"]), f
    # Nothing moved the revision.
    f = await reply(a, "+p(9)")
    assert f["revision"] == rev + 1, f
    await still_answers(a)


async def t_atomic_commit(srv):
    """A committed program: later statements and queries see the earlier writes, the
    reply is the program's last table, and the revision moves once."""
    a, _ = await pair(srv, "atomic_commit")
    f = await reply(a, "+r(1)")
    rev = f["revision"]
    f = await reply(a, "+r(2)\n-r(1)\n+r(3)\n+d(X) <- r(X)\n?d(X)")
    assert f["type"] == "result" and f["errors"] == [], f
    assert sorted(f["rows"]) == [[2], [3]] and f["revision"] == rev + 1, f
    f = await reply(a, "+r(4)\n+r(5)")
    assert f["revision"] == rev + 2, f
    assert f["rows"] == [["Inserted 1 fact(s) into 'r'."], ["Inserted 1 fact(s) into 'r'."]], f
    assert await rows(a, "?d(X)") == [[2], [3], [4], [5]]
    # Programs that write nothing are unchanged: every statement runs, failures go on.
    f = await reply(a, "?r(X Y)\n?d(2)")
    assert f["rows"] == [[2]] and f["errors"][0]["index"] == 0, f
    await still_answers(a)


async def t_atomic_unsupported(srv):
    """Statements that cannot join a transaction refuse a writing program before any of
    it runs; alone, or in a program that does not write, they run as always."""
    a, _ = await pair(srv, "atomic_unsupported")
    for program, index in (("+u(1)\n.kg use default", 1), (".rel\n+u(1)", 0),
                           ("+u(1)\n.kg create atomic_other", 1), ("+u(1)\n.compact", 1),
                           ("+u(1)\n.rule list\n?u(X)", 1), ("+u(1)\n.session clear", 1)):
        f = await reply(a, program)
        assert f["type"] == "error" and f["code"] == "unsupported", (program, f)
        assert f["errors"][0]["index"] == index and f["errors"][0]["code"] == "unsupported", f
    assert await rows(a, "?u(X)") == []
    f = await reply(a, ".kg")
    assert f["rows"] == [["Current knowledge graph: atomic_unsupported"]], f
    f = await reply(a, ".rel\n?u(X)")
    assert f["type"] == "result" and f["errors"] == [], f
    await still_answers(a)


async def t_atomic_reported_once(srv):
    """A committed program is one notification per relation and one subscription delta,
    carrying its net change at one revision; a rolled-back one is neither."""
    a, b = await pair(srv, "atomic_once")
    f = await reply(a, "+n(0)")
    f = await reply(b, ".subscribe s ?n(X)")
    assert f["type"] == "result" and sorted(f["rows"]) == [[0]], f
    rev = f["subscribed"]["revision"]
    await frames_until_quiet(a)
    await frames_until_quiet(b)
    f = await reply(a, "+n(1)\n+n(2)\n-n(1)\n+n(3)\n-n(0)\n+m(1)")
    assert f["revision"] == rev + 1, f
    notes = await frames_until_quiet(a)
    assert sorted(n["relation"] for n in notes) == ["m", "n"], notes
    n = [x for x in notes if x["relation"] == "n"][0]
    assert n["type"] == "persistent_update" and n["operation"] == "update", n
    assert n["count"] == 3, n  # +2, +3, -0: n(1) came and went
    got = await frames_until_quiet(b)
    deltas = [x for x in got if x["type"] == "subscription_delta"]
    assert len(deltas) == 1, got
    d = deltas[0]
    assert sorted(d["inserted"]) == [[2], [3]] and d["retracted"] == [[0]], d
    assert d["revision"] == rev + 1, d
    assert len([x for x in got if x["type"] == "persistent_update"]) == 2, got
    # Rolled back: nothing to anyone.
    f = await reply(a, "+n(4)\n+n(5, 5)")
    assert "rolled back" in f["rows"][0][0], f
    assert await frames_until_quiet(a) == []
    assert await frames_until_quiet(b) == []
    f = await reply(a, "+n(6)")
    assert f["revision"] == rev + 2, f
    got = [x for x in await frames_until_quiet(b) if x["type"] == "subscription_delta"]
    assert len(got) == 1 and got[0]["inserted"] == [[6]] and got[0]["revision"] == rev + 2, got
    await still_answers(a)
    await still_answers(b)


async def t_expect_relations(srv):
    """expect_revision with expect_relations: the program commits unless a relation in
    the scope (the names, what is derived from them, what that is derived from) or a
    persistent rule changed after the revision; an unknown name is a validation error."""
    a, b = await pair(srv, "atomic_expect")
    await reply(a, "+e(1)\n+f(1)\n+g(1)\n+h(1)\n+d(X) <- e(X), g(X)")
    f = await reply(a, "+h(2)")
    rev = f["revision"]
    # Out of scope (h) changed after rev: a program expecting rev of e still commits.
    f = await reply(b, "+h(3)")
    assert f["revision"] == rev + 1, f
    f = await reply(a, "+f(2)", expect_revision=rev, expect_relations=["e"])
    assert f["type"] == "result" and f["revision"] == rev + 2, f
    # In scope (e) changed: precondition_failed naming it, nothing applied.
    f = await reply(b, "+e(2)")
    assert f["revision"] == rev + 3, f
    f = await reply(a, "+f(3)\n+f(4)", expect_revision=rev + 2, expect_relations=["e", "f"])
    assert f["type"] == "error" and f["code"] == "precondition_failed", f
    assert "relation 'e'" in f["message"] and "revision %d" % (rev + 3) in f["message"], f
    assert await rows(a, "?f(X)") == [[1], [2]]
    # Derived through a rule: d reads e and g, so g is in the scope of ["e"] (g changes d).
    f = await reply(b, "+g(2)")
    assert f["revision"] == rev + 4, f
    f = await reply(a, "+f(5)", expect_revision=rev + 3, expect_relations=["e"])
    assert f["code"] == "precondition_failed" and "relation 'g'" in f["message"], f
    # ... and the scope of the derived relation is what it is derived from.
    f = await reply(a, "+f(5)", expect_revision=rev + 3, expect_relations=["d"])
    assert f["code"] == "precondition_failed" and "relation 'g'" in f["message"], f
    f = await reply(a, "+f(5)", expect_revision=rev + 3, expect_relations=["h", "f"])
    assert f["type"] == "result" and f["revision"] == rev + 5, f
    # Any persistent rule change fails every scope.
    f = await reply(b, "+k(X) <- h(X)")
    f = await reply(a, "+f(6)", expect_revision=rev + 5, expect_relations=["f"])
    assert f["code"] == "precondition_failed" and "persistent rule" in f["message"], f
    # Of two writers expecting the same revision of the same scope, one commits.
    now = (await reply(a, "+f(7)"))["revision"]
    f1 = await reply(a, "+f(8)", expect_revision=now, expect_relations=["f"])
    f2 = await reply(b, "+f(9)", expect_revision=now, expect_relations=["f"])
    assert f1["type"] == "result" and f2["code"] == "precondition_failed", (f1, f2)
    # Unknown names, and malformed scopes.
    f = await reply(a, "+f(10)", expect_revision=now, expect_relations=["nosuch"])
    assert f["type"] == "error" and f["code"] == "validation" and "nosuch" in f["message"], f
    for bad in ({"expect_relations": ["f"]}, {"expect_revision": now, "expect_relations": []},
                {"expect_revision": now, "expect_relations": "f"},
                {"expect_revision": now, "expect_relations": [1]}):
        f = await reply(a, "+f(11)", **bad)
        assert f["type"] == "error" and f["code"] == "invalid_request", (bad, f)
    assert [10] not in await rows(a, "?f(X)") and [11] not in await rows(a, "?f(X)")
    await still_answers(a)
    await still_answers(b)


TESTS = [t_atomic_rollback, t_atomic_commit, t_atomic_unsupported, t_atomic_reported_once,
         t_expect_relations]
