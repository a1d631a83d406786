"""Recovery tests at the server level (each on servers of their own, one data directory
restarted): a server with a durable state is stopped, its files are damaged, and the next
server on the directory starts, names the damage in a warning, and answers with what
survives it, or, when what was acknowledged cannot be recovered, refuses to start:

* the log truncated in the middle of its last record: a warning naming the segment and
  the record's offset, every earlier record there;
* a byte flipped in record 250 of 500, all synced: the server refuses to start, naming
  the segment, the offset and --recover=salvage, and changes nothing; with
  --recover=salvage it starts with the 249 records before it (the dropped bytes and
  later segments kept aside), and later starts are clean;
* the newest checkpoint deleted, after two `.compact`s with writes before, between and
  after them and old log deleted by the second: everything acknowledged is there, from
  the older checkpoint and the log kept since it;
* both checkpoints damaged, with the log before the older one deleted: refused, naming
  both files; --recover=salvage starts empty, the checkpoints renamed .bad and the log
  .cut."""

import os
import shutil
import struct
import subprocess
import tempfile

from common import OwnServer, clean_env, connect, run

SEGMENT_HEADER = 16
RECORD_HEADER = 24  # length, crc32c, lsn, synced lsn
# each test writes hundreds of statements, one request each
UNLIMITED = ["--set", "http.rate_limit.ws_max_messages_per_sec=0"]


def records(path):
    """The (offset, length) of each record of a log segment, up to the zeros after them."""
    with open(path, "rb") as f:
        data = f.read()
    out, off = [], SEGMENT_HEADER
    while off + RECORD_HEADER <= len(data):
        length, crc, lsn = struct.unpack_from("<IIQ", data, off)
        if length == 0 and crc == 0 and lsn == 0:
            break
        out.append((off, length))
        off += RECORD_HEADER + length
    return out


def segments(data_dir):
    wal = os.path.join(data_dir, "wal")
    return sorted(n for n in os.listdir(wal) if n.startswith("wal-") and n.endswith(".log"))


async def write_each(srv, program_of, numbers):
    """Runs one program per number, each its own statement and so its own log record."""
    c = await connect(srv)
    for i in numbers:
        f = await run(c, program_of(i))
        assert f["type"] == "result" and f["errors"] == [], f
    await c.ws.close()


async def answer(srv, query):
    c = await connect(srv)
    f = await run(c, query)
    await c.ws.close()
    assert f["type"] == "result" and f["errors"] == [], f
    return sorted(tuple(r) for r in f["rows"])


class DataDir:
    """A data directory that outlives the servers started on it."""

    def __enter__(self):
        self.path = os.path.join(tempfile.mkdtemp(prefix="il-recovery-"), "data")
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(os.path.dirname(self.path), ignore_errors=True)
        return False


async def t_recover_torn_tail(binary):
    with DataDir() as data:
        with OwnServer(binary, UNLIMITED, data_dir=data) as srv:
            await write_each(srv, lambda i: "+torn(%d)" % i, range(1, 11))
        (seg,) = segments(data)
        path = os.path.join(data, "wal", seg)
        recs = records(path)
        assert len(recs) == 10, recs
        last, length = recs[-1]
        with open(path, "r+b") as f:
            f.truncate(last + RECORD_HEADER + length // 2)
        with OwnServer(binary, UNLIMITED, data_dir=data) as srv:
            out = srv.output()
            want = "%s: torn record (shorter than its length) at offset %d" % (seg, last)
            assert want in out and "warning" in out, out[-2000:]
            assert await answer(srv, "?torn(X)") == [(i,) for i in range(1, 10)]
            # the log goes on after the cut
            await write_each(srv, lambda i: "+torn(%d)" % i, [10])
        with OwnServer(binary, UNLIMITED, data_dir=data) as srv:
            assert "warning" not in srv.output(), srv.output()[-2000:]
            assert await answer(srv, "?torn(X)") == [(i,) for i in range(1, 11)]


def snapshot(data_dir):
    """Every file of a data directory with its contents, to see that nothing changed."""
    out = {}
    for root, _, files in os.walk(data_dir):
        for n in files:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, data_dir)] = f.read()
    return out


def refused_start(binary, data_dir):
    """Starts a server that must refuse to start; returns what it printed."""
    cwd = tempfile.mkdtemp(prefix="il-recovery-run-")
    try:
        p = subprocess.run([binary, "--port", "0", "--data-dir", data_dir],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
                           env=clean_env(), cwd=cwd)
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
    out = (p.stdout + p.stderr).decode("utf-8", errors="replace")
    assert p.returncode != 0, out[-2000:]
    assert "listening on" not in out, out[-2000:]
    return out


async def t_recover_flipped_byte_refuses_then_salvages(binary):
    with DataDir() as data:
        with OwnServer(binary, UNLIMITED, data_dir=data) as srv:
            await write_each(srv, lambda i: "+flip(%d, \"payload %d\")" % (i, i), range(1, 501))
        (seg,) = segments(data)
        path = os.path.join(data, "wal", seg)
        recs = records(path)
        assert len(recs) >= 500, len(recs)
        # the record of flip(250): the first records may be the server's own setup
        with open(path, "rb") as f:
            raw = f.read()
        off, length = next(r for r in recs
                           if b"payload 250" in raw[r[0]:r[0] + RECORD_HEADER + r[1]])
        lsn = struct.unpack_from("<Q", raw, off + 8)[0]
        at = off + RECORD_HEADER + length // 2
        with open(path, "r+b") as f:
            f.seek(at)
            byte = f.read(1)
            f.seek(at)
            f.write(bytes([byte[0] ^ 0x40]))
        before = snapshot(data)
        out = refused_start(binary, data)
        want = "%s: checksum mismatch at offset %d (lsn %d)" % (seg, off, lsn)
        assert want in out and "--recover=salvage" in out and "Nothing was changed" in out, out
        assert snapshot(data) == before, "the data directory was changed"
        with OwnServer(binary, UNLIMITED + ["--recover=salvage"], data_dir=data) as srv:
            out = srv.output()
            assert "salvaging" in out and want in out, out[-2000:]
            rows = await answer(srv, "?flip(X, Y)")
            assert rows == [(i, "payload %d" % i) for i in range(1, 250)], rows[-3:]
            assert os.path.exists("%s.cut-%d" % (path, off)), os.listdir(os.path.dirname(path))
            await write_each(srv, lambda i: "+flip(%d, \"again\")" % i, [1000])
        with OwnServer(binary, UNLIMITED, data_dir=data) as srv:
            assert "warning" not in srv.output(), srv.output()[-2000:]
            rows = await answer(srv, "?flip(X, Y)")
            assert len(rows) == 250 and rows[-1] == (1000, "again"), rows[-3:]


async def t_recover_without_newest_checkpoint(binary):
    small = UNLIMITED + ["--set", "storage.persist.wal_segment_bytes=4096",
             "--set", "storage.persist.max_wal_size_bytes=0"]
    with DataDir() as data:
        with OwnServer(binary, small, data_dir=data) as srv:
            await write_each(srv, lambda i: "+kept(%d)" % i, range(0, 200))
            c = await connect(srv)
            f = await run(c, ".compact")
            assert f["rows"] == [["Compaction complete."]], f
            await write_each(srv, lambda i: "+kept(%d)" % i, range(200, 400))
            await write_each(srv, lambda i: "-kept(%d)" % i, range(0, 400, 7))
            f = await run(c, ".compact")
            assert f["rows"] == [["Compaction complete."]], f
            await write_each(srv, lambda i: "+kept(%d)" % i, range(400, 450))
            await write_each(srv, lambda i: "-kept(%d)" % i, range(1, 450, 11))
            await c.ws.close()
        ckpts = sorted(n for n in os.listdir(os.path.join(data, "ckpt")) if n.endswith(".ckpt"))
        assert len(ckpts) == 2, ckpts
        # the second checkpoint deleted the log the first one covers: only the log since
        # the first is left to recover from once the second is gone
        first_lsn = int(ckpts[0][5:21], 16)
        assert int(segments(data)[0][4:20], 16) > 1, segments(data)
        assert int(segments(data)[0][4:20], 16) <= first_lsn + 1, (segments(data), ckpts)
        os.unlink(os.path.join(data, "ckpt", ckpts[1]))
        want = [(i,) for i in range(450)
                if not (i < 400 and i % 7 == 0) and not (i % 11 == 1)]
        with OwnServer(binary, small, data_dir=data) as srv:
            assert await answer(srv, "?kept(X)") == want


async def t_recover_both_checkpoints_damaged(binary):
    small = UNLIMITED + ["--set", "storage.persist.wal_segment_bytes=4096",
             "--set", "storage.persist.max_wal_size_bytes=0"]
    with DataDir() as data:
        with OwnServer(binary, small, data_dir=data) as srv:
            c = await connect(srv)
            for lo in (0, 200):
                await write_each(srv, lambda i: "+kept(%d)" % i, range(lo, lo + 200))
                f = await run(c, ".compact")
                assert f["rows"] == [["Compaction complete."]], f
            await write_each(srv, lambda i: "+kept(%d)" % i, range(400, 450))
            await c.ws.close()
        ckdir = os.path.join(data, "ckpt")
        ckpts = sorted(n for n in os.listdir(ckdir) if n.endswith(".ckpt"))
        assert len(ckpts) == 2, ckpts
        assert int(segments(data)[0][4:20], 16) > 1, segments(data)
        for n in ckpts:
            p = os.path.join(ckdir, n)
            size = os.path.getsize(p)
            with open(p, "r+b") as f:
                f.seek(size - 3)
                byte = f.read(1)
                f.seek(size - 3)
                f.write(bytes([byte[0] ^ 0x10]))
        before = snapshot(data)
        out = refused_start(binary, data)
        for n in ckpts:
            assert "%s is damaged (checksum mismatch)" % n in out, out
        assert "--recover=salvage" in out and "records in between are missing" in out, out
        assert snapshot(data) == before, "the data directory was changed"
        with OwnServer(binary, small + ["--recover=salvage"], data_dir=data) as srv:
            assert await answer(srv, "?kept(X)") == []
        names = os.listdir(ckdir)
        assert sorted(n for n in names if n.endswith(".bad")) == [n + ".bad" for n in ckpts], names
        assert any(n.endswith(".cut") for n in os.listdir(os.path.join(data, "wal")))


TESTS = [t_recover_torn_tail, t_recover_flipped_byte_refuses_then_salvages,
         t_recover_without_newest_checkpoint, t_recover_both_checkpoints_damaged]
