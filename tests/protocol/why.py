"""Protocol tests of `.why` proof trees over /ws (docs/server.md "Proof trees"): the
result frame of `.why ?query` carries `proof_trees`, one DAG per row in the original's
shape (protocol-later.md 1.13), with rule, fact, negation, aggregate, vector search,
truncated and why_not nodes, a shared sub-derivation written once; `.why full` raises the count bound; a plain query and a
`.why` without rows carry none; in a program of several statements the trees belong to
the table shown. TESTS run on the shared server of run.py, each in a knowledge graph of
its own."""

from common import connect, run, still_answers


async def graph(srv, kg):
    c = await connect(srv)
    f = await run(c, ".kg create %s" % kg)
    assert f["type"] == "result", f
    return c


def tree_nodes(t, query):
    """The nodes of one row's DAG, after checking its frame: version, query, roots, and
    every node's fields (kind, conclusion, children ids that exist)."""
    assert set(t) == {"version", "query", "roots", "nodes"}, t
    assert t["version"] == 1 and t["query"] == query, t
    nodes = t["nodes"]
    assert isinstance(nodes, dict) and all(r in nodes for r in t["roots"]), t
    kinds = {"fact", "rule", "negation", "vector_search", "aggregate", "truncated", "why_not"}
    for nid, n in nodes.items():
        assert isinstance(nid, str) and n["kind"] in kinds, (nid, n)
        c = n["conclusion"]
        assert set(c) == {"pred", "args"} and isinstance(c["args"], list), n
        for v in c["args"]:
            assert not isinstance(v, dict), ("a tagged value", n)
        assert n.get("children", ["x"]) != [], ("empty children are omitted", n)
        for ch in n.get("children", []) + n.get("alternatives", []):
            assert ch in nodes, ("a dangling id", nid, ch)
    return nodes


def only(nodes, kind, pred=None):
    got = [n for n in nodes.values() if n["kind"] == kind and
           (pred is None or n["conclusion"]["pred"] == pred)]
    assert len(got) == 1, (kind, pred, nodes)
    return got[0]


async def t_why_proof_trees(srv):
    c = await graph(srv, "why_basic")
    await run(c, "+edge[(1, 2), (1, 3), (2, 4), (3, 4)]")
    await run(c, "+reach(X, Y) <- edge(X, Y)\n+reach(X, Z) <- reach(X, Y), edge(Y, Z)")
    f = await run(c, ".why ?reach(1, Y)", id="w1")
    assert f["type"] == "result" and f["id"] == "w1", f
    assert f["columns"] == ["_c0", "Y"] and f["rows"] == [[1, 2], [1, 3], [1, 4]], f
    trees = f["proof_trees"]
    assert len(trees) == 3, trees
    for t, row in zip(trees, f["rows"]):
        nodes = tree_nodes(t, "?reach(1, Y)")
        assert len(t["roots"]) == 1, t
        assert nodes[t["roots"][0]]["conclusion"] == {"pred": "reach", "args": row}, t
    nodes = trees[2]["nodes"]
    p = nodes[trees[2]["roots"][0]]
    assert p["kind"] == "rule" and p["source"] == "derived", p
    assert p["rule_id"] == "reach(X, Z) <- reach(X, Y), edge(Y, Z)", p
    # the diamond: through 2 and through 3, the second an alternative
    assert len(p["alternatives"]) == 1, p
    alt = nodes[p["alternatives"][0]]
    assert alt["kind"] == "rule" and alt["conclusion"] == p["conclusion"], alt
    assert "alternatives" not in alt, alt
    assert sorted([p["bindings"]["Y"], alt["bindings"]["Y"]]) == [2, 3], (p, alt)
    assert p["bindings"] == {"X": 1, "Z": 4, "Y": p["bindings"]["Y"]}, p
    for d in (p, alt):
        a, b = (nodes[i] for i in d["children"])
        assert a["kind"] == "rule" and a["conclusion"]["pred"] == "reach", a
        assert a["rule_id"] == "reach(X, Y) <- edge(X, Y)", a
        assert b["kind"] == "fact" and b["conclusion"]["pred"] == "edge", b
    first = trees[0]["nodes"]
    fact = first[first[trees[0]["roots"][0]]["children"][0]]
    assert fact == {"kind": "fact", "conclusion": {"pred": "edge", "args": [1, 2]},
                    "source": "edb"}, fact
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
    t = f["proof_trees"][0]
    nodes = tree_nodes(t, "?via(1, Z)")
    root = nodes[t["roots"][0]]
    # Y in 11, 13..17: six derivations, five kept (the first and four alternatives)
    assert len(root["alternatives"]) == 4, root
    kinds = [nodes[ch]["kind"] for ch in root["children"]]
    assert kinds == ["fact", "fact", "negation"], kinds
    neg = nodes[root["children"][2]]
    y = root["bindings"]["Y"]
    assert neg["negation"] == {"pattern": "blocked(%d)" % y}, neg
    assert neg["conclusion"] == {"pred": "blocked", "args": [y]}, neg
    # the comparison held: its variable is bound
    assert y > 10 and root["bindings"] == {"X": 1, "Z": 99, "Y": y}, root
    f = await run(c, ".why full ?via(1, Z)")
    t = f["proof_trees"][0]
    assert len(t["nodes"][t["roots"][0]]["alternatives"]) == 5, t
    # a program: the trees of the table shown (the last one)
    f = await run(c, "?e(1, Y)\n.why ?e(1, 11)")
    assert f["type"] == "result" and f["rows"] == [[1, 11]], f
    t = f["proof_trees"][0]
    assert t["nodes"][t["roots"][0]]["kind"] == "fact", f
    await still_answers(c)
    await c.ws.close()


async def t_why_shape(srv):
    """Each kind of node, field by field: a recursive rule's DAG with a shared
    sub-derivation written once, a negation, an aggregate, a vector search, a truncated
    proof and a `.why_not`."""
    c = await graph(srv, "why_shape")
    # shared: s(1) needs a(1) and b(1), both from m(1), which is derived
    await run(c, "+base[(1)]")
    await run(c, "+m(X) <- base(X)\n+a(X) <- m(X)\n+b(X) <- m(X)\n+s(X) <- a(X), b(X)")
    f = await run(c, ".why ?s(1)")
    t = f["proof_trees"][0]
    nodes = tree_nodes(t, "?s(1)")
    m = only(nodes, "rule", "m")
    mid = [k for k, n in nodes.items() if n is m][0]
    refs = [k for k, n in nodes.items() if mid in n.get("children", [])]
    assert len(refs) == 2, ("m(1) is one node with two parents", nodes)
    assert len(nodes) == 5, nodes  # s, a, b, m, base
    assert only(nodes, "fact", "base") == {
        "kind": "fact", "conclusion": {"pred": "base", "args": [1]}, "source": "edb"}
    assert m == {"kind": "rule", "conclusion": {"pred": "m", "args": [1]},
                 "source": "derived", "rule_id": "m(X) <- base(X)", "bindings": {"X": 1},
                 "children": [m["children"][0]]}, m

    # negation and aggregate
    await run(c, "+edge[(1, 2), (1, 3), (1, 4), (2, 3)]\n+bad[(4)]")
    await run(c, "+good(X, count<Y>) <- edge(X, Y), !bad(Y)")
    f = await run(c, ".why ?good(1, N)")
    assert f["rows"] == [[1, 2]], f
    t = f["proof_trees"][0]
    nodes = tree_nodes(t, "?good(1, N)")
    g = nodes[t["roots"][0]]
    assert g["kind"] == "aggregate" and g["source"] == "derived", g
    assert g["rule_id"] == "good(X, count<Y>) <- edge(X, Y), !bad(Y)", g
    assert g["bindings"] == {"X": 1}, g
    assert g["aggregate"] == {"fn": "count", "value_var": "Y", "result": 2,
                              "contributing_count": 2, "sample_inputs": [[2], [3]]}, g
    kids = [nodes[k] for k in g["children"]]
    assert [k["kind"] for k in kids] == ["fact", "negation", "fact", "negation"], kids
    assert kids[1] == {"kind": "negation", "conclusion": {"pred": "bad", "args": [2]},
                       "negation": {"pattern": "bad(2)"}}, kids[1]

    # a vector search
    await run(c, "+emb(id: int, vec: vector)")
    await run(c, "+emb[(1, [1.0, 0.0, 0.0]), (2, [0.0, 1.0, 0.0]), (3, [0.9, 0.1, 0.0])]")
    await run(c, ".index create e1 on emb(vec) metric euclidean")
    await run(c, "+near(Id, D) <- emb(1, Q), hnsw_nearest(\"e1\", Q, 2, Id, D, 20)")
    f = await run(c, ".why ?near(Id, D)")
    assert [r[0] for r in f["rows"]] == [1, 3], f
    t = f["proof_trees"][1]
    nodes = tree_nodes(t, "?near(Id, D)")
    v = only(nodes, "vector_search")
    dist = f["rows"][1][1]
    assert v["vector_search"] == {"index_name": "e1", "metric": "euclidean",
                                  "query_vector": [1.0, 0.0, 0.0], "result_id": 3,
                                  "distance": dist, "k": 2, "ef_search": 20}, v
    assert v["conclusion"] == {"pred": "hnsw_nearest",
                               "args": ["e1", [1.0, 0.0, 0.0], 2, 3, dist, 20]}, v
    root = nodes[t["roots"][0]]
    assert root["bindings"] == {"Id": 3, "D": dist, "Q": [1.0, 0.0, 0.0]}, root

    # truncated: a chain longer than the depth bound (50)
    await run(c, "+chain[%s]" % ", ".join("(%d, %d)" % (i, i + 1) for i in range(60)))
    await run(c, "+far(X, Y) <- chain(X, Y)\n+far(X, Z) <- far(X, Y), chain(Y, Z)")
    f = await run(c, ".why ?far(0, 60)")
    t = f["proof_trees"][0]
    nodes = tree_nodes(t, "?far(0, 60)")
    cut = only(nodes, "truncated")
    assert cut["truncated"] == {"depth_limit": 50}, cut
    assert cut["conclusion"]["pred"] == "far" and "children" not in cut, cut

    # why_not
    f = await run(c, ".why_not s(2)")
    assert f["rows"][0] == ["s(2) was NOT derived:"], f
    t = f["proof_trees"][0]
    nodes = tree_nodes(t, "s(2)")
    assert t["roots"] == ["w0"], t
    w = nodes["w0"]
    assert w == {"kind": "why_not", "conclusion": {"pred": "s", "args": [2]},
                 "why_not": {"rule_name": "s", "clause_index": 0,
                             "clause_text": "s(X) <- a(X), b(X)",
                             "blocker": {"type": "missing_tuple",
                                         "reason": "Body predicate 0 (a(2)) failed: No "
                                                   "matching tuples in a",
                                         "predicate_index": 0, "predicate_text": "a(2)",
                                         "relation": "a"}}}, w
    f = await run(c, ".why_not good(1, 3)")
    w = f["proof_trees"][0]["nodes"]["w0"]["why_not"]["blocker"]
    assert w["type"] == "none", w  # good(1, 3) fails only at the count
    await run(c, "+big(X) <- base(X), X > 5\n+pos(X) <- edge(X, Y), !bad(Y)")
    f = await run(c, ".why_not big(1)")
    w = f["proof_trees"][0]["nodes"]["w0"]["why_not"]["blocker"]
    assert w == {"type": "comparison_failed", "reason": "Comparison 1 > 5 failed: 1 vs 5",
                 "predicate_index": 1, "comparison_text": "X > 5", "lhs_value": 1,
                 "rhs_value": 5}, w
    await run(c, "+bad[(2)]")
    f = await run(c, ".why_not pos(1)")
    w = f["proof_trees"][0]["nodes"]["w0"]["why_not"]["blocker"]
    assert w["type"] == "negation_exists" and w["relation"] == "bad", w
    assert w["matching_tuple"] == [2] and w["predicate_index"] == 1, w
    f = await run(c, ".why_not nothing(1)")
    w = f["proof_trees"][0]["nodes"]["w0"]
    assert w["why_not"] == {"rule_name": "nothing", "blocker": {
        "type": "no_rules", "reason": "No rules produce this relation."}}, w
    await still_answers(c)
    await c.ws.close()


TESTS = [t_why_proof_trees, t_why_nodes_and_bounds, t_why_shape]
