"""Tests of the command-line client's script mode (build/inputlayer-client, next to the
server binary), through a real server at its default limits (servers of their own):

* a script of 600 one-fact inserts, past the default 100 messages a second, stores all
  600: a statement answered `rate_limited` did not run, so the client sends it again;
* 100,000 facts in 100 batches store all of them;
* a script with an error ends with a summary on standard error and exits 1; with
  `--bail` (or `.bail on`) it stops at the error and later statements do not run;
* `--script -` reads standard input; a statement that is not UTF-8 fails alone;
* a statement whose reply never came (the server closed the connection) is named with
  its file line, not sent again, and the script stops with exit status 3;
* many scripts at once from one address (refused at /health or the upgrade with 429
  when over the per-address HTTP rate) all complete;
* `--mode` and `.mode` print rows as csv, tsv, json or jsonl, values whole (the table
  cuts them at 40 characters), in process and through the server alike;
* a result cut by the server's max_result_rows is followed by a `warning:` line giving
  the rows it had; one cut by the query's own limit(N) is not;
* a parse error points at the file line and column (`   --> FILE:LINE:COL`, the source
  line and a caret) for an unclosed paren, an unclosed string and a bad head, and the
  statements after it run (here in process too);
* `.subscribe` in process (`--local`) prints the snapshot and then each delta;
* `--atomic` runs a script as one program, all of its writes or none, and the summary
  counts the facts written."""

import concurrent.futures
import os
import re
import subprocess
import tempfile
import time

from common import KEY, SANITIZER_MARKERS, OwnServer, clean_env, http

TIMEOUT = 600  # a liveness bound only


def client_bin(server_bin):
    return os.path.join(os.path.dirname(os.path.abspath(server_bin)), "inputlayer-client")


def run_client(server_bin, args, script_text=None, path=None, stdin=None):
    """Runs the client on a script (a file written from script_text, or path); returns
    (exit status, stdout, stderr)."""
    tmp = None
    if script_text is not None:
        fd, tmp = tempfile.mkstemp(suffix=".iql")
        with os.fdopen(fd, "w") as f:
            f.write(script_text)
        path = tmp
    try:
        cmd = [client_bin(server_bin)] + list(args) + ["--script", path]
        p = subprocess.run(cmd, input=stdin, capture_output=True, timeout=TIMEOUT,
                           env=clean_env(INPUTLAYER_API_KEY=KEY))
        err = p.stderr.decode(errors="replace")
        assert not any(m in err for m in SANITIZER_MARKERS), err[-6000:]
        return p.returncode, p.stdout.decode(errors="replace"), err
    finally:
        if tmp:
            os.unlink(tmp)


def count(srv, server_bin, rel):
    """The number of facts of rel, by a count query through the client."""
    st, out, err = run_client(server_bin, ["--server", srv.base],
                              "n_%s(count<X>) <- %s(X)\n" % (rel, rel))
    m = re.search(r"│\s*(\d+)\s*│", out)
    assert st == 0 and m, (st, out, err)
    return int(m.group(1))


def rejections(srv, reason):
    """The server's count of refusals for reason (the metrics request itself may be
    refused by the per-address rate for a while)."""
    for _ in range(600):
        st, body = http(srv, "/metrics/prometheus", {"Authorization": "Bearer " + KEY})
        if st == 200:
            m = re.search(r'inputlayer_rejections_total\{reason="%s"\} (\d+)' % reason, body)
            assert m, body
            return int(m.group(1))
        assert st == 429, (st, body)
        time.sleep(0.1)
    raise AssertionError("metrics refused for a minute")


async def t_six_hundred_inserts(binary):
    with OwnServer(binary) as srv:
        text = "".join("+one(%d)\n" % i for i in range(600))
        st, out, err = run_client(binary, ["--server", srv.base], text)
        assert st == 0, (st, out[-2000:], err)
        assert out.count("Inserted 1 fact(s) into 'one'.") == 600, out[-2000:]
        assert "600 statement(s) run, 0 failed" in err, err
        assert count(srv, binary, "one") == 600
        # the rate limit was met (and its refusals retried)
        assert rejections(srv, "ws_rate_limit") > 0


async def t_hundred_thousand_in_batches(binary):
    with OwnServer(binary) as srv:
        lines = []
        for b in range(100):
            lines.append("+big[" + ", ".join("(%d)" % (b * 1000 + i) for i in range(1000)) + "]\n")
        st, out, err = run_client(binary, ["--server", srv.base], "".join(lines))
        assert st == 0, (st, out[-2000:], err)
        assert "100 statement(s) run, 0 failed" in err, err
        assert count(srv, binary, "big") == 100000


ERR_SCRIPT = "+good(1)\n+good(2\n+good(3)\n?good(X)\n"


async def t_errors_exit_status_and_bail(binary):
    with OwnServer(binary) as srv:
        st, out, err = run_client(binary, ["--server", srv.base], ERR_SCRIPT)
        assert st == 1, (st, out, err)
        assert "4 statement(s) run, 1 failed" in err, err
        assert "> ?good(X)" in out and "2 rows" in out, out
        # --bail: the failed statement is the last one run
        st, out, err = run_client(binary, ["--server", srv.base, "--bail"],
                                  ".kg create bailed\n" + ERR_SCRIPT)
        assert st == 1, (st, out, err)
        assert "> +good(3)" not in out and "> ?good(X)" not in out, out
        assert "3 statement(s) run, 1 failed (stopped at the first error)" in err, err
        assert re.search(r":3: stopped at the first error", err), err
        # .bail on in the script, then off again
        text = ".kg use bailed\n.bail on\n.bail off\n+x(\n+x(1)\n.bail on\n+x(\n+x(2)\n?x(X)\n"
        st, out, err = run_client(binary, ["--server", srv.base], text)
        assert st == 1, (st, out, err)
        assert "> +x(1)" in out and "> +x(2)" not in out and "> ?x(X)" not in out, out
        # the statements after the bail did not run on the server
        st, out, err = run_client(binary, ["--server", srv.base], ".kg use bailed\n?x(X)\n")
        assert st == 0 and "1 rows" in out and "│ 1 │" in out, (out, err)
        st, out, err = run_client(binary, ["--server", srv.base], ".kg use bailed\n?good(X)\n")
        assert "1 rows" in out, out  # +good(3) never ran


async def t_script_from_stdin(binary):
    with OwnServer(binary) as srv:
        st, out, err = run_client(binary, ["--server", srv.base], path="-",
                                  stdin=b"+piped(7)\n?piped(X)\n")
        assert st == 0, (st, out, err)
        assert "Inserted 1 fact(s) into 'piped'." in out and "│ 7 │" in out, out
        assert "<stdin>: 2 statement(s) run, 0 failed" in err, err
        # a statement that is not UTF-8 cannot travel as JSON: it fails, the next one runs
        st, out, err = run_client(binary, ["--server", srv.base], path="-",
                                  stdin=b'+u("\xff\xfe")\n+u("ok")\n')
        assert st == 1 and "not valid UTF-8" in out, (st, out, err)
        assert "Inserted 1 fact(s) into 'u'." in out, out


async def t_lost_connection_stops(binary):
    with OwnServer(binary) as srv:
        # a frame over the server's 16 MiB message limit: it closes the connection
        text = '+lost(1)\n+lost("%s")\n+lost(2)\n' % ("x" * (17 << 20))
        st, out, err = run_client(binary, ["--server", srv.base], text)
        assert st == 3, (st, out[-500:], err)
        assert "Script error:" in out and "> +lost(2)" not in out, out[-500:]
        assert re.search(r"\.iql:2: no reply to `\+lost\(\"x+", err), err
        assert "not resent" in err and "2 statement(s) run, 1 failed" in err, err
        st, out, err = run_client(binary, ["--server", srv.base], "?lost(X)\n")
        assert "1 rows" in out, out


def many_scripts(srv, binary, n, parallel):
    def one(i):
        return run_client(binary, ["--server", srv.base],
                          "+many(%d)\n+many(%d)\n" % (2 * i, 2 * i + 1))
    with concurrent.futures.ThreadPoolExecutor(parallel) as ex:
        results = list(ex.map(one, range(n)))
    for st, out, err in results:
        assert st == 0, (st, out, err)
    assert count(srv, binary, "many") == 2 * n


async def t_many_scripts_from_one_address(binary):
    """120 clients, 30 at a time, each a few statements, at the default limits; and 8 at
    once against a per-address HTTP rate of 2 a second, so that some are surely refused
    at /health or the upgrade (429): they must come back, not give up."""
    with OwnServer(binary) as srv:
        many_scripts(srv, binary, 120, 30)
    with OwnServer(binary, ["--set", "http.rate_limit.per_ip_max_rps=2"]) as srv:
        many_scripts(srv, binary, 8, 8)
        assert rejections(srv, "per_ip_rate") > 0


POSITIONS = """.kg create pos
.kg use pos
+p(1)
+edge(1, 2
+p(2)
+name("bob, 1)
+p(3)
foo(X, 1 +) <- p(X)
+p(4)
?p(X)
"""


def check_positions(st, out, err, path):
    assert st == 1, (st, out, err)
    name = re.escape(path)
    # unclosed paren: line 4, at the `(`
    assert re.search(r"> \+edge\(1, 2\nParse error: unterminated.*\n   --> %s:4:6\n    \|\n"
                     r"    \| \+edge\(1, 2\n    \|      \^\n" % name, out), out
    # unclosed string: line 6, at the `"`
    assert re.search(r"   --> %s:6:7\n    \|\n    \| \+name\(\"bob, 1\)\n    \|       \^\n"
                     % name, out), out
    # bad head: line 8, at the bad expression
    assert re.search(r"   --> %s:8:8\n    \|\n    \| foo\(X, 1 \+\) <- p\(X\)\n"
                     r"    \|        \^\n" % name, out), out
    # every statement after them ran
    for i in range(1, 5):
        assert "> +p(%d)\nInserted 1 fact(s) into 'p'." % i in out, out
    assert "4 rows" in out, out
    assert "10 statement(s) run, 3 failed" in err, err


async def t_error_positions(binary):
    fd, path = tempfile.mkstemp(suffix=".iql")
    with os.fdopen(fd, "w") as f:
        # a comment over lines before the errors must not shift the line numbers
        f.write("/* a comment\n   over lines */\n" + POSITIONS.replace("+p(1)", "+p(1) // one"))
    try:
        st, out, err = run_client(binary, ["--local"], path=path)
        shifted = re.sub(r"(:)(\d+)(:\d+\n)", lambda m: m.group(1) + str(int(m.group(2)) - 2)
                         + m.group(3), out)
        check_positions(st, shifted, err, path)
        with OwnServer(binary) as srv:
            st, out, err = run_client(binary, ["--server", srv.base], path=path)
            shifted = re.sub(r"(:)(\d+)(:\d+\n)",
                             lambda m: m.group(1) + str(int(m.group(2)) - 2) + m.group(3), out)
            check_positions(st, shifted, err, path)
    finally:
        os.unlink(path)


MODES = """+s[("ann", 1.5, true), ("a \\"q\\", b", 2, false), ("%s", 3, true)]
.mode csv
?s(A, B, C)
.mode tsv
?s(A, B, C)
.mode json
?s(A, B, C)
?s(A, 99, C)
.mode jsonl
?s(A, B, C)
.mode table
?s(A, B, C)
""" % ("x" * 50)

MODES_OUT = """> .mode csv
> ?s(A, B, C)
A,B,C
"a ""q"", b",2,false
ann,1.5,true
%(x)s,3,true
> .mode tsv
> ?s(A, B, C)
A\tB\tC
a "q", b\t2\tfalse
ann\t1.5\ttrue
%(x)s\t3\ttrue
> .mode json
> ?s(A, B, C)
[
  {"A": "a \\"q\\", b", "B": 2, "C": false},
  {"A": "ann", "B": 1.5, "C": true},
  {"A": "%(x)s", "B": 3, "C": true}
]
> ?s(A, 99, C)
[]
> .mode jsonl
> ?s(A, B, C)
{"A": "a \\"q\\", b", "B": 2, "C": false}
{"A": "ann", "B": 1.5, "C": true}
{"A": "%(x)s", "B": 3, "C": true}
> .mode table
> ?s(A, B, C)
""" % {"x": "x" * 50}


async def t_output_modes(binary):
    def check(st, out, err):
        assert st == 0, (st, out, err)
        body = out.split("Inserted 3 fact(s) into 's'.\n", 1)[1]
        assert body.startswith(MODES_OUT), body
        assert '"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…' in body, body  # table cuts
    check(*run_client(binary, ["--local"], MODES))
    with OwnServer(binary) as srv:
        check(*run_client(binary, ["--server", srv.base], MODES))
        # --mode sets it from the start; a bad mode is bad usage
        st, out, err = run_client(binary, ["--server", srv.base, "--mode", "jsonl"],
                                  "?s(A, 3, C)\n")
        assert st == 0 and out == "> ?s(A, 3, C)\n{\"A\": \"%s\", \"3\": 3, \"C\": true}\n" % ("x" * 50), out
        st, out, err = run_client(binary, ["--server", srv.base, "--mode", "xml"], "?s(A, B, C)\n")
        assert st == 2, (st, out, err)


async def t_cut_result_warning(binary):
    with OwnServer(binary, ["--set", "storage.performance.max_result_rows=50"]) as srv:
        text = "+w[" + ", ".join("(%d)" % i for i in range(200)) + "]\n?w(X)\n?w(X), limit(3)\n"
        st, out, err = run_client(binary, ["--server", srv.base], text)
        assert st == 0, (st, out, err)
        assert re.search(r"\n50 rows\nwarning: the result was cut at 50 of its 200 rows", out), out
        assert "3 rows\n" in out and out.count("warning:") == 1, out
        # outside table mode the warning goes to standard error
        st, out, err = run_client(binary, ["--server", srv.base, "--mode", "csv"], "?w(X)\n")
        assert st == 0 and out.count("\n") == 52 and "warning:" not in out, out
        assert "cut at 50 of its 200 rows" in err, err


LOCAL_SUBSCRIBE = """+edge[(1, 2), (2, 3)]
+path(X, Y) <- edge(X, Y)
+path(X, Z) <- path(X, Y), edge(Y, Z)
.subscribe p ?path(1, Y)
.subscribe q ?path(2, Y)
.subscribe p ?edge(X, Y)
+edge(3, 4)
-edge(1, 2)
.unsubscribe p
+edge(1, 5)
.subscribe bad ?edge(X, Y), limit(1)
.kg create other
+e(1)
.subscribe o ?e(X)
.kg use default
.kg drop other
+e(2)
"""


async def t_local_subscribe(binary):
    """`.subscribe` in process prints the snapshot, then after each statement the delta
    of every subscription it changed (keyed members each get only their key's rows);
    `.unsubscribe` stops them; refusals fail the statement; a subscription whose graph
    is dropped gets its last delta and then says it failed, once."""
    st, out, err = run_client(binary, ["--local"], LOCAL_SUBSCRIBE)
    lines = [l for l in out.splitlines() if not l.startswith("> ")]
    want = [
        "Inserted 2 fact(s) into 'edge'.",
        "Rule 'path' registered.",
        "Rule 'path' registered.",
        "Subscribed 'p' (1, Y): 2 rows", "  (1, 2)", "  (1, 3)",
        "Subscribed 'q' (2, Y): 1 row", "  (2, 3)",
        "Subscription 'p' already exists",
        "Inserted 1 fact(s) into 'edge'.",
        "Subscription 'p' delta 1: 1 inserted, 0 retracted", "  +(1, 4)",
        "Subscription 'q' delta 1: 1 inserted, 0 retracted", "  +(2, 4)",
        "Deleted 1 facts from 'edge'.",
        "Subscription 'p' delta 2: 0 inserted, 3 retracted", "  -(1, 2)", "  -(1, 3)",
        "  -(1, 4)",
        "Unsubscribed 'p'.",
        "Inserted 1 fact(s) into 'edge'.",
        "Cannot subscribe to this query: view maintenance does not support :limit or "
        ":offset yet",
        "Knowledge graph 'other' created.", "Switched to knowledge graph: other",
        "Inserted 1 fact(s) into 'e'.",
        "Subscribed 'o' (X): 1 row", "  (1)",
        "Switched to knowledge graph: default",
        "Knowledge graph 'other' dropped.",
        "Subscription 'o' delta 1: 0 inserted, 1 retracted", "  -(1)",
        "Subscription 'o' failed: the knowledge graph was dropped",
        "Inserted 1 fact(s) into 'e'.",
    ]
    assert lines == want, (lines, err)
    assert st == 1 and "17 statement(s) run, 2 failed" in err, (st, err)


async def t_atomic_and_facts_written(binary):
    """--atomic: the script's writes all apply, or none; the summary counts the stored
    facts written (inserted or deleted), in process and through the server."""
    good = "+at[(1), (2), (3)]\n-at(1)\nsess(5)\n+at(4)\n"
    bad = "+at[(10), (11)]\n.rule drop no_such_rule\n+at(12)\n"
    # without --atomic, statement by statement: the summary counts 3 + 1 + 1
    st, out, err = run_client(binary, ["--local"], good)
    assert st == 0 and "4 statement(s) run, 0 failed; 5 fact(s) written" in err, err
    # in process: one script, one engine; the failure rolls back the earlier writes too
    st, out, err = run_client(binary, ["--local", "--atomic"], good + bad)
    assert st == 1 and "Rolled back: none of the 6 statement(s) run was applied" in out, out
    assert "6 statement(s) run, 1 failed; 0 fact(s) written" in err, err
    assert "> +at(12)" not in out, out
    st, out, err = run_client(binary, ["--local", "--atomic"], good + "?at(X)\n")
    assert st == 0 and "3 rows" in out and "5 fact(s) written" in err, (out, err)
    with OwnServer(binary) as srv:
        where = ["--server", srv.base]
        st, out, err = run_client(binary, where, good)
        assert st == 0 and "4 statement(s) run, 0 failed; 5 fact(s) written" in err, err
        # one program: the failed statement takes the others' writes back with it
        st, out, err = run_client(binary, where + ["--atomic"], bad)
        assert st == 1 and "3 statement(s) run, 1 failed; 0 fact(s) written" in err, err
        assert "rolled back" in out, out
        st, out, err = run_client(binary, where, "?at(X)\n")
        assert "│ 10 │" not in out and "│ 12 │" not in out and "3 rows" in out, out
        st, out, err = run_client(binary, where + ["--atomic"], "+at(20)\n-at(2)\n")
        assert st == 0 and "2 statement(s) run, 0 failed; 2 fact(s) written" in err, err


TESTS = [t_six_hundred_inserts, t_hundred_thousand_in_batches, t_errors_exit_status_and_bail,
         t_script_from_stdin, t_lost_connection_stops, t_many_scripts_from_one_address, t_error_positions,
         t_output_modes, t_cut_result_warning, t_local_subscribe, t_atomic_and_facts_written]
