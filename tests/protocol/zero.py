"""Protocol tests of propositions (rules and facts of no arguments) and of two replies the
original's clients rely on, each on a server of its own:

* a query of a rule of no arguments answers `columns: []` and one empty row when it
  holds, no rows when it does not;
* a standing query of such a rule gets a `subscription_delta` inserting the empty row
  when the rule becomes true and retracting it when it becomes false;
* `.why` of such a rule carries its proof tree, down through other rules of no arguments
  to the facts (of no arguments too);
* facts of no arguments (`+flag()`), deleted ones (`-flag()`) and rules of no arguments
  come back after a restart, from the log and from a checkpoint (`.compact`);
* `.rel drop` of a relation with a schema and no facts drops the schema (and the rules
  deriving it) for good: after a restart too;
* the result of a `.kg use` or `.kg create` that switched carries `switched_kg` (also in
  a program of several statements); other results and failed switches carry none."""

import os
import shutil
import tempfile

from common import NO_MESSAGE_RATE, OwnServer, connect, run, still_answers
from subs import delta, no_frame

YES = {"columns": [], "rows": [[]]}
NO = {"columns": [], "rows": []}


def answer(f):
    assert f["type"] == "result" and f["errors"] == [], f
    return {"columns": f["columns"], "rows": f["rows"]}


async def ok(c, program):
    f = await run(c, program)
    assert f["type"] == "result" and f["errors"] == [], (program, f)
    return f


async def t_zero_query_and_subscription(binary):
    with OwnServer(binary, NO_MESSAGE_RATE) as srv:
        a = await connect(srv)
        b = await connect(srv)
        await ok(a, "+data[(1, 2, 3)]")
        await ok(a, "+big() <- data(X, _, _), X > 3")
        await ok(a, "+small() <- !big()")
        assert answer(await run(a, "?big()")) == NO
        assert answer(await run(a, "?small()")) == YES
        f = await run(b, ".subscribe s ?big()", id="sub")
        assert f["type"] == "result" and f["subscribed"]["subscription"] == "s", f
        assert answer(f) == NO, f
        # becomes true: the empty row is inserted
        await ok(a, "+data(4, 5, 6)")
        d = await delta(b)
        assert d["subscription"] == "s" and d["columns"] == [], d
        assert d["inserted"] == [[]] and d["retracted"] == [], d
        # another derivation of the same truth changes nothing the subscriber sees
        await ok(a, "+data(7, 8, 9)")
        await no_frame(b)
        assert answer(await run(a, "?big()")) == YES
        assert answer(await run(a, "?small()")) == NO
        # becomes false: the empty row is retracted
        await ok(a, "-data[(4, 5, 6), (7, 8, 9)]")
        d = await delta(b)
        assert d["inserted"] == [] and d["retracted"] == [[]], d
        assert answer(await run(a, "?big()")) == NO
        assert answer(await run(a, "?small()")) == YES
        # a program that fails is rolled back whole: its fact of no arguments too, and
        # the subscriber sees nothing
        f = await run(a, "+flag()\n+data(9, 9, 9)\n+data(1)")
        assert f["type"] == "result" and "rolled back" in f["rows"][0][0], f
        await no_frame(b)
        assert answer(await run(a, "?flag()")) == NO
        assert answer(await run(a, "?big()")) == NO
        await still_answers(a)
        await still_answers(b)
        await a.ws.close()
        await b.ws.close()


async def t_zero_why(binary):
    with OwnServer(binary, NO_MESSAGE_RATE) as srv:
        c = await connect(srv)
        for p in ("+edge[(5, 6)]", "+flag()", "+a() <- edge(5, 6)", "+b() <- a()",
                  "+a() <- b()", "+c() <- b(), flag()", "+none() <- edge(9, _)",
                  "+fine() <- !none()"):
            await ok(c, p)
        f = await ok(c, ".why ?c()")
        assert answer(f) == YES, f
        dag = f["proof_trees"][0]
        assert dag["version"] == 1 and dag["query"] == "?c()", dag
        nodes = dag["nodes"]
        c_ = nodes[dag["roots"][0]]
        assert c_["kind"] == "rule" and c_["conclusion"] == {"pred": "c", "args": []}, c_
        assert c_["rule_id"] == "c() <- b(), flag()" and c_["bindings"] == {}, c_
        b, flag = (nodes[i] for i in c_["children"])
        assert flag == {"kind": "fact", "conclusion": {"pred": "flag", "args": []},
                        "source": "edb"}, flag
        assert b["conclusion"]["pred"] == "b" and b["rule_id"] == "b() <- a()", b
        a = nodes[b["children"][0]]
        assert a["conclusion"] == {"pred": "a", "args": []}, a
        assert nodes[a["children"][0]]["conclusion"] == {"pred": "edge", "args": [5, 6]}, a
        f = await ok(c, ".why ?fine()")
        dag = f["proof_trees"][0]
        fine = dag["nodes"][dag["roots"][0]]
        neg = [dag["nodes"][i] for i in fine["children"]]
        assert neg == [{"kind": "negation", "conclusion": {"pred": "none", "args": []},
                        "negation": {"pattern": "none()"}}], neg
        f = await ok(c, ".why ?none()")
        assert answer(f) == NO and "proof_trees" not in f, f
        await c.ws.close()


class DataDir:
    """A data directory that outlives the servers started on it."""

    def __enter__(self):
        self.path = os.path.join(tempfile.mkdtemp(prefix="il-zero-"), "data")
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(os.path.dirname(self.path), ignore_errors=True)
        return False


async def t_zero_facts_survive_restart(binary):
    with DataDir() as data:
        with OwnServer(binary, NO_MESSAGE_RATE, data_dir=data) as srv:
            c = await connect(srv)
            await ok(c, "+flag()")
            await ok(c, "+gone()")
            await ok(c, "-gone()")
            await ok(c, "+edge[(1, 2)]")
            await ok(c, "+linked() <- edge(_, _), flag()")
            assert answer(await run(c, "?linked()")) == YES
            await c.ws.close()
        # from the log
        with OwnServer(binary, NO_MESSAGE_RATE, data_dir=data) as srv:
            c = await connect(srv)
            assert answer(await run(c, "?flag()")) == YES
            assert answer(await run(c, "?gone()")) == NO
            assert answer(await run(c, "?linked()")) == YES
            f = await ok(c, ".rel")
            assert ["  flag (arity: 0, columns: [], tuples: 1)"] in f["rows"], f
            await ok(c, "+later()")
            await ok(c, ".compact")
            await c.ws.close()
        # from the checkpoint
        with OwnServer(binary, NO_MESSAGE_RATE, data_dir=data) as srv:
            c = await connect(srv)
            for q in ("?flag()", "?later()", "?linked()"):
                assert answer(await run(c, q)) == YES, q
            assert answer(await run(c, "?gone()")) == NO
            await ok(c, "-flag()")
            assert answer(await run(c, "?linked()")) == NO
            await c.ws.close()
        with OwnServer(binary, NO_MESSAGE_RATE, data_dir=data) as srv:
            c = await connect(srv)
            assert answer(await run(c, "?flag()")) == NO
            assert answer(await run(c, "?linked()")) == NO
            await c.ws.close()


async def t_rel_drop_schema_durable(binary):
    with DataDir() as data:
        with OwnServer(binary, NO_MESSAGE_RATE, data_dir=data) as srv:
            c = await connect(srv)
            await ok(c, "+person(id: int, name: string)")
            await ok(c, "+total(id: int, n: int)")
            await ok(c, "+total(X, 1) <- person(X, _)")
            f = await ok(c, ".rel drop person")
            assert f["rows"] == [["Relation 'person' dropped."]], f
            f = await ok(c, ".rel drop total")
            assert f["rows"] == [["Relation 'total' dropped."]], f
            f = await ok(c, ".rel")
            assert f["rows"] == [["No relations in current knowledge graph."]], f
            await c.ws.close()
        with OwnServer(binary, NO_MESSAGE_RATE, data_dir=data) as srv:
            c = await connect(srv)
            f = await ok(c, ".rel")
            assert f["rows"] == [["No relations in current knowledge graph."]], f
            f = await ok(c, ".rule")
            assert f["rows"] == [["No rules defined."]], f
            # no schema left: any arity goes in
            await ok(c, "+person(1)")
            await c.ws.close()


async def t_switched_kg(binary):
    with OwnServer(binary, NO_MESSAGE_RATE) as srv:
        c = await connect(srv)
        f = await ok(c, ".kg create other")
        assert f["switched_kg"] == "other", f
        f = await ok(c, "?x(1)")
        assert "switched_kg" not in f, f
        f = await ok(c, ".kg use default")
        assert f["switched_kg"] == "default", f
        f = await run(c, ".kg use missing")
        assert f["type"] == "error" and "switched_kg" not in f, f
        f = await ok(c, ".kg")
        assert "switched_kg" not in f, f
        # a program of several statements: the graph it ends in
        f = await ok(c, ".kg use other\n.kg")
        assert f["switched_kg"] == "other", f
        f = await ok(c, ".kg\n.kg list")
        assert "switched_kg" not in f, f
        await still_answers(c)
        await c.ws.close()


TESTS = [t_zero_query_and_subscription, t_zero_why, t_zero_facts_survive_restart,
         t_rel_drop_schema_durable, t_switched_kg]
