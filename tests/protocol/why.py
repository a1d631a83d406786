"""Protocol tests of `.why` proof trees over /ws (docs/server.md "Proof trees"): the
result frame of `.why ?query` carries `proof_trees`, one tree per row, with rule, fact,
negation and comparison nodes; `.why full` raises the count bound; a plain query and a
`.why` without rows carry none; in a program of several statements the trees belong to
the table shown. TESTS run on the shared server of run.py, each in a knowledge graph of
its own."""

from common import connect, run, still_answers


async def graph(srv, kg):
    c = await connect(srv)
    f = await run(c, ".kg create %s" % kg)
    assert f["type"] == "result", f
    return c


async def t_why_proof_trees(srv):
    c = await graph(srv, "why_basic")
    await run(c, "+edge[(1, 2), (1, 3), (2, 4), (3, 4)]")
    await run(c, "+reach(X, Y) <- edge(X, Y)\n+reach(X, Z) <- reach(X, Y), edge(Y, Z)")
    f = await run(c, ".why ?reach(1, Y)", id="w1")
    assert f["type"] == "result" and f["id"] == "w1", f
    assert f["columns"] == ["_c0", "Y"] and f["rows"] == [[1, 2], [1, 3], [1, 4]], f
    trees = f["proof_trees"]
    assert [t["row"] for t in trees] == f["rows"], trees
    p = trees[2]["proof"]
    assert p["kind"] == "derived" and p["atom"] == "reach(1, 4)", p
    assert p["relation"] == "reach" and p["tuple"] == [1, 4], p
    # the diamond: through 2 and through 3
    ds = p["derivations"]
    assert len(ds) == 2, ds
    assert sorted(d["bindings"]["Y"] for d in ds) == [2, 3], ds
    for d in ds:
        assert d["kind"] == "rule" and d["clause"] == 2, d
        assert d["rule"] == "reach(X, Z) <- reach(X, Y), edge(Y, Z)", d
        assert d["children"][0]["kind"] in ("derived", "ref"), d
        assert d["children"][1]["kind"] == "fact", d
    fact = trees[0]["proof"]["derivations"][0]["children"][0]
    assert fact == {"kind": "fact", "atom": "edge(1, 2)", "relation": "edge",
                    "tuple": [1, 2]}, fact
    # a plain query has none
    f = await run(c, "?reach(1, Y)")
    assert f["type"] == "result" and "proof_trees" not in f, f
    # nor has a `.why` without rows
    f = await run(c, ".why ?reach(9, Y)")
    assert f["type"] == "result" and f["rows"] == [] and "proof_trees" not in f, f
    await still_answers(c)
    await c.ws.close()


async def t_why_nodes_and_bounds(srv):
    c = await graph(srv, "why_nodes")
    edges = ", ".join("(1, %d), (%d, 99)" % (10 + i, 10 + i) for i in range(8))
    await run(c, "+e[%s]" % edges)
    await run(c, "+blocked[(12)]")
    await run(c, "+via(X, Z) <- e(X, Y), e(Y, Z), !blocked(Y), Y > 10")
    f = await run(c, ".why ?via(1, Z)")
    tree = f["proof_trees"][0]["proof"]
    # Y in 11, 13..17: six derivations, five kept
    assert len(tree["derivations"]) == 5 and tree["more"] is True, tree
    d = tree["derivations"][0]
    kinds = [ch["kind"] for ch in d["children"]]
    assert kinds == ["fact", "fact", "negation", "comparison"], kinds
    neg = d["children"][2]
    assert neg["atom"] == "blocked(%d)" % d["bindings"]["Y"], neg
    cmp = d["children"][3]
    assert cmp["literal"] == "Y > 10" and cmp["lhs"] == d["bindings"]["Y"] and cmp["rhs"] == 10
    f = await run(c, ".why full ?via(1, Z)")
    tree = f["proof_trees"][0]["proof"]
    assert len(tree["derivations"]) == 6 and tree["more"] is False, tree
    # a program: the trees of the table shown (the last one)
    f = await run(c, "?e(1, Y)\n.why ?e(1, 11)")
    assert f["type"] == "result" and f["rows"] == [[1, 11]], f
    assert f["proof_trees"][0]["proof"]["kind"] == "fact", f
    await still_answers(c)
    await c.ws.close()


TESTS = [t_why_proof_trees, t_why_nodes_and_bounds]
