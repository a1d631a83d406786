"""Notification tests (on a server of their own): persistent_update, rule_change,
kg_change and schema_change frames with seq, who receives them (the writer after its
reply, other sessions of the graph, admins for other graphs' kg_change, nobody for
no-op writes), and replay on reconnect with last_seq + epoch, including each replay_gap
reason and a malformed last_seq."""

import asyncio
import json
import urllib.error
import urllib.request

import websockets

from common import KEY, NO_MESSAGE_RATE, OwnServer, connect, is_tsan, prometheus
from pinned import LONG_WRITE, two_with_edges

NOTES = ("persistent_update", "rule_change", "kg_change", "schema_change")


async def frame(c, timeout=10):
    return json.loads(await asyncio.wait_for(c.ws.recv(), timeout))


async def silent(c, wait=0.3):
    try:
        f = json.loads(await asyncio.wait_for(c.ws.recv(), wait))
        raise AssertionError("unexpected frame %r" % f)
    except asyncio.TimeoutError:
        pass


async def execute(c, program):
    await c.send({"type": "execute", "program": program})
    f = await frame(c)
    assert f["type"] == "result", f
    return f


async def t_notifications(binary):
    with OwnServer(binary) as srv:
        a, b = await connect(srv), await connect(srv)
        # A write: the writer gets its reply, then the notification; others get it too.
        await execute(a, "+n[(1), (2)]")
        fa = await frame(a)
        assert fa["type"] == "persistent_update" and fa["relation"] == "n", fa
        assert fa["operation"] == "insert" and fa["count"] == 2, fa
        assert fa["knowledge_graph"] == "default" and "id" not in fa, fa
        first = fa["seq"]
        assert first >= 1
        fb = await frame(b)
        assert fb == fa, (fa, fb)
        # No-op writes notify nobody.
        await execute(a, "+n(1)")
        await execute(a, "-n(9)")
        await silent(a)
        await silent(b)
        # A delete, a rule, a schema: consecutive seqs.
        await execute(a, "-n(1)")
        f = await frame(a)
        assert f["operation"] == "delete" and f["count"] == 1 and f["seq"] == first + 1, f
        await execute(a, "+m(X) <- n(X)")
        f = await frame(a)
        assert f["type"] == "rule_change" and f["operation"] == "registered", f
        assert f["seq"] == first + 2, f
        for expected in ("delete", "rule_change"):
            f = await frame(b)
            assert expected in (f["type"], f.get("operation")), f
        # Another graph: its writes reach its own sessions only; its creation reaches
        # admins elsewhere as kg_change.
        await execute(a, ".kg create other")
        f = await frame(a)
        assert f["type"] == "kg_change" and f["operation"] == "created", f
        assert f["knowledge_graph"] == "other", f
        f = await frame(b)
        assert f["type"] == "kg_change", f
        await execute(a, "+o(1)")
        f = await frame(a)
        assert f["type"] == "persistent_update" and f["knowledge_graph"] == "other", f
        await silent(b)
        last = f["seq"]
        epoch = None
        c = await connect(srv)
        # Session facts notify nothing.
        await execute(c, "s(1)")
        await silent(c)
        for x in (a, b, c):
            await x.ws.close()

        # Replay: the frames after last_seq that the connection may see.
        ws = await websockets.connect(srv.ws, max_size=None)
        await ws.send(json.dumps({"type": "authenticate", "api_key": KEY}))
        auth = json.loads(await ws.recv())
        epoch = auth["stream_epoch"]
        await ws.close()
        url = "%s?last_seq=%d&epoch=%s" % (srv.ws, first, epoch)
        got = await replay(url)
        assert [f["seq"] for f in got] == [first + 1, first + 2, first + 3], got
        assert all(f["knowledge_graph"] == "default" or f["type"] == "kg_change" for f in got)
        url = "%s?kg=other&last_seq=%d&epoch=%s" % (srv.ws, last - 1, epoch)
        got = await replay(url)
        assert [f["seq"] for f in got] == [last], got
        # Nothing after the newest: no frames.
        assert await replay("%s?last_seq=%d&epoch=%s" % (srv.ws, last, epoch)) == []
        # The three gaps.
        for cursor, reason in [("last_seq=1&epoch=0123456789abcdef", "another engine run"),
                               ("last_seq=1", "another engine run"),
                               ("last_seq=%d&epoch=%s" % (last + 5, epoch), "past the last")]:
            got = await replay("%s?%s" % (srv.ws, cursor))
            assert len(got) == 1 and got[0]["type"] == "notice", got
            assert got[0]["code"] == "replay_gap" and reason in got[0]["message"], got
        try:
            urllib.request.urlopen(srv.base + "/ws?last_seq=x", timeout=5)
            raise AssertionError("a bad last_seq was accepted")
        except urllib.error.HTTPError as e:
            assert e.code == 400, e.code


async def replay(url):
    """Frames received after authentication, until the connection is quiet."""
    ws = await websockets.connect(url, max_size=None)
    await ws.send(json.dumps({"type": "authenticate", "api_key": KEY}))
    assert json.loads(await ws.recv())["type"] == "authenticated"
    got = []
    try:
        while True:
            got.append(json.loads(await asyncio.wait_for(ws.recv(), 0.5)))
    except asyncio.TimeoutError:
        pass
    await ws.close()
    return got


async def t_notification_evicted(binary):
    env = {"INPUTLAYER_HTTP__RATE_LIMIT__NOTIFICATION_BUFFER_SIZE": "3",
           "INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_MESSAGES_PER_SEC": "0"}
    with OwnServer(binary, env=env) as srv:
        a = await connect(srv)
        for i in range(6):
            await execute(a, "+e(%d)" % i)
            f = await frame(a)
        epoch = await epoch_of(srv)
        got = await replay("%s?last_seq=1&epoch=%s" % (srv.ws, epoch))
        assert len(got) == 1 and got[0]["code"] == "replay_gap", got
        assert "oldest retained seq is 4" in got[0]["message"], got
        got = await replay("%s?last_seq=3&epoch=%s" % (srv.ws, epoch))
        assert [g["seq"] for g in got] == [4, 5, 6], got
        await a.ws.close()


async def epoch_of(srv):
    ws = await websockets.connect(srv.ws)
    await ws.send(json.dumps({"type": "authenticate", "api_key": KEY}))
    e = json.loads(await ws.recv())["stream_epoch"]
    await ws.close()
    return e


async def backpressured(srv, timeout=60):
    """Waits until the server holds a connection back (more than 8 MiB unwritten) and
    has stopped making progress on it: the outbound bytes unchanged over half a second.
    Until then the kernel may still take some, the hold lifts, and the server sends the
    next reply (slow builds may take seconds to get there)."""
    last, same = None, 0
    for _ in range(int(timeout / 0.1)):
        m = prometheus(srv)
        out = m.get("inputlayer_ws_outbound_bytes", 0)
        if m.get("inputlayer_ws_connections_backpressured", 0) >= 1 and out == last:
            same += 1
            if same == 5:
                return
        else:
            same = 0
        last = out
        await asyncio.sleep(0.1)
    raise AssertionError("no connection was held back: %r" % {
        k: v for k, v in prometheus(srv).items() if "outbound" in k or "backpressured" in k})


async def write(c, program):
    """A write that changes something: its reply, then its own notification."""
    await execute(c, program)
    assert (await frame(c))["type"] == "persistent_update"


async def load_big(w, per_write, pad_len):
    """Four writes of per_write rows big(N, "zz..."): results big enough to hold a reader
    that does not read back."""
    pad = "z" * pad_len
    for k in range(4):
        rows = ", ".join('(%d, "%s")' % (k * per_write + i, pad) for i in range(per_write))
        await write(w, "+big[%s]" % rows)


async def t_slow_consumer(binary):
    """A connection that stops reading misses notifications instead of growing the
    server's memory: it is told how many when it reads again, and closed once it missed
    more than notification_buffer_size in all."""
    if is_tsan(binary):
        return  # timing-bound: run by the normal and ASan builds, not under ThreadSanitizer
    env = {"INPUTLAYER_HTTP__RATE_LIMIT__NOTIFICATION_BUFFER_SIZE": "5",
           "INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_MESSAGES_PER_SEC": "0"}
    with OwnServer(binary, env=env) as srv:
        w, s = await connect(srv), await connect(srv, holds_little=True)
        await load_big(w, 5000, 100)
        for _ in range(4):
            assert (await frame(s))["type"] == "persistent_update"
        # s asks for 35 MB of results and reads nothing; its socket buffers take a little,
        # the server stops at 8 MiB queued.
        for i in range(14):
            await s.send({"type": "execute", "id": "b%d" % i, "program": "?big(X, Y)"})
        await backpressured(srv)
        for i in range(3):
            await execute(w, "+t(%d)" % i)
            await frame(w)
        # s reads again: its replies, then the count of what it missed, then live ones. (A
        # round that ran while the kernel took some of its bytes may have sent some.)
        seen = []
        for i in range(14):
            f = await frame(s, 30)
            while f.get("id") != "b%d" % i:
                seen.append(f)
                f = await frame(s, 30)
            assert f["type"] == "result_start", f
            while f["type"] != "result_end":
                f = await frame(s, 30)
        await execute(w, "+t(3)")
        await frame(w)
        # One notice with the count of the missed (before the first notification delivered
        # after them); with the delivered ones, the four writes are all there.
        while not [x for x in seen if x["type"] == "notice"]:
            seen.append(await frame(s))
        notices = [x for x in seen if x["type"] == "notice"]
        assert len(notices) == 1 and notices[0]["code"] == "notifications_missed", seen
        missed = int(notices[0]["message"].split()[1])
        assert notices[0]["message"] == \
            "Missed %d notification(s) due to backpressure" % missed, notices
        assert 1 <= missed <= 3, missed
        sent = [x for x in seen if x["type"] != "notice"]
        while len(sent) < 4 - missed:
            sent.append(await frame(s))
        assert all(x["type"] == "persistent_update" and x["relation"] == "t" for x in sent), sent
        # Missing more than 5 in all closes the connection (at the sixth).
        for i in range(14):
            await s.send({"type": "execute", "id": "c%d" % i, "program": "?big(X, Y)"})
        await backpressured(srv)
        for i in range(12):
            await execute(w, "+u(%d)" % i)
            await frame(w)
        notices = []
        try:
            while True:
                f = await frame(s, 30)
                if f["type"] == "notice":
                    notices.append(f)
        except websockets.ConnectionClosed:
            pass
        assert [n["code"] for n in notices] == ["slow_consumer"], notices
        assert notices[0]["message"] == "Disconnected: missed 6 total notification(s)", notices
        f = await w.call({"type": "ping", "id": "alive"})
        assert f == {"type": "pong", "id": "alive"}, f
        await w.ws.close()


async def t_transaction_past_the_ring(binary):
    """One program whose notifications outnumber the ring (12 rules, a ring of 5): the
    connections that read are told how many they missed and keep the rest, and stay open;
    the writer gets its reply (slow_consumer is for connections that do not read)."""
    env = {"INPUTLAYER_HTTP__RATE_LIMIT__NOTIFICATION_BUFFER_SIZE": "5",
           "INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_MESSAGES_PER_SEC": "0"}
    with OwnServer(binary, env=env) as srv:
        w, s = await connect(srv), await connect(srv)
        await execute(w, "+e(1, 2)")
        for c in (w, s):
            assert (await frame(c))["type"] == "persistent_update"
        program = "\n".join("+r%d(X, Y) <- e(X, Y)" % i for i in range(12))
        await w.send({"type": "execute", "id": "big", "program": program})
        for c in (w, s):
            got, reply = [], None
            while len([g for g in got if g["type"] == "rule_change"]) < 5 or (
                    c is w and reply is None):
                f = await frame(c)
                if f.get("id") == "big":
                    reply = f
                else:
                    got.append(f)
            if c is w:
                assert reply["type"] == "result" and len(reply["rows"]) == 12, reply
            notices = [g for g in got if g["type"] == "notice"]
            assert [n["message"] for n in notices] == [
                "Missed 7 notification(s) due to backpressure"], got
            names = [g["rule_name"] for g in got if g["type"] == "rule_change"]
            assert names == ["r%d" % i for i in range(7, 12)], got
            assert (await c.call({"type": "ping", "id": "alive"}))["type"] == "pong"
        await w.ws.close()
        await s.ws.close()


async def t_commit_between_authenticated_and_the_session(binary):
    """`authenticated` goes out at once and the session opens in a job, which waits for
    the engine: a commit between the two is the new connection's to see, as any after it.
    Here a long write holds the engine while the connection authenticates, and commits
    before its session opens. The session's start was once where the log stood when the
    job ran: the commit was missed, and so was, now and then, a notification of the
    plainer case (a connection authenticated, then another's write committing before its
    session's job ran on a loaded machine; t_transaction_past_the_ring failed so)."""
    with OwnServer(binary, args=NO_MESSAGE_RATE) as srv:
        a, b = await two_with_edges(srv)
        await a.send({"type": "execute", "id": "write", "program": LONG_WRITE + "\n+mark(1)"})
        await asyncio.sleep(0.2)  # the write holds the engine
        late = await connect(srv)
        reply = await a.recv(timeout=600)
        assert reply["type"] == "result" and reply["id"] == "write", reply
        f = await frame(late)
        assert f["type"] == "persistent_update" and f["relation"] == "mark", f
        assert (f["operation"], f["count"]) == ("insert", 1), f
        # not had twice: the next one is the next write's
        first = f["seq"]
        await a.call({"type": "execute", "program": "+mark(2)"})
        f = await frame(late)
        assert f["type"] == "persistent_update" and f["seq"] == first + 1, (first, f)
        await silent(late)
        for c in (a, b, late):
            await c.ws.close()


async def paced_writes(binary, env, sessions, writes):
    """A writer and sessions - 1 others; the writer makes `writes` single-fact writes, each
    followed by its own notification. Returns the seqs every other connection got, in
    order, and the rounds and notifications the server counted meanwhile."""
    with OwnServer(binary, env=env) as srv:
        conns = [await connect(srv) for _ in range(sessions)]
        w = conns[0]
        before = prometheus(srv)
        for i in range(writes):
            await execute(w, "+p(%d)" % i)
            f = await frame(w)
            assert f["type"] == "persistent_update" and f["relation"] == "p", f
        got = []
        for c in conns[1:]:
            seqs = []
            while len(seqs) < writes:
                f = await frame(c)
                assert f["type"] == "persistent_update" and f["relation"] == "p", f
                seqs.append(f["seq"])
            got.append(seqs)
        after = prometheus(srv)
        for c in conns:
            await c.ws.close()
    def moved(name):
        return after[name] - before[name]
    return (got, moved("inputlayer_notification_rounds_total"),
            moved("inputlayer_notifications_delivered_total"))


async def t_notifications_paced(binary):
    """Under a stream of writes, notifications reach the other connections in paced
    rounds (one write per connection per round), every one of them, in seq order; the
    writer still gets each right after its reply. With no share of the window per session
    (notification_ms_per_session 0) a round follows each write."""
    env = {"INPUTLAYER_HTTP__RATE_LIMIT__NOTIFICATION_COALESCE_MS": "1000",
           "INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_MESSAGES_PER_SEC": "0"}
    # 40 sessions: a pacing window of 40 x 3 ms.
    sessions, writes = 40, 60
    got, rounds, delivered = await paced_writes(binary, env, sessions, writes)
    first = got[0]
    assert first == list(range(first[0], first[0] + writes)), first
    for seqs in got[1:]:
        assert seqs == first, seqs
    # Without pacing there would be a round per write (the writer's own come with its
    # replies, counted among the delivered).
    assert 1 <= rounds <= writes / 3, rounds
    assert delivered == writes * sessions, delivered
    env["INPUTLAYER_HTTP__RATE_LIMIT__NOTIFICATION_MS_PER_SESSION"] = "0"
    got, rounds, delivered = await paced_writes(binary, env, sessions, writes)
    for seqs in got:
        assert seqs == list(range(seqs[0], seqs[0] + writes)), seqs
    assert rounds > writes / 3, rounds
    assert delivered == writes * sessions, delivered


async def read_replies(c, prefix, n):
    """Reads c's n streamed replies to ?big(X, Y); returns the other frames seen."""
    others = []
    for i in range(n):
        f = await frame(c, 30)
        while f.get("id") != "%s%d" % (prefix, i):
            others.append(f)
            f = await frame(c, 30)
        assert f["type"] == "result_start", f
        while f["type"] != "result_end":
            f = await frame(c, 30)
    return others


async def t_slow_subscriber(binary):
    """A subscriber that stops reading does not grow the server's memory and loses
    nothing: its subscriptions hold their changes, netted, and send them as one delta
    when it reads again; one that falls more than max_result_rows changed rows behind is
    ended with subscription_reset, and its name is free again."""
    if is_tsan(binary):
        return  # timing-bound: run by the normal and ASan builds, not under ThreadSanitizer
    env = {"INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_MESSAGES_PER_SEC": "0",
           "INPUTLAYER_STORAGE__PERFORMANCE__MAX_RESULT_ROWS": "50"}
    with OwnServer(binary, env=env) as srv:
        w, s = await connect(srv), await connect(srv, holds_little=True)
        await load_big(w, 12, 50000)
        await write(w, "+t(0)")
        for name, q in (("t1", "?t(X)"), ("t2", "?u(X)")):
            await s.send({"type": "execute", "id": name, "program": ".subscribe %s %s" % (name, q)})
            f = await frame(s)
            while f.get("id") != name:
                f = await frame(s)
            assert f["type"] == "result" and "subscribed" in f, f
        # 2.4 MB per reply: the server holds s back after a few.
        for i in range(40):
            await s.send({"type": "execute", "id": "b%d" % i, "program": "?big(X, Y)"})
        await backpressured(srv)
        for prog in ("+t(1)", "+t(2)", "-t(1)", "+t(3)", "-t(0)"):
            await write(w, prog)
        others = await read_replies(s, "b", 40)
        deltas = [o for o in others if o["type"] == "subscription_delta"]
        state, seq = {0}, 0
        while state != {2, 3}:
            if not deltas:
                deltas.append(await frame(s, 30))
            d = deltas.pop(0)
            assert d["type"] == "subscription_delta" and d["subscription"] == "t1", d
            assert d["seq"] == seq + 1, d
            seq = d["seq"]
            for r in d["retracted"]:
                state.remove(r[0])
            for r in d["inserted"]:
                state.add(r[0])
        # Fewer deltas than writes: what it did not read was held and netted.
        assert not deltas and seq < 5, (seq, deltas)
        # Past max_result_rows held rows: reset, and the name is free.
        for i in range(40):
            await s.send({"type": "execute", "id": "c%d" % i, "program": "?big(X, Y)"})
        await backpressured(srv)
        for k in range(3):
            await write(w, "+u[%s]" % ", ".join("(%d)" % (k * 30 + i) for i in range(30)))
        others = await read_replies(s, "c", 40)
        pushes = [o for o in others if o["type"].startswith("subscription")]
        while not pushes or pushes[-1]["type"] != "subscription_reset":
            pushes.append(await frame(s, 30))
        # Whatever was sent before it fell too far behind, then the reset.
        f = pushes.pop()
        assert f["subscription"] == "t2" and "fell more than 50 changed rows behind" in \
            f["message"] and "subscribe again" in f["message"], f
        assert all(p["type"] == "subscription_delta" and p["subscription"] == "t2"
                   for p in pushes), pushes
        await s.send({"type": "execute", "id": "again", "program": ".subscribe t2 ?t(X)"})
        f = await frame(s)
        while f.get("id") != "again":
            f = await frame(s)
        assert f["type"] == "result" and sorted(f["rows"]) == [[2], [3]], f
        await write(w, "+t(4)")
        f = await frame(s)
        while f["type"] != "subscription_delta" or f["subscription"] != "t1":
            f = await frame(s)
        assert f["inserted"] == [[4]] and f["seq"] == seq + 1, f
        for c in (w, s):
            await c.ws.close()


async def t_notifications_ride_with_deltas(binary):
    """A connection that a write pushes a subscription delta to gets that write's
    notification in the same delivery, right after the delta, instead of in a paced
    round of its own: a watcher written to every few milliseconds costs one write and
    no extra wake-up of the server per write. Nothing is lost or reordered."""
    env = {"INPUTLAYER_HTTP__RATE_LIMIT__WS_MAX_MESSAGES_PER_SEC": "0"}
    with OwnServer(binary, env=env) as srv:
        w, agent = await connect(srv), await connect(srv)
        await agent.send({"type": "execute", "id": "sub", "program": ".subscribe k ?p(X)"})
        f = await frame(agent)
        assert f.get("id") == "sub" and f["type"] == "result", f
        before = prometheus(srv)
        writes = 30
        for i in range(writes):
            await execute(w, "+p(%d)" % i)
            f = await frame(w)
            assert f["type"] == "persistent_update" and f["relation"] == "p", f
            # Apart by more than the pacing window (3 ms per session), so that without
            # this each write would start a round of its own.
            await asyncio.sleep(0.01)
        got = [await frame(agent) for _ in range(2 * writes)]
        for i in range(writes):
            delta, note = got[2 * i], got[2 * i + 1]
            assert delta["type"] == "subscription_delta", got
            assert delta["inserted"] == [[i]] and delta["retracted"] == [], delta
            assert note["type"] == "persistent_update" and note["count"] == 1, got
            assert note["seq"] == got[1]["seq"] + i, got
        await silent(agent)
        after = prometheus(srv)
        rounds = after["inputlayer_notification_rounds_total"] - \
            before["inputlayer_notification_rounds_total"]
        # A round still runs when a job held the engine at the moment of the check.
        assert rounds <= writes / 6, rounds
        await w.ws.close()
        await agent.ws.close()


TESTS = [t_notifications, t_notification_evicted, t_slow_consumer, t_transaction_past_the_ring,
         t_commit_between_authenticated_and_the_session,
         t_notifications_paced, t_notifications_ride_with_deltas,
         t_slow_subscriber]
