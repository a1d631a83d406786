"""Protocol tests of a result's extras over /ws (protocol-later.md 1.13): `row_provenance`
and `metadata` on the session path (rows persistent or ephemeral once the session has
facts or rules of its own, with the original's warning texts) and `timing_breakdown` on
query results (sent by default; `storage.performance.timing_mode = "off"` removes it).
TESTS run on the shared server of run.py, each in a knowledge graph of its own;
OWN_TESTS start servers of their own."""

from common import OwnServer, connect, run, still_answers

STAGES = ["total_us", "parse_us", "sip_us", "magic_sets_us", "ir_build_us", "optimize_us",
          "shared_views_us"]


async def graph(srv, kg):
    c = await connect(srv)
    f = await run(c, ".kg create %s" % kg)
    assert f["type"] == "result", f
    return c


async def t_session_provenance(srv):
    c = await graph(srv, "extras_session")
    await run(c, "+edge[(1, 2), (1, 3)]")
    await run(c, "+reach(X, Y) <- edge(X, Y)\n+reach(X, Z) <- reach(X, Y), edge(Y, Z)")
    # the normal path: every row unknown, no metadata
    f = await run(c, "?reach(1, Y)")
    assert f["row_provenance"] == ["unknown", "unknown"] and "metadata" not in f, f
    # a session fact: the rows it alone gives are ephemeral
    f = await run(c, "edge(3, 4)")
    assert f["row_provenance"] == ["unknown"] and "metadata" not in f, f
    f = await run(c, "?reach(1, Y)")
    assert f["rows"] == [[1, 2], [1, 3], [1, 4]], f
    assert f["row_provenance"] == ["persistent", "persistent", "ephemeral"], f
    assert f["metadata"] == {"has_ephemeral": True, "ephemeral_sources": ["edge"],
                             "warnings": ["Results include session data from 1 relation: "
                                          "edge"]}, f
    # a session fact that repeats a stored one: the row holds without it
    await run(c, "edge(1, 2)")
    f = await run(c, "?edge(1, Y)")
    assert f["row_provenance"] == ["persistent", "persistent"], f
    # session rules, and a second relation of session facts
    await run(c, "label(4, 9)")
    await run(c, "far(X, L) <- reach(X, Y), label(Y, L)\nfar(X, 0) <- edge(X, 2)")
    f = await run(c, "?far(X, L)")
    assert f["rows"] == [[1, 0], [1, 9], [3, 9]], f
    assert f["row_provenance"] == ["ephemeral"] * 3, f
    assert f["metadata"] == {
        "has_ephemeral": True, "ephemeral_sources": ["edge", "label"],
        "warnings": ["Results include session data from 2 relations: edge, label",
                     "Results use 2 session rules"]}, f
    # a query that reads none of the session's data: every row persistent
    await run(c, "+other[(7)]")
    f = await run(c, "?other(X)")
    assert f["row_provenance"] == ["persistent"], f
    assert f["metadata"] == {"has_ephemeral": True}, f
    # cleared: the normal path again
    await run(c, ".session clear")
    f = await run(c, "?reach(1, Y)")
    assert f["row_provenance"] == ["unknown", "unknown"] and "metadata" not in f, f
    await still_answers(c)
    await c.ws.close()


def check_timing(t, stages=("plan", "evaluate", "encode")):
    assert set(t) == set(STAGES) | {"rules"}, t
    for k in STAGES:
        assert isinstance(t[k], int) and t[k] >= 0, (k, t)
    for k in STAGES[2:]:
        assert t[k] == 0, (k, t)  # stages this engine does not have
    assert [r["rule_head"] for r in t["rules"]] == list(stages), t
    for r in t["rules"]:
        assert set(r) == {"rule_head", "execution_us", "is_recursive", "workers"}, r
        assert isinstance(r["execution_us"], int) and r["execution_us"] >= 0, r
    parts = t["parse_us"] + sum(r["execution_us"] for r in t["rules"])
    # each part is rounded down on its own
    assert parts <= t["total_us"] <= parts + len(t["rules"]) + 1, t


async def t_timing_on(srv):
    c = await graph(srv, "extras_timing")
    f = await run(c, "+edge[(1, 2), (1, 3)]")
    assert "timing_breakdown" not in f, f  # not a query
    f = await run(c, "?edge(1, Y)")
    check_timing(f["timing_breakdown"])
    proving = ("plan", "evaluate", "prove", "encode")
    f = await run(c, ".why ?edge(1, Y)")
    check_timing(f["timing_breakdown"], proving)
    f = await run(c, ".why_not edge(1, 9)")
    check_timing(f["timing_breakdown"], proving)
    f = await run(c, ".rel")
    assert "timing_breakdown" not in f, f
    await still_answers(c)
    await c.ws.close()


async def t_timing_off(binary):
    with OwnServer(binary, ["--set", "storage.performance.timing_mode=\"off\""]) as srv:
        c = await connect(srv)
        await run(c, "+edge[(1, 2)]")
        f = await run(c, "?edge(1, Y)")
        assert f["type"] == "result" and f["rows"] == [[1, 2]], f
        assert "timing_breakdown" not in f, f
        await still_answers(c)
        await c.ws.close()
    with OwnServer(binary, env={"INPUTLAYER_STORAGE__PERFORMANCE__TIMING_MODE": "summary"}) \
            as srv:
        c = await connect(srv)
        await run(c, "+edge[(1, 2)]")
        f = await run(c, "?edge(1, Y)")
        check_timing(f["timing_breakdown"])
        await c.ws.close()


TESTS = [t_session_provenance, t_timing_on]
OWN_TESTS = [t_timing_off]
