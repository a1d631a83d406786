"""Storage tests at the server level (servers of their own): revisions across restarts,
and writes when the log cannot be written or synced.

* Revisions are durable: after a restart every graph's revision is at least any revision
  issued before it, writes move it past all of them, and a program expecting a revision
  of an earlier run that is no longer current fails (precondition_failed), also with
  expect_relations."""

import os
import shutil
import tempfile

from common import NO_MESSAGE_RATE, OwnServer, connect, run


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


TESTS = [t_revisions_survive_restart]
