"""Storage tests at the server level (servers of their own): revisions across restarts,
and writes when the log cannot be written or synced.

* Revisions are durable: after a restart every graph's revision is at least any revision
  issued before it, writes move it past all of them, and a program expecting a revision
  of an earlier run that is no longer current fails (precondition_failed), also with
  expect_relations.
* A write of the log that fails (INPUTLAYER_TEST_LOG_FAULT_FILE says "write": half the
  record is written, then ENOSPC) is rolled back: the writer gets `storage_full`, no
  reader or subscriber ever sees the row, not after a restart either; reads go on, /health says
  `degraded` with the reason (still 200, and /ready too), the server's log says what
  happened; once the log can be written again the next write goes on in a new segment.
* A sync that fails ("sync": EIO) fails the writes it covered and is never tried again on
  the same pages: the next write first rewrites the state in memory into a checkpoint
  (set apart from the old segment), after which writes go on and /health is healthy."""

import json
import os
import shutil
import tempfile

from common import NO_MESSAGE_RATE, OwnServer, connect, http, run
from subs import next_push


class DataDir:
    """A data directory that outlives the servers started on it."""

    def __enter__(self):
        self.path = os.path.join(tempfile.mkdtemp(prefix="il-storage-"), "data")
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(os.path.dirname(self.path), ignore_errors=True)
        return False


async def read_revision(c, query):
    f = await c.call({"type": "read", "queries": [{"name": "q", "query": query}]})
    assert f["type"] == "snapshot", f
    return f["revision"], f["results"][0]["rows"]


async def t_revisions_survive_restart(binary):
    with DataDir() as data:
        seen = []
        with OwnServer(binary, NO_MESSAGE_RATE, data_dir=data) as srv:
            c = await connect(srv)
            for i in range(3):
                f = await run(c, "+acct(%d, 100)" % i)
                assert f["type"] == "result" and f["errors"] == [], f
                seen.append(f["revision"])
            stale, rows = await read_revision(c, "?acct(X, Y)")
            assert stale == seen[-1] and len(rows) == 3, (stale, rows)
            f = await run(c, "+other(1)")
            seen.append(f["revision"])
            await c.ws.close()
        with OwnServer(binary, NO_MESSAGE_RATE, data_dir=data) as srv:
            c = await connect(srv)
            now, rows = await read_revision(c, "?acct(X, Y)")
            assert now >= max(seen) and len(rows) == 3, (now, seen)
            # Another client rewrites acct as often as the first run did.
            for i in range(3):
                f = await run(c, "-acct(%d, 100)" % i)
                assert f["type"] == "result" and f["revision"] > max(seen), (f, seen)
            f = await run(c, "+acct(9, 0)")
            assert f["revision"] > now, (f, now)
            # A client that read acct at a revision of the first run cannot commit on it.
            for extra in ({}, {"expect_relations": ["acct"]}):
                req = {"type": "execute", "program": "+acct(1, 50)", "expect_revision": stale}
                req.update(extra)
                f = await c.call(req)
                assert f["type"] == "error" and f["code"] == "precondition_failed", (extra, f)
            _, rows = await read_revision(c, "?acct(X, Y)")
            assert rows == [[9, 0]], rows
            # A revision read now is current, and a program expecting it commits.
            now, _ = await read_revision(c, "?acct(X, Y)")
            f = await c.call({"type": "execute", "program": "+acct(2, 7)",
                              "expect_revision": now, "expect_relations": ["acct"]})
            assert f["type"] == "result" and f["revision"] == now + 1, f
            await c.ws.close()
        with OwnServer(binary, NO_MESSAGE_RATE, data_dir=data) as srv:
            # Nothing written since the last start's writes: the relation scope of a
            # revision before them fails too (its changes are not forgotten by a restart).
            c = await connect(srv)
            f = await c.call({"type": "execute", "program": "+acct(3, 1)",
                              "expect_revision": now, "expect_relations": ["acct"]})
            assert f["type"] == "error" and f["code"] == "precondition_failed", f
            await c.ws.close()


def health(srv):
    status, body = http(srv, "/health")
    assert status == 200, (status, body)
    return json.loads(body)["data"]


def wal_segments(data):
    wal = os.path.join(data, "wal")
    return sorted(n for n in os.listdir(wal) if n.startswith("wal-") and n.endswith(".log"))


def set_fault(path, word):
    with open(path, "w") as f:
        f.write(word)


async def rows(c, query):
    f = await run(c, query)
    assert f["type"] == "result" and f["errors"] == [], f
    return sorted(f["rows"])


async def t_log_write_fails(binary):
    with DataDir() as data:
        fault = os.path.join(os.path.dirname(data), "fault")
        set_fault(fault, "")
        env = {"INPUTLAYER_TEST_LOG_FAULT_FILE": fault}
        with OwnServer(binary, NO_MESSAGE_RATE, env=env, data_dir=data) as srv:
            w, r = await connect(srv), await connect(srv)
            f = await run(w, "+acct(1)")
            assert f["type"] == "result" and f["errors"] == [], f
            assert health(srv)["status"] == "healthy"
            watcher = await connect(srv)
            f = await run(watcher, ".subscribe watch ?acct(X)")
            assert f["type"] == "result" and f["rows"] == [[1]], f
            before = wal_segments(data)
            set_fault(fault, "write")
            f = await run(w, "+acct(2)")
            assert f["type"] == "error" and f["code"] == "storage_full", f
            assert "Storage full" in f["message"] and "nothing of it was applied" in f["message"]
            # A program of several writes: none of it.
            f = await run(w, "+acct(3)\n+other(3)\n?acct(X)")
            assert f["errors"] and f["errors"][0]["code"] == "storage_full", f
            assert "rolled back" in f["errors"][0]["message"], f
            # Nobody sees the failed writes; reads go on.
            assert await rows(r, "?acct(X)") == [[1]]
            assert await rows(w, "?acct(X)") == [[1]]
            assert await rows(r, "?other(X)") == []
            f = await r.call({"type": "read", "queries": [{"name": "a", "query": "?acct(X)"}]})
            assert f["type"] == "snapshot" and f["results"][0]["rows"] == [[1]], f
            h = health(srv)
            assert h["status"] == "degraded" and "disk is full" in h["reason"], h
            assert http(srv, "/ready")[0] == 200
            # Still full: still refused, still rolled back.
            f = await run(w, "-acct(1)")
            assert f["type"] == "error" and f["code"] == "storage_full", f
            assert await rows(r, "?acct(X)") == [[1]]
            # Space again: the next write goes on, in a new segment.
            set_fault(fault, "")
            f = await run(w, "+acct(4)")
            assert f["type"] == "result" and f["errors"] == [], f
            assert health(srv)["status"] == "healthy"
            assert len(wal_segments(data)) == len(before) + 1, (before, wal_segments(data))
            assert await rows(r, "?acct(X)") == [[1], [4]]
            # The subscriber's first delta is the write that went through.
            d = await next_push(watcher, 10)
            assert d["type"] == "subscription_delta" and d["seq"] == 1, d
            assert d["inserted"] == [[4]] and d["retracted"] == [], d
            await watcher.ws.close()
            out = srv.output()
            assert "write to the log" in out and "rolled back" in out, out[-2000:]
            assert "written again" in out, out[-2000:]
            await w.ws.close()
            await r.ws.close()
        with OwnServer(binary, NO_MESSAGE_RATE, data_dir=data) as srv:
            assert "warning" not in srv.output(), srv.output()[-2000:]
            c = await connect(srv)
            assert await rows(c, "?acct(X)") == [[1], [4]]
            assert await rows(c, "?other(X)") == []
            f = await run(c, "+acct(5)")
            assert f["type"] == "result" and f["errors"] == [], f
            await c.ws.close()
        with OwnServer(binary, NO_MESSAGE_RATE, data_dir=data) as srv:
            c = await connect(srv)
            assert await rows(c, "?acct(X)") == [[1], [4], [5]]
            await c.ws.close()


async def t_log_sync_fails(binary):
    with DataDir() as data:
        fault = os.path.join(os.path.dirname(data), "fault")
        set_fault(fault, "")
        env = {"INPUTLAYER_TEST_LOG_FAULT_FILE": fault}
        ckpt = os.path.join(data, "ckpt")
        with OwnServer(binary, NO_MESSAGE_RATE, env=env, data_dir=data) as srv:
            c = await connect(srv)
            f = await run(c, "+s(1)")
            assert f["type"] == "result" and f["errors"] == [], f
            set_fault(fault, "sync")
            f = await run(c, "+s(2)")
            assert f["type"] == "error" and "syncing the write-ahead log failed" in f["message"], f
            h = health(srv)
            assert h["status"] == "degraded" and "sync" in h["reason"], h
            assert http(srv, "/ready")[0] == 200
            assert await rows(c, "?s(X)") in ([[1]], [[1], [2]])
            # The disk is fine again, but the failed pages are never synced again: the next
            # write first rewrites the state into a checkpoint.
            set_fault(fault, "")
            assert not [n for n in os.listdir(ckpt) if n.endswith(".ckpt")]
            f = await run(c, "+s(3)")
            assert f["type"] == "result" and f["errors"] == [], f
            assert [n for n in os.listdir(ckpt) if n.endswith(".ckpt")], os.listdir(ckpt)
            assert health(srv)["status"] == "healthy"
            f = await run(c, "+s(4)")
            assert f["type"] == "result" and f["errors"] == [], f
            have = await rows(c, "?s(X)")
            assert "rewritten into a checkpoint" in srv.output(), srv.output()[-2000:]
            await c.ws.close()
        with OwnServer(binary, NO_MESSAGE_RATE, data_dir=data) as srv:
            c = await connect(srv)
            assert await rows(c, "?s(X)") == have, have
            await c.ws.close()


TESTS = [t_revisions_survive_restart, t_log_write_fails, t_log_sync_fails]
