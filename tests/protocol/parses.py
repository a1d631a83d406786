"""Protocol tests of statement parsing (on a server of its own): every statement a request
carries is parsed once, for its authorization and its execution alike, so the server's
`inputlayer_statements_parsed_total` grows by exactly the statements received, over
programs of queries, inserts, deletes, rules, meta commands, `.why`, snapshot reads, a
statement that does not parse, one that fails, and a viewer's refused writes.

Alone: /usr/bin/python3 -c "import sys,asyncio; sys.path.insert(0,'tests/protocol');
import parses as m; [asyncio.run(t('$PWD/build/inputlayer-server')) for t in m.TESTS]\""""

from common import OwnServer, connect, login, prometheus, run

PARSED = "inputlayer_statements_parsed_total"


def parsed(srv):
    return prometheus(srv)[PARSED]


# (program, statements, how its reply must look: "result", "error" or a frame check)
ADMIN_PROGRAMS = [
    ("+pedge[(1, 2), (2, 3), (3, 4)]", 1, "result"),
    ("+ppath(X, Y) <- pedge(X, Y)\n+ppath(X, Z) <- pedge(X, Y), ppath(Y, Z)", 2, "result"),
    ("?pedge(1, Y)", 1, "result"),
    ("?pedge(1, Y)\n?ppath(1, Y)\n?pedge(X, 3)", 3, "result"),
    ("-pedge(3, 4)\n+pedge(4, 5)", 2, "result"),
    ("-pedge(X, Y) <- pedge(X, Y), X = 4", 1, "result"),
    (".rel\n.rule\n.kg\n.kg list", 4, "result"),
    (".why ?ppath(1, Y)", 1, "result"),
    (".why_not pedge(7, 7)", 1, "result"),
    (".rule ppath", 1, "result"),
    ("?pedge(X Y)", 1, "error"),  # does not parse
    ("+pedge(1, Y)", 1, "error"),  # parses, fails
    ("?pedge(1, Y)\n?pedge(X Y)\n?pedge(2, Y)", 3, "result"),  # a failure among queries
    ("+pedge(5, 6)\n?pedge(X Y)", 2, "result"),  # a writing program stops at its failure
    ("ptmp(1)\nptmp(2)\n?ptmp(X)", 3, "result"),  # session facts
    ("pr(X) <- pedge(X, _)\n?pr(X)", 2, "result"),  # a session rule
]

VIEWER_PROGRAMS = [
    ("?pedge(1, Y)", 1, "result"),
    ("+pedge(9, 9)", 1, "error"),  # refused: viewer
    ("?pedge(1, Y)\n+pedge(9, 9)\n?pedge(2, Y)", 3, "error"),  # refused before any runs
    (".kg create pviewer", 1, "error"),
    (".rel drop pedge", 1, "error"),
]


async def send_all(c, programs):
    received = 0
    for program, n, want in programs:
        f = await run(c, program)
        assert f["type"] == want, (program, f)
        received += n
    return received


async def t_statements_parsed_once(binary):
    with OwnServer(binary) as srv:
        admin = await connect(srv)
        f = await run(admin, ".user create pviewer pw-pviewer viewer")
        assert f["type"] == "result", f
        f = await run(admin, ".kg acl grant default pviewer viewer")
        assert f["type"] == "result", f
        viewer, f = await login(srv, "pviewer", "pw-pviewer")
        assert f["type"] == "authenticated", f

        before = parsed(srv)
        assert parsed(srv) == before  # reading the metrics parses nothing
        received = await send_all(admin, ADMIN_PROGRAMS)
        assert parsed(srv) - before == received, (parsed(srv) - before, received)

        before = parsed(srv)
        received = await send_all(viewer, VIEWER_PROGRAMS)
        assert parsed(srv) - before == received, (parsed(srv) - before, received)

        # Knowledge graphs: the server's own bookkeeping after a create or a drop, and a
        # session opened on another graph, parse nothing.
        before = parsed(srv)
        for program in (".kg create pgraph", ".kg use pgraph", "+pg(1)", ".kg use default",
                        ".kg list"):
            f = await run(admin, program)
            assert f["type"] == "result", (program, f)
        other = await connect(srv, kg="pgraph")
        f = await run(other, "?pg(X)")
        assert f["type"] == "result" and f["rows"] == [[1]], f
        await other.ws.close()
        f = await run(admin, ".kg drop pgraph")
        assert f["type"] == "result", f
        assert parsed(srv) - before == 7, parsed(srv) - before

        # Snapshot reads: each query once.
        before = parsed(srv)
        f = await admin.call({"type": "read", "id": "r",
                              "queries": [{"name": "a", "query": "?pedge(1, Y)"},
                                          {"name": "b", "query": "?ppath(1, Y)"}]})
        assert f["type"] == "snapshot", f
        f = await admin.call({"type": "read", "id": "r2",
                              "queries": [{"name": "a", "query": "?pedge(X Y)"}]})
        assert f["type"] == "error", f
        assert parsed(srv) - before == 3, parsed(srv) - before

        # A program of several statements counts each once, whatever its size.
        before = parsed(srv)
        program = "\n".join("+pbulk(%d, %d)" % (i, i) for i in range(200))
        f = await run(admin, program)
        assert f["type"] == "result", f
        assert parsed(srv) - before == 200, parsed(srv) - before

        await admin.ws.close()
        await viewer.ws.close()


TESTS = [t_statements_parsed_once]
