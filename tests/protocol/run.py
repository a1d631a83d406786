#!/usr/bin/python3
"""Protocol tests of inputlayer-server: starts a fresh server (temporary data dir, free
port) and checks the HTTP endpoints and every WebSocket frame type: auth, execute with
ids, results (single and streamed), errors with codes, ping, cancel, 200 pipelined
requests in order, malformed frames, and a 17 MiB frame (close 1009). After each check
the server must still answer (on the same connection, or on a new one after a close).

The users, API keys, ACLs and lockout tests are in access.py (on the same server); the
limits, heartbeat and configuration tests in limits.py and the deadline, cancel, overload
and memory tests in guards.py (each on servers of its own); the standing query tests in
subs.py, the atomic program and revision precondition tests in atomic.py (on the shared
server), the subscription group tests in groups.py (on the shared server, but for one
of its own), the snapshot read tests in read.py (on the shared server, and read.py's
OWN_TESTS on servers of their own), the recovery tests after a damaged log or a lost
checkpoint in recovery.py, the revisions across restarts and the log write and sync
failures in storage.py, and the randomized restarts (every stored type, checkpoints,
stops and kills) in restart_random.py (servers of their own, restarted on one data
directory), the backup and restore tests in backup.py (on servers of their own), the
`.why` proof tree tests in why.py and the row provenance, metadata and timing_breakdown
tests in extras.py (on the shared server, and extras.py's OWN_TESTS on servers of their
own), and the randomized tests of
standing queries in subs_random.py, of proof trees in why_random.py, of concurrent
mixed load in chaos_random.py, of concurrent writers and readers against the log
replayed in concurrency.py, of atomic programs against their statements run one by
one in atomic_random.py, of malformed frames in frames_random.py, of odd HTTP in
http_random.py and of rule evaluation against a naive evaluator in eval_random.py (on
servers of their own), and the tests of NUL and other bytes in a request's strings, the
URL's graph name, the WebSocket version, the Bearer scheme and what `.kg list` and
`.kg acl list` show in strings.py (servers of their own), and the rules and facts of no
arguments (queries, standing queries, restarts), `.rel drop` of a declared relation and
`switched_kg` in zero.py (servers of their own), the command-line client's scripts
(retries at the server's limits, `--bail`, exit status, `--script -`, error positions) in
cli_scripts.py (servers of their own), and that every statement a request carries is parsed
once (`inputlayer_statements_parsed_total`) in parses.py (a server of its own).

The HTTP connection slots (per address, the header timeout, the slots kept for health
probes) are tested in http_slots.py, the web client's files and CORS in static_files.py,
and resident memory after repeated large reads and abandoned unauthenticated frames in
memory.py (on servers of their own).

Usage: tests/protocol/run.py --server-bin PATH [--only NAME]... (NAME: part of a module's or a
test's name, to run only those). Needs python3-websockets (Debian's
/usr/bin/python3). Exit status 0 when every check passes."""

import argparse
import asyncio
import json
import os
import sys
import time
import traceback

import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (KEY, PASSWORD, SANITIZER_MARKERS, Server, connect,  # noqa: E402
                    http, still_answers)
import access  # noqa: E402
import atomic  # noqa: E402
import atomic_random  # noqa: E402
import backup  # noqa: E402
import cli_repl  # noqa: E402
import cli_scripts  # noqa: E402
import extras  # noqa: E402
import chaos_random  # noqa: E402
import concurrency  # noqa: E402
import eval_random  # noqa: E402
import groups  # noqa: E402
import guards  # noqa: E402
import http_random  # noqa: E402
import http_slots  # noqa: E402
import limits  # noqa: E402
import memory  # noqa: E402
import notify  # noqa: E402
import parses  # noqa: E402
import pinned  # noqa: E402
import read  # noqa: E402
import recovery  # noqa: E402
import strings  # noqa: E402
import restart_random  # noqa: E402
import static_files  # noqa: E402
import storage  # noqa: E402
import subs  # noqa: E402
import subs_random  # noqa: E402
import why  # noqa: E402
import why_random  # noqa: E402
import frames_random  # noqa: E402
import zero  # noqa: E402

# ---------------------------------------------------------------------------


async def t_http(srv):
    st, body = http(srv, "/health")
    d = json.loads(body)
    assert st == 200 and d["success"] and d["data"]["status"] == "healthy", body
    assert d["data"]["version"] == "0.1.0" and isinstance(d["data"]["uptime_secs"], int)
    assert http(srv, "/v1/health")[0] == 200
    for p in ("/live", "/ready", "/v1/live", "/v1/ready"):
        assert http(srv, p) == (200, ""), p
    assert http(srv, "/metrics")[0] == 401
    st, body = http(srv, "/v1/metrics", {"Authorization": "Bearer " + KEY})
    d = json.loads(body)
    assert st == 200 and d["data"]["knowledge_graphs"] >= 1, body
    assert "sessions" in d["data"] and "query_count" in d["data"]
    st, body = http(srv, "/nope")
    assert st == 404 and json.loads(body)["error"]["code"] == "NOT_FOUND"


async def t_auth(srv):
    c = await connect(srv, auth=False)
    f = await c.call({"type": "execute", "program": "?x(1)", "id": "e"})
    assert f["type"] == "auth_error" and f["id"] == "e", f
    f = await c.call({"type": "ping"})
    assert f["type"] == "auth_error", f
    f = await c.call("{not json")
    assert f["type"] == "auth_error" and f["code"] == "invalid_request", f
    f = await c.call({"type": "authenticate", "api_key": "wrong", "id": "a1"})
    assert f["type"] == "auth_error" and f["id"] == "a1" and f["code"] == "access_denied", f
    f = await c.call({"type": "login", "username": "admin", "password": "wrong"})
    assert f["type"] == "auth_error" and f["message"] == "Invalid credentials", f
    f = await c.call({"type": "login", "username": "admin", "password": PASSWORD, "id": "l"})
    assert f["type"] == "authenticated" and f["id"] == "l", f
    assert f["role"] == "admin" and f["knowledge_graph"] == "default" and f["version"] == "0.1.0"
    assert f["protocol_version"] == 5 and len(f["stream_epoch"]) == 16 and len(f["session_id"]) == 36
    f = await c.call({"type": "authenticate", "api_key": KEY, "id": "again"})
    assert f == {"type": "error", "id": "again", "message": "Already authenticated",
                 "code": "invalid_request"}, f
    await still_answers(c)
    await c.ws.close()
    # Three failures close the connection; a new one works.
    c = await connect(srv, auth=False)
    for i in range(3):
        f = await c.call({"type": "authenticate", "api_key": "bad%d" % i})
        assert f["type"] == "auth_error", f
    try:
        await asyncio.wait_for(c.ws.recv(), 5)
        raise AssertionError("connection not closed after 3 failures")
    except websockets.ConnectionClosed:
        pass
    c = await connect(srv)
    await still_answers(c)
    await c.ws.close()


async def t_execute(srv):
    c = await connect(srv)
    f = await c.call({"type": "execute", "id": "1", "program": "+edge[(1, 2), (2, 3), (3, 4)]"})
    assert f["type"] == "result" and f["id"] == "1", f
    assert f["columns"] == ["message"] and f["rows"] == [["Inserted 3 fact(s) into 'edge'."]], f
    assert f["errors"] == [] and f["row_count"] == 1 and f["truncated"] is False
    f = await c.call({"type": "execute", "id": "2", "program": "?edge(X, Y)"})
    assert f["columns"] == ["X", "Y"] and f["rows"] == [[1, 2], [2, 3], [3, 4]], f
    assert f["row_provenance"] == ["unknown"] * 3
    f = await c.call({"type": "execute", "id": "3", "program": "+v[(\"a\\\"b\", 1.5, 2.0, [1.0, 0.5])]"})
    f = await c.call({"type": "execute", "id": "4", "program": "?v(A, B, C, D)"})
    assert f["rows"] == [["a\"b", 1.5, 2.0, [1.0, 0.5]]], f
    f = await c.call({"type": "execute", "id": "5", "program": "?edge(X,"})
    assert f["type"] == "error" and f["code"] == "validation" and f["id"] == "5", f
    assert f["validation_errors"][0]["statement_index"] == 0, f
    f = await c.call({"type": "execute", "id": "6", "program": "?nosuch(X)"})
    assert f["type"] in ("error", "result"), f
    # Several statements without writes: the last query's table, failures listed in
    # errors[]. (A program that writes stops at its failure: see atomic.py.)
    f = await c.call({"type": "execute", "id": "7",
                      "program": "?edge(4, 5)\n?edge(X Y)\n?edge(1, Y)"})
    assert f["type"] == "result" and f["rows"] == [[1, 2]], f
    assert len(f["errors"]) == 1 and f["errors"][0]["index"] == 1, f
    f = await c.call({"type": "execute", "program": "r(X) <- edge(X, _)"})
    assert "id" not in f and f["rows"] == [["Session rule added for 'r'."]], f
    assert f["statement_class"] == "session_rule" and f["rule_head"] == "r" and f["rule_arity"] == 1
    f = await c.call({"type": "execute", "id": "8", "program": "x" * (1024 * 1024 + 1)})
    assert f["type"] == "error" and f["message"].startswith("Program too large"), f["message"][:80]
    await still_answers(c)
    await c.ws.close()


async def t_ping_cancel(srv):
    c = await connect(srv)
    assert await c.call({"type": "ping"}) == {"type": "pong"}
    assert await c.call({"type": "ping", "id": "p1"}) == {"type": "pong", "id": "p1"}
    f = await c.call({"type": "cancel", "id": "c1", "target": "zzz"})
    assert f == {"type": "cancel_ack", "id": "c1", "target": "zzz", "outcome": "not_found"}, f
    await still_answers(c)
    await c.ws.close()


async def t_pipelined(srv):
    c = await connect(srv)
    await c.call({"type": "execute", "program": "+p[(1), (2), (3)]"})
    n = 200
    for i in range(n):
        if i % 3 == 0:
            await c.send({"type": "ping", "id": "r%d" % i})
        elif i % 3 == 1:
            await c.send({"type": "execute", "id": "r%d" % i, "program": "+q(%d)" % i})
        else:
            await c.send({"type": "execute", "id": "r%d" % i, "program": "?p(X)"})
    for i in range(n):
        f = await c.recv()
        assert f.get("id") == "r%d" % i, (i, f)
        assert f["type"] == ("pong" if i % 3 == 0 else "result"), f
    await still_answers(c)
    await c.ws.close()


async def t_malformed(srv):
    c = await connect(srv)
    for frame, echoed in [("{bad json", None), ("[1, 2]", None), ('{"id": "x"}', "x"),
                          ({"type": "nope", "id": "u"}, "u"),
                          ({"type": "execute", "id": 7, "program": "?p(X)"}, None),
                          ({"type": "execute", "id": "", "program": "?p(X)"}, None),
                          ({"type": "execute", "id": "x" * 65, "program": "?p(X)"}, None),
                          ({"type": "execute", "id": "m"}, "m"),
                          # not JSON jansson takes, but the id reads before the problem
                          ('{"type": "ping", "id": "b", "x": 18446744073709551616}', "b"),
                          ('{"x": [1e999, {"y": "}"}], "id": "o"}', "o"),
                          ('{"type": "execute", "id": "t"', "t"),
                          ('{"\\u0069d": "k", "x": 1e999}', "k"),
                          ('{"id": "\\u540d\\ud83d\\ude00", "x": 1e999}', "\u540d\U0001f600"),
                          ('{"type": "ping", "id": 7, "x": 1e999}', None),
                          ('{"x": tru, "id": "after"}', None)]:
        f = await c.call(frame)
        assert f["type"] == "error" and f["code"] == "invalid_request", (frame, f)
        assert f.get("id") == echoed, (frame, f)
        assert f["message"].startswith("Invalid message format"), f
        await still_answers(c)
    await c.ws.close()


async def t_stream(srv):
    c = await connect(srv)
    pad = "x" * 100
    for k in range(4):
        rows = ", ".join('(%d, "%s")' % (k * 5000 + i, pad) for i in range(5000))
        f = await c.call({"type": "execute", "program": "+big[%s]" % rows})
        assert f["type"] == "result", f
    await c.send({"type": "execute", "id": "s", "program": "?big(X, Y)"})
    f = await c.recv()
    assert f["type"] == "result_start" and f["id"] == "s" and f["columns"] == ["X", "Y"], f
    assert f["total_count"] == 20000 and f["errors"] == []
    got, index = [], 0
    while True:
        f = await c.recv()
        assert f["id"] == "s", f
        if f["type"] == "result_end":
            break
        assert f["type"] == "result_chunk" and f["chunk_index"] == index, f
        assert 0 < len(f["rows"]) <= 500 and len(f["row_provenance"]) == len(f["rows"])
        got.extend(f["rows"])
        index += 1
    assert f["row_count"] == 20000 and f["chunk_count"] == index, f
    assert [r[0] for r in got] == list(range(20000)) and got[0][1] == pad
    await still_answers(c)
    await c.ws.close()


async def t_too_big(srv):
    c = await connect(srv)
    big = json.dumps({"type": "execute", "program": "?" + "x" * (17 * 1024 * 1024)})
    try:
        await c.ws.send(big)
    except websockets.ConnectionClosed:
        pass
    f = json.loads(await asyncio.wait_for(c.ws.recv(), 30))
    assert f["type"] == "notice" and "id" not in f, f
    try:
        await asyncio.wait_for(c.ws.recv(), 30)
        raise AssertionError("connection not closed")
    except websockets.ConnectionClosed as e:
        assert e.code == 1009, e.code
    c = await connect(srv)
    await still_answers(c)
    await c.ws.close()


TESTS = [t_http, t_auth, t_execute, t_ping_cancel, t_pipelined, t_malformed, t_stream,
         t_too_big] + access.TESTS + subs.TESTS + groups.TESTS + read.TESTS + atomic.TESTS \
    + why.TESTS + extras.TESTS


async def run_tests(tests, arg):
    failed = 0
    for t in tests:
        began = time.monotonic()
        try:
            await t(arg)
            # the time each takes: where a suite's minutes go, when CI's run gets long
            print("ok   %s (%.1f s)" % (t.__name__, time.monotonic() - began))
        except Exception as e:  # report every failing check, then fail the run
            failed += 1
            print("FAIL %s: %r" % (t.__name__, e))
            # Where in the tests it failed: a bare TimeoutError does not say which wait ran out.
            here = os.path.dirname(os.path.abspath(__file__))
            for f in traceback.extract_tb(e.__traceback__):
                if os.path.abspath(f.filename).startswith(here):
                    print("     at %s:%d %s: %s" % (os.path.basename(f.filename), f.lineno,
                                                  f.name, f.line))
    return failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server-bin", required=True)
    ap.add_argument("--only", action="append", default=[],
                    help="run only the tests whose module or name contains this (repeatable)")
    args = ap.parse_args()

    def chosen(tests):
        if not args.only:
            return tests
        return [t for t in tests
                if any(o in t.__module__ or o in t.__name__ for o in args.only)]
    sys.stdout.reconfigure(line_buffering=True)
    binary = os.path.abspath(args.server_bin)
    # The shared server: the pipelining test sends 200 requests at once, over the default
    # 100 messages per second (the rate limit has its own tests on their own servers).
    srv = Server(binary, ["--set", "http.rate_limit.ws_max_messages_per_sec=1000"])
    try:
        failed = asyncio.run(run_tests(chosen(TESTS), srv))
    finally:
        status, out = srv.stop()
    if status != 0:
        print("FAIL server exit status %d" % status)
        failed += 1
    if any(m in out for m in SANITIZER_MARKERS):
        print("FAIL sanitizer report from the server:\n" + out[-6000:])
        failed += 1
    # Tests that start servers of their own (limits and configuration).
    own = (limits.TESTS + guards.TESTS + notify.TESTS + groups.OWN_SERVER_TESTS
           + subs.OWN_SERVER_TESTS + read.OWN_TESTS + extras.OWN_TESTS
           + recovery.TESTS + storage.TESTS + restart_random.TESTS + backup.TESTS
           + subs_random.TESTS
           + why_random.TESTS + chaos_random.TESTS + atomic_random.TESTS + concurrency.TESTS
           + frames_random.TESTS + http_random.TESTS + eval_random.TESTS + strings.TESTS
           + parses.TESTS + pinned.TESTS)
    own = chosen(own + http_slots.TESTS + memory.TESTS + static_files.TESTS + zero.TESTS
                 + cli_scripts.TESTS + cli_repl.TESTS)
    failed += asyncio.run(run_tests(own, binary))
    total = len(chosen(TESTS)) + len(own)
    passed = max(total - failed, 0)
    print("%s: %d of %d protocol tests passed" % ("PASS" if not failed else "FAIL", passed, total))
    print("protocol: %d passed, %d failed" % (passed, total - passed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
