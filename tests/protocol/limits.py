"""Protocol tests that need servers of their own: the message rate limit, connection
limits, the heartbeat and lifetime, and configuration precedence (flags > environment >
file > defaults). Each test ends by checking that its server still answers."""

import asyncio
import json
import os
import socket
import subprocess
import tempfile
import time

import websockets

from common import (KEY, NO_MESSAGE_RATE, Conn, OwnServer, clean_env, connect, expect_closed,
                    http, is_sanitized, prometheus, still_answers)

RATE = "http.rate_limit.ws_max_messages_per_sec"


async def rate_message(srv, n):
    """Sends n+1 pings at once; returns the error of the one over the limit."""
    c = await connect(srv)
    await asyncio.sleep(1.05)  # a fresh one-second window
    for i in range(n + 1):
        await c.send({"type": "ping", "id": "p%d" % i})
    frames = [await c.recv() for _ in range(n + 1)]
    await c.ws.close()
    assert [f["type"] for f in frames] == ["pong"] * n + ["error"], frames
    return frames[-1]


async def t_rate_limit(binary):
    with OwnServer(binary, ["--set", RATE + "=5"]) as srv:
        c = await connect(srv)
        await asyncio.sleep(1.05)
        for i in range(8):
            await c.send({"type": "ping", "id": "p%d" % i})
        frames = [await c.recv() for _ in range(8)]
        assert [f["type"] for f in frames[:5]] == ["pong"] * 5, frames
        for i, f in enumerate(frames[5:], 5):
            assert f == {"type": "error", "id": "p%d" % i, "code": "rate_limited",
                         "message": "Rate limit exceeded (5 msgs/sec)"}, f
        await asyncio.sleep(1.05)
        await still_answers(c)
        await c.ws.close()
        # Before authentication, going over the rate closes the connection.
        c = await connect(srv, auth=False)
        for i in range(6):
            await c.send({"type": "ping"})  # "Authentication required": not a failure
        frames, code = await expect_closed(c)
        assert [f["code"] for f in frames] == ["invalid_request"] * 5 + ["rate_limited"], frames
        assert frames[-1]["message"] == "Rate limit exceeded (5 msgs/sec)" and code == 1008
        c = await connect(srv)
        await still_answers(c)
        await c.ws.close()


async def t_connection_limits(binary):
    args = ["--set", "http.rate_limit.max_ws_connections=2",
            "--set", "http.rate_limit.ws_max_preauth_per_ip=1",
            "--set", "http.rate_limit.max_connections=2",
            "--set", "http.rate_limit.per_ip_max_rps=20"]
    with OwnServer(binary, args) as srv:
        # One unauthenticated WebSocket per address.
        a = await connect(srv, auth=False)
        try:
            await websockets.connect(srv.ws)
            raise AssertionError("second unauthenticated connection accepted")
        except websockets.InvalidStatusCode as e:
            assert e.status_code == 429, e
        f = await a.call({"type": "authenticate", "api_key": KEY})
        assert f["type"] == "authenticated", f
        # Two WebSockets in all.
        b = await connect(srv)
        try:
            await websockets.connect(srv.ws)
            raise AssertionError("third connection accepted")
        except websockets.InvalidStatusCode as e:
            assert e.status_code == 503, e
        await b.ws.close()
        await asyncio.sleep(0.2)
        b = await connect(srv)
        await still_answers(b)
        await b.ws.close()
        # Two HTTP connections: a third is in a slot kept for the health probes, and gets
        # 503 for anything else (tests/protocol/http_slots.py tests those slots).
        socks = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(2)]
        time.sleep(0.2)
        with socket.create_connection(("127.0.0.1", srv.port)) as s3:
            s3.settimeout(5)
            s3.sendall(b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
            reply = s3.recv(4096).decode()
            assert reply.startswith("HTTP/1.1 503") and reply.endswith("Too many connections"), \
                reply
        for s in socks:
            s.close()
        await asyncio.sleep(0.2)
        # Requests per second and address (health probes exempt).
        await asyncio.sleep(1.05)
        codes = [http(srv, "/nope")[0] for _ in range(25)]
        # The window starts at the first request: the first 20 pass, then 429 (unless
        # the 25 requests took over a second, when the count starts again).
        assert codes[:20] == [404] * 20 and 429 in codes, codes
        assert http(srv, "/health")[0] == 200
        await asyncio.sleep(1.05)
        assert http(srv, "/nope")[0] == 404
        m = prometheus(srv)
        for reason in ("ws_connection_limit", "ws_preauth_limit", "http_connection_limit",
                       "per_ip_rate"):
            assert m['inputlayer_rejections_total{reason="%s"}' % reason] >= 1, (reason, m)
        await still_answers(a)
        await a.ws.close()


async def t_heartbeat_and_lifetime(binary):
    args = ["--set", "http.ws_ping_interval_ms=100",
            "--set", "http.rate_limit.ws_max_lifetime_secs=2"]
    with OwnServer(binary, args) as srv:
        c = await connect(srv)
        t0 = time.monotonic()
        await asyncio.sleep(0.5)
        assert prometheus(srv)["inputlayer_ws_pings_total"] >= 2
        await still_answers(c)
        frames, code = await expect_closed(c)
        assert frames == [{"type": "notice", "code": "lifetime_exceeded",
                           "message": "Connection lifetime exceeded (2s)"}], frames
        assert 1.5 <= time.monotonic() - t0 < 6, time.monotonic() - t0
        c = await connect(srv)
        await still_answers(c)
        await c.ws.close()
    with OwnServer(binary, ["--set", "http.ws_auth_timeout_ms=300"]) as srv:
        c = await connect(srv, auth=False)
        frames, code = await expect_closed(c)
        assert frames == [{"type": "notice", "code": "auth_timeout",
                           "message": "Authentication timeout (0.3s)"}], frames
        c = await connect(srv)
        await still_answers(c)
        await c.ws.close()


async def t_idle_timeout_counts_from_the_last_request(binary):
    """A connection that keeps asking stays open for three times the idle timeout; once it
    stops, the timeout closes it, counted from its last request (the deadline each request
    moves is only recorded, and the timer armed again when it fires: srv_timer_start)."""
    with OwnServer(binary, ["--set", "http.ws_idle_timeout_ms=600"]) as srv:
        c = await connect(srv)
        t0 = time.monotonic()
        while True:
            await still_answers(c)
            last = time.monotonic()
            if last - t0 >= 1.8:
                break
            await asyncio.sleep(0.15)
        frames, code = await expect_closed(c)
        waited = time.monotonic() - last
        assert frames == [{"type": "notice", "code": "idle_timeout",
                           "message": "Idle timeout"}], frames
        assert code == 1000, code
        assert 0.5 <= waited < 6, waited
        c = await connect(srv)
        await still_answers(c)
        await c.ws.close()


def print_config(binary, args=(), env=None, cwd=None):
    p = subprocess.run([binary, "--print-config"] + list(args), capture_output=True, text=True,
                       env=clean_env(**(env or {})), cwd=cwd, timeout=30)
    return p.returncode, p.stdout, p.stderr


async def t_config_precedence(binary):
    d = tempfile.mkdtemp(prefix="il-config-")
    path = os.path.join(d, "server.toml")
    with open(path, "w") as f:
        f.write("# test\n[http]\nws_idle_timeout_ms = 1111\nws_auth_timeout_ms = 2222\n"
                "[http.rate_limit]\nws_max_messages_per_sec = 3  # file\nmystery = 1\n"
                "[logging]\nlevel = \"debug\"\n")
    env = {"INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_MESSAGES_PER_SEC": "4",
           "INPUTLAYER_HTTP__WS_IDLE_TIMEOUT_MS": "3333"}
    rc, out, err = print_config(binary, ["--config", path, "--set", RATE + "=5"], env)
    assert rc == 0, err
    assert "ws_max_messages_per_sec = 5  # flag" in out, out
    assert "ws_idle_timeout_ms = 3333  # environment" in out, out
    assert "ws_auth_timeout_ms = 2222  # file" in out, out
    assert "ws_ping_interval_ms = 30000  # default" in out, out
    assert "unknown configuration key 'http.rate_limit.mystery'" in err, err
    assert "not implemented yet (no effect): logging.level" in err, err
    assert "ADMIN_PASSWORD" not in err and "BOOTSTRAP" not in err, err
    # ./config.toml is read without --config; a broken file or value is an error.
    with open(os.path.join(d, "config.toml"), "w") as f:
        f.write("[http]\nport = 4321\n")
    rc, out, err = print_config(binary, cwd=d)
    assert rc == 0 and "port = 4321  # file" in out, (out, err)
    rc, out, err = print_config(binary, ["--config", os.path.join(d, "missing.toml")])
    assert rc == 1 and "ERROR: Config file not found: " in err, (rc, err)
    rc, out, err = print_config(binary, env={"INPUTLAYER_HTTP__PORT": "http"})
    assert rc == 1 and "INPUTLAYER_HTTP__PORT" in err, (rc, err)
    with open(os.path.join(d, "config.toml"), "w") as f:
        f.write("[http]\nport = \"x\"\n")
    rc, out, err = print_config(binary, cwd=d)
    assert rc == 1 and "Failed to parse config from ./config.toml: line 2:" in err, (rc, err)

    # The running server honours each source in turn: flag, then environment, then file.
    async def limit(args, env):
        with OwnServer(binary, ["--config", path] + args, env) as srv:
            f = await rate_message(srv, int(args[-1].split("=")[1]) if args else
                                   int(env.get("INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_MESSAGES"
                                               "_PER_SEC", 3)))
            c = await connect(srv)
            await still_answers(c)
            await c.ws.close()
            return f["message"]

    assert await limit(["--set", RATE + "=5"], env) == "Rate limit exceeded (5 msgs/sec)"
    assert await limit([], env) == "Rate limit exceeded (4 msgs/sec)"
    assert await limit([], {}) == "Rate limit exceeded (3 msgs/sec)"


async def t_identities_persist(binary):
    """Users, keys and ACLs survive a restart; the bootstrap variables count only on the
    first start; the file is owner-only."""
    d = tempfile.mkdtemp(prefix="il-identities-")
    data = os.path.join(d, "data")
    with OwnServer(binary, data_dir=data) as srv:
        a = await connect(srv)
        f = await a.call({"type": "execute", "program": ".user create dana pw-dana editor"})
        assert f["type"] == "result", f
        f = await a.call({"type": "execute", "program": ".apikey create keep"})
        keep = f["rows"][0][1]
        f = await a.call({"type": "execute", "program": ".kg acl grant default dana viewer"})
        assert f["type"] == "result", f
        await a.ws.close()
    path = os.path.join(data, "identities.tsv")
    assert os.stat(path).st_mode & 0o777 == 0o600, oct(os.stat(path).st_mode)
    with open(path) as f:
        text = f.read()
    assert "pw-dana" not in text and keep not in text and "$argon2id$" in text, text
    env = {"INPUTLAYER_BOOTSTRAP_API_KEY": "another-key-" + os.urandom(4).hex()}
    with OwnServer(binary, data_dir=data, env=env) as srv:
        assert "used on the first start only" in srv.output(), srv.output()
        c = await connect(srv, key=keep)
        await still_answers(c)
        await c.ws.close()
        c = await connect(srv)  # the first start's bootstrap key
        f = await c.call({"type": "execute", "program": ".kg acl list default"})
        assert f["rows"] == [["ACL entries for 'default':\n  dana: viewer"]], f
        await c.ws.close()
        c = Conn(await websockets.connect(srv.ws))
        f = await c.call({"type": "login", "username": "dana", "password": "pw-dana"})
        assert f["type"] == "authenticated" and f["role"] == "editor", f
        await still_answers(c)
        await c.ws.close()
    # A damaged store stops the server rather than starting with no users.
    with open(path, "a") as f:
        f.write("user\tbroken\n")
    p = subprocess.run([binary, "--data-dir", data, "--port", "0"], capture_output=True,
                       text=True, env=clean_env(), timeout=60)
    assert p.returncode == 1 and "identities.tsv line" in p.stderr, (p.returncode, p.stderr)


async def t_subscription_limit(binary):
    """http.rate_limit.ws_max_subscriptions: the bound per connection (a group counts once
    per member), and 0 for none."""
    with OwnServer(binary, env={"INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_SUBSCRIPTIONS": "2"}) as srv:
        c = await connect(srv)
        for i in range(2):
            f = await c.call({"type": "execute", "program": ".subscribe s%d ?e(X, %d)" % (i, i)})
            assert f["type"] == "result", f
        f = await c.call({"type": "execute", "program": ".subscribe s2 ?e(X)"})
        assert f["type"] == "error" and \
            f["message"] == "Too many subscriptions on this connection (max 2)", f
        await c.call({"type": "execute", "program": ".unsubscribe s1"})
        f = await c.call({"type": "subscribe", "subscription": "g",
                          "queries": [{"name": "a", "query": "?e(X, 1)"},
                                      {"name": "b", "query": "?e(X, 2)"}]})
        assert f["type"] == "error" and "a group counts once per query" in f["message"], f
        await still_answers(c)
    with OwnServer(binary, env={"INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_SUBSCRIPTIONS": "0",
                                "INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_MESSAGES_PER_SEC": "0"}) as srv:
        c = await connect(srv)
        for i in range(100):
            f = await c.call({"type": "execute", "program": ".subscribe s%d ?e(X, %d)" % (i, i)})
            assert f["type"] == "result", f
        await still_answers(c)


async def t_durability_modes(binary):
    """storage.persist.durability_mode: each mode serves writes that survive a restart
    (in `batched` the sync timer runs after them), and an unknown mode stops the server
    with a clear error."""
    d = tempfile.mkdtemp(prefix="il-durability-")
    for mode in ("immediate", "batched", "async"):
        data = os.path.join(d, mode)
        env = {"INPUTLAYER_STORAGE__PERSIST__DURABILITY_MODE": mode}
        with OwnServer(binary, data_dir=data, env=env) as srv:
            c = await connect(srv)
            for i in range(20):
                f = await c.call({"type": "execute", "program": "+d(%d)" % i})
                assert f["type"] == "result", f
            await asyncio.sleep(0.05)  # past batch_sync_ms: the timer's sync runs
            await still_answers(c)
            await c.ws.close()
        with OwnServer(binary, data_dir=data, env=env) as srv:
            c = await connect(srv)
            f = await c.call({"type": "execute", "program": "?d(X)"})
            assert sorted(f["rows"]) == [[i] for i in range(20)], (mode, f)
            await c.ws.close()
    p = subprocess.run([binary, "--data-dir", os.path.join(d, "bad"), "--port", "0"],
                       capture_output=True, text=True, timeout=60,
                       env=clean_env(INPUTLAYER_STORAGE__PERSIST__DURABILITY_MODE="sometimes"))
    assert p.returncode == 1 and "storage.persist.durability_mode must be immediate, batched " \
        "or async, not 'sometimes'" in p.stderr, (p.returncode, p.stderr)


async def t_group_commit(binary):
    """In `immediate` mode concurrent writers share fdatasyncs (group commit): 8 connections
    writing at once make every write durable with fewer syncs than log records, and every
    acknowledged write is there after a restart. Without group commit each record has a
    sync of its own (syncs == records). Each sync is made to take 2 ms more
    (INPUTLAYER_TEST_SYNC_DELAY_US), so that the other writers' commits arrive during it
    however fast the disk and however slow the build."""
    data = tempfile.mkdtemp(prefix="il-group-commit-")
    writers, per = 8, 40
    with OwnServer(binary, data_dir=data, env={"INPUTLAYER_TEST_SYNC_DELAY_US": "2000"}) as srv:
        conns = [await connect(srv) for _ in range(writers)]
        before = prometheus(srv)

        async def write(w, c):
            for i in range(per):
                f = await c.call({"type": "execute", "program": "+g(%d, %d)" % (w, i)})
                assert f["type"] == "result", f
        await asyncio.gather(*(write(w, c) for w, c in enumerate(conns)))
        after = prometheus(srv)
        records = after["inputlayer_log_records_total"] - before["inputlayer_log_records_total"]
        syncs = after["inputlayer_log_syncs_total"] - before["inputlayer_log_syncs_total"]
        assert records == writers * per, (records, syncs)
        assert 1 <= syncs <= 0.5 * records, (records, syncs)
        for c in conns:
            await c.ws.close()
    with OwnServer(binary, data_dir=data) as srv:
        c = await connect(srv)
        f = await c.call({"type": "execute", "program": "?g(W, I)"})
        assert sorted(f["rows"]) == [[w, i] for w in range(writers) for i in range(per)], f
        await c.ws.close()


async def lone_writer_run(binary, data, env=None):
    """Three writes, a pause, ten more from the same connection: the log's counters over
    the ten."""
    with OwnServer(binary, data_dir=data, env=env) as srv:
        c = await connect(srv)
        for i in range(3):
            f = await c.call({"type": "execute", "program": "+lw(%d)" % i})
            assert f["type"] == "result" and not f["errors"], f
        await asyncio.sleep(0.02)
        before = prometheus(srv)
        for i in range(3, 13):
            f = await c.call({"type": "execute", "program": "+lw(%d)" % i})
            assert f["type"] == "result" and not f["errors"], f
        after = prometheus(srv)
        await c.ws.close()
    return {k.replace("inputlayer_log_", ""): after[k] - before[k] for k in (
        "inputlayer_log_records_total", "inputlayer_log_syncs_total",
        "inputlayer_log_syncs_io_thread_total")}


async def t_lone_writer_syncs_on_io_thread(binary):
    """A connection that has been the only writer for 5 ms has its commits synced by the
    I/O thread itself (no hand-off to the syncer and back: docs/durability.md, Group
    commit); each write is still durable before its reply, and all are there after a
    restart. On a disk whose syncs take over 2 ms (INPUTLAYER_TEST_SYNC_DELAY_US) the
    syncer keeps them: the I/O thread must not stall on a slow disk. Nor while several
    connections write: it reads their requests meanwhile, for the syncer's group commit."""
    # Every sync of the ten is the I/O thread's unless one of them took over 2 ms. The
    # machine's disk may be that slow for a while (another process syncing): up to three
    # runs, one of which must show it.
    for attempt in range(3):
        data = tempfile.mkdtemp(prefix="il-lone-writer-")
        d = await lone_writer_run(binary, data)
        assert d["records_total"] == 10 and d["syncs_total"] == 10, d
        if d["syncs_io_thread_total"] >= 1:
            break
    assert d["syncs_io_thread_total"] >= 1, d
    slow = await lone_writer_run(binary, tempfile.mkdtemp(prefix="il-lone-writer-slow-"),
                                 {"INPUTLAYER_TEST_SYNC_DELAY_US": "3000"})
    assert slow == {"records_total": 10, "syncs_total": 10, "syncs_io_thread_total": 0}, slow
    with OwnServer(binary) as srv:
        conns = [await connect(srv) for _ in range(4)]
        before = prometheus(srv)

        async def write(w, c):
            for i in range(25):
                f = await c.call({"type": "execute", "program": "+cw(%d, %d)" % (w, i)})
                assert f["type"] == "result" and not f["errors"], f
        await asyncio.gather(*(write(w, c) for w, c in enumerate(conns)))
        after = prometheus(srv)
        syncs, lone = (after[k] - before[k] for k in (
            "inputlayer_log_syncs_total", "inputlayer_log_syncs_io_thread_total"))
        assert lone <= 0.5 * syncs, (lone, syncs)
        for c in conns:
            await c.ws.close()
    with OwnServer(binary, data_dir=data) as srv:
        c = await connect(srv)
        f = await c.call({"type": "execute", "program": "?lw(X)"})
        assert sorted(r[0] for r in f["rows"]) == list(range(13)), f
        await c.ws.close()


async def t_test_reply_delay(binary):
    """INPUTLAYER_TEST_REPLY_DELAY_NS, the perf gate's way to make a build slower on purpose
    (docs/server.md): every reply is held that long, and still right. Only a lower bound is
    asserted: without the variable the same replies come in well under it."""
    delay_s = 0.2
    with OwnServer(binary, env={"INPUTLAYER_TEST_REPLY_DELAY_NS": str(int(delay_s * 1e9))}) as srv:
        c = await connect(srv)
        f = await c.call({"type": "execute", "program": "+d(1, 2)"})
        assert f["type"] == "result", f
        for _ in range(3):
            t0 = time.monotonic()
            f = await c.call({"type": "execute", "program": "?d(X, Y)"})
            took = time.monotonic() - t0
            assert f["type"] == "result" and f["rows"] == [[1, 2]], f
            assert took >= delay_s, took
        await c.ws.close()


async def t_preempted_inline_write_stays_inline(binary):
    """A write run inline on the I/O thread that takes long by the clock but not by its CPU
    time (the thread was away: INPUTLAYER_TEST_INLINE_WRITE_STALL_NS sleeps 5 ms in each,
    as a preemption would) keeps its connection's writes inline: only a write whose own
    work took over 2 ms sends them to the pool (docs/server.md, Threads). Where each write
    ran is counted in inputlayer_writes_total."""
    env = {"INPUTLAYER_TEST_INLINE_WRITE_STALL_NS": "5000000"}
    with OwnServer(binary, env=env) as srv:
        c = await connect(srv)
        f = await c.call({"type": "execute", "program": "+st(-1, -1)"})
        assert f["type"] == "result" and not f["errors"], f
        before = prometheus(srv)
        for i in range(6):
            f = await c.call({"type": "execute", "program": f"+st({i}, {i})"})
            assert f["type"] == "result" and not f["errors"], f
        after = prometheus(srv)
        ran = {k: after[f'inputlayer_writes_total{{ran="{k}"}}'] -
               before[f'inputlayer_writes_total{{ran="{k}"}}'] for k in ("inline", "pool")}
        assert ran == {"inline": 6, "pool": 0}, ran
        f = await c.call({"type": "execute", "program": "?st(X, Y)"})
        assert sorted(f["rows"]) == [[i, i] for i in range(-1, 6)], f
        # A rule is a write the I/O thread never runs: it counts as the pool's.
        f = await c.call({"type": "execute", "program": "+st2(X) <- st(X, _)"})
        assert f["type"] == "result" and not f["errors"], f
        final = prometheus(srv)
        pooled = 'inputlayer_writes_total{ran="pool"}'
        assert final[pooled] == after[pooled] + 1, (final[pooled], after[pooled])
        await c.ws.close()


async def t_slow_inline_write_sends_writes_to_pool(binary):
    """A write run inline whose own work took over 2 ms of the I/O thread's CPU time (here,
    the upkeep of a maintained rule: one fact adds 20,000 rows to it) sends its connection's
    writes to the pool for the next second (docs/server.md, Threads), counted in
    inputlayer_writes_total."""
    with OwnServer(binary) as srv:
        c = await connect(srv)
        for k in range(4):
            rows = ", ".join("(%d)" % (k * 5000 + i) for i in range(5000))
            f = await c.call({"type": "execute", "program": "+sa[%s]" % rows})
            assert f["type"] == "result" and not f["errors"], f
        # Maintained (docs/engine.md, the read policy) once read unbound, with every relation
        # the test writes already holding facts (one that starts to would close the view).
        for prog in ("+sb(0)", "+sz(0)", "+sab(X, Y) <- sa(X), sb(Y)", "?sab(X, Y)"):
            f = await c.call({"type": "execute", "program": prog})
            assert f["type"] == "result" and not f["errors"], f
        await asyncio.sleep(1.2)  # past any pause the setup's own writes started
        key = 'inputlayer_writes_total{ran="%s"}'
        before = prometheus(srv)
        f = await c.call({"type": "execute", "program": "+sz(1)"})
        assert f["type"] == "result" and not f["errors"], f
        quick = prometheus(srv)
        assert quick[key % "inline"] == before[key % "inline"] + 1, (before, quick)
        f = await c.call({"type": "execute", "program": "+sb(1)"})
        assert f["type"] == "result" and not f["errors"], f
        slow = prometheus(srv)
        assert slow[key % "inline"] == quick[key % "inline"] + 1, (quick, slow)
        # The next write goes to the pool, though it is as quick as +sz(1).
        f = await c.call({"type": "execute", "program": "+sz(2)"})
        assert f["type"] == "result" and not f["errors"], f
        after = prometheus(srv)
        assert after[key % "pool"] == slow[key % "pool"] + 1, (slow, after)
        f = await c.call({"type": "execute", "program": "?sab(X, 1)"})
        assert len(f["rows"]) == 20000 or f.get("truncated"), f
        await c.ws.close()


def cpu_seconds(pid):
    """The process's user and system CPU time, from /proc (in clock ticks)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def t_busy_poll(binary):
    """http.busy_poll_us: after it writes, the I/O loop polls for that long instead of
    sleeping (docs/server.md, Threads), and the time it spends so is counted; then it
    sleeps again, and an idle server costs no CPU; a client whose requests come further
    apart than the window is not polled for. Off by default."""
    metric = "inputlayer_loop_busy_poll_seconds_total"
    with OwnServer(binary) as srv:
        c = await connect(srv)
        for i in range(3):
            f = await c.call({"type": "execute", "program": "+bp(%d)" % i})
            assert f["type"] == "result" and not f["errors"], f
        assert prometheus(srv)[metric] == 0, prometheus(srv)[metric]
        await c.ws.close()
    window = 0.05
    env = {"INPUTLAYER_HTTP__BUSY_POLL_US": str(int(window * 1e6))}
    with OwnServer(binary, env=env) as srv:
        c = await connect(srv)
        for i in range(3):
            f = await c.call({"type": "execute", "program": "+bp(%d)" % i})
            assert f["type"] == "result" and not f["errors"], f
        await asyncio.sleep(0.3)
        polled = prometheus(srv)[metric]
        # At least the window after the last reply; the requests were answered meanwhile.
        assert polled >= window, polled
        cpu = cpu_seconds(srv.proc.pid)
        await asyncio.sleep(1.0)
        idle_cpu = cpu_seconds(srv.proc.pid) - cpu
        # Idle, it sleeps: the second cost about one window (the read of the metric).
        assert idle_cpu < 0.5, idle_cpu
        later = prometheus(srv)[metric]
        assert later - polled < 0.5, (polled, later)
        f = await c.call({"type": "execute", "program": "?bp(X)"})
        assert sorted(r[0] for r in f["rows"]) == [0, 1, 2], f
        # Requests further apart than the window are not polled for: after three reads in
        # a row that came too late, the loop sleeps. So the 6 below cost at most the window
        # after the metric's read and two more (polling after each would make it 7 windows).
        start = prometheus(srv)[metric]
        for _ in range(6):
            await asyncio.sleep(3 * window)
            f = await c.call({"type": "execute", "program": "?bp(X)"})
            assert f["type"] == "result", f
        spaced = prometheus(srv)[metric] - start
        assert spaced < 4 * window, spaced
        # Back to back again, a request comes within the window: polling resumes.
        for _ in range(5):
            f = await c.call({"type": "execute", "program": "?bp(X)"})
            assert f["type"] == "result", f
        await asyncio.sleep(3 * window)
        resumed = prometheus(srv)[metric] - start - spaced
        assert resumed >= window, (spaced, resumed)
        await c.ws.close()


async def t_busy_poll_during_sync(binary):
    """With http.busy_poll_us, a lone writer's commit is synced by the syncer thread, and
    the I/O loop keeps polling while that sync waits for the disk (srv_pool_activity_now;
    docs/server.md, Busy polling): the polled time covers the window after the write's
    request as well as the one after its reply. Without it, the loop made the sync itself, or slept
    through the syncer's, and only the window after the reply was polled."""
    metric = "inputlayer_loop_busy_poll_seconds_total"
    window = 0.1
    env = {"INPUTLAYER_HTTP__BUSY_POLL_US": str(int(window * 1e6)),
           "INPUTLAYER_TEST_SYNC_DELAY_US": "400000"}
    with OwnServer(binary, env=env) as srv:
        c = await connect(srv)
        await asyncio.sleep(3 * window)
        start = prometheus(srv)
        await asyncio.sleep(3 * window)
        # A query first and the write right after its reply: the write's request comes
        # within the window, so the loop polls for it (two late reads in a row do not stop
        # polling; three would).
        f = await c.call({"type": "execute", "program": "?bp(X)"})
        assert f["type"] == "result", f
        f = await c.call({"type": "execute", "program": "+bp(1)"})
        assert f["type"] == "result" and not f["errors"], f
        await asyncio.sleep(3 * window)
        end = prometheus(srv)
        assert end["inputlayer_log_syncs_io_thread_total"] == 0, end
        assert end["inputlayer_log_syncs_total"] > start["inputlayer_log_syncs_total"], end
        # The window after the metrics' own request, the one during the 400 ms sync and the
        # one after the reply: about 3 windows (2 when the loop sleeps through the sync).
        polled = end[metric] - start[metric]
        assert polled > 2.5 * window, polled
        await c.ws.close()


async def t_busy_poll_gathers_writers(binary):
    """With http.busy_poll_us, the I/O thread gathers the commits of connections that write
    in a closed loop (each write soon after the reply to the one before) and wakes the
    syncer once for them, instead of at the first one (srv_pool_gather_for; docs/server.md,
    Busy polling). A lone writer's commits are not gathered; four writers' are, each write
    still durable before its reply, and all of them are there after a restart. Each sync
    takes 10 ms more (INPUTLAYER_TEST_SYNC_DELAY_US), so that the writers come back within
    a sync's time however slow the build: at 2 ms, a sanitizer build on a loaded machine
    once made 64 syncs for 120 writes."""
    metric = "inputlayer_log_batches_gathered_total"
    data = tempfile.mkdtemp(prefix="il-gathered-")
    env = {"INPUTLAYER_HTTP__BUSY_POLL_US": "2000", "INPUTLAYER_TEST_SYNC_DELAY_US": "10000"}
    writers, per = 4, 30
    with OwnServer(binary, data_dir=data, env=env) as srv:
        conns = [await connect(srv) for _ in range(writers)]
        start = prometheus(srv)
        for i in range(10):
            f = await conns[0].call({"type": "execute", "program": "+gw(9, %d)" % i})
            assert f["type"] == "result" and not f["errors"], f
        alone = prometheus(srv)
        assert alone[metric] == start[metric], (start, alone)

        async def write(w, c):
            for i in range(per):
                f = await c.call({"type": "execute", "program": "+gw(%d, %d)" % (w, i)})
                assert f["type"] == "result" and not f["errors"], f
        await asyncio.gather(*(write(w, c) for w, c in enumerate(conns)))
        end = prometheus(srv)
        records, syncs, gathered = (end[k] - alone[k] for k in (
            "inputlayer_log_records_total", "inputlayer_log_syncs_total", metric))
        assert records == writers * per, (records, syncs, gathered)
        # A client slower than a sync makes the batches alternate one and three (half as
        # many syncs as records); any sharing at all is fewer syncs than records.
        assert gathered >= 1 and 1 <= syncs < records, (records, syncs, gathered)
        for c in conns:
            await c.ws.close()
    with OwnServer(binary, data_dir=data) as srv:
        c = await connect(srv)
        f = await c.call({"type": "execute", "program": "?gw(W, I)"})
        expected = [[9, i] for i in range(10)] + [[w, i] for w in range(writers)
                                                  for i in range(per)]
        assert sorted(f["rows"]) == sorted(expected), f
        await c.ws.close()


# Servers of the tests that read the metrics after every request: no rate limits.
NO_RATES = NO_MESSAGE_RATE + ["--set", "http.rate_limit.per_ip_max_rps=0"]


def read_counts(srv):
    """Where reads ran so far: inputlayer_reads_total by place, and the spills."""
    m = prometheus(srv)
    return {"inline": m['inputlayer_reads_total{ran="inline"}'],
            "pool": m['inputlayer_reads_total{ran="pool"}'],
            "spilled": m["inputlayer_reads_spilled_total"]}


def delta(after, before):
    return {k: after[k] - before[k] for k in after}


async def t_spilled_read_returns_inline(binary):
    """A read begun on the I/O thread whose table has over 10,000 rows goes to the pool (its
    encoding must not hold the thread), and its program goes there directly next time. Once
    a pooled run of that program is cheap (its rows were deleted meanwhile), it runs inline
    again: a spill is not remembered for the rest of the connection's life (docs/server.md,
    Threads)."""
    with OwnServer(binary, NO_RATES) as srv:
        c = await connect(srv)
        n = 12000
        for lo in range(0, n, 3000):
            rows = ", ".join("(%d, %d)" % (i, i + 1) for i in range(lo, lo + 3000))
            f = await c.call({"type": "execute", "program": "+big[%s]" % rows})
            assert f["type"] == "result" and not f["errors"], f
        q = {"type": "execute", "program": "?big(X, Y)"}
        before = read_counts(srv)
        f = await c.call(q)
        assert f["type"] == "result" and f["row_count"] == n, {k: f[k] for k in f if k != "rows"}
        assert delta(read_counts(srv), before) == {"inline": 0, "pool": 1, "spilled": 1}
        before = read_counts(srv)
        f = await c.call(q)
        assert f["type"] == "result" and f["row_count"] == n
        # Remembered: straight to the pool, nothing wasted on the I/O thread.
        assert delta(read_counts(srv), before) == {"inline": 0, "pool": 1, "spilled": 0}
        for lo in range(0, n - 2, 3000):
            rows = ", ".join("(%d, %d)" % (i, i + 1) for i in range(lo, min(lo + 3000, n - 2)))
            f = await c.call({"type": "execute", "program": "-big[%s]" % rows})
            assert f["type"] == "result" and not f["errors"], f
        # Each pooled run that is quick by the clock clears the mark; a preempted one may
        # not, hence a few tries (a liveness bound, not a timing).
        back = None
        for i in range(50):
            before = read_counts(srv)
            f = await c.call(q)
            assert f["type"] == "result" and sorted(f["rows"]) == [[n - 2, n - 1], [n - 1, n]], f
            d = delta(read_counts(srv), before)
            assert d["spilled"] == 0 and d["inline"] + d["pool"] == 1, d
            if d["inline"]:
                back = i
                break
        assert back is not None and back >= 1, back
        await c.ws.close()


async def t_guard_stops_inline_read(binary):
    """The per-query memory limit still stops a read that runs on the I/O thread: the reply
    is resource_exhausted, and the read is counted as run inline, not moved to the pool."""
    env = {"INPUTLAYER_STORAGE__PERFORMANCE__MAX_QUERY_MEMORY_BYTES": str(32 << 10)}
    with OwnServer(binary, NO_RATES, env) as srv:
        c = await connect(srv)
        for rel in "pq":
            rows = ", ".join("(%d)" % i for i in range(60))
            f = await c.call({"type": "execute", "program": "+%s[%s]" % (rel, rows)})
            assert f["type"] == "result" and not f["errors"], f
        # A sanitized build seldom finishes the read within the inline budget: it spills,
        # and the limit stops it on the pool; the answer must be the same either way.
        want_inline = 0 if is_sanitized(binary) else 3
        stopped_inline = 0
        for k in range(20):  # each program new: one that spilled would go to the pool
            before = read_counts(srv)
            f = await c.call({"type": "execute", "program": "?p(X), q(Y), X != %d" % (-1 - k)})
            assert f["type"] == "error" and f["code"] == "resource_exhausted", f
            d = delta(read_counts(srv), before)
            if d == {"inline": 1, "pool": 0, "spilled": 0}:
                stopped_inline += 1
                if stopped_inline == 3:
                    break
        assert stopped_inline >= want_inline, stopped_inline
        await still_answers(c)
        await c.ws.close()


TESTS = [t_rate_limit, t_connection_limits, t_heartbeat_and_lifetime,
         t_idle_timeout_counts_from_the_last_request, t_config_precedence,
         t_identities_persist, t_subscription_limit, t_durability_modes, t_group_commit,
         t_test_reply_delay, t_preempted_inline_write_stays_inline,
         t_slow_inline_write_sends_writes_to_pool,
         t_lone_writer_syncs_on_io_thread, t_busy_poll, t_busy_poll_during_sync,
         t_busy_poll_gathers_writers, t_spilled_read_returns_inline, t_guard_stops_inline_read]

assert json
