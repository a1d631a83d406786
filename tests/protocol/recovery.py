"""Recovery tests at the server level (each on servers of their own, one data directory
restarted): a server with a durable state is stopped, its files are damaged, and the next
server on the directory starts, names the damage in a warning, and answers with what
survives it:

* the log truncated in the middle of its last record: a warning naming the segment and
  the record's offset, every earlier record there;
* a byte flipped in a record in the middle of the log: a warning naming the segment and
  that record's offset (the dropped bytes kept aside), every earlier record there and
  nothing after it;
* the newest checkpoint deleted, after two `.compact`s with writes before, between and
  after them and old log deleted by the second: everything acknowledged is there, from
  the older checkpoint and the log kept since it."""

import os
import shutil
import struct
import tempfile

from common import OwnServer, connect, run

SEGMENT_HEADER = 16
RECORD_HEADER = 16
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


async def t_recover_flipped_byte(binary):
    with DataDir() as data:
        with OwnServer(binary, UNLIMITED, data_dir=data) as srv:
            await write_each(srv, lambda i: "+flip(%d, \"payload %d\")" % (i, i), range(1, 21))
        (seg,) = segments(data)
        path = os.path.join(data, "wal", seg)
        recs = records(path)
        assert len(recs) == 20, recs
        off, length = recs[10]  # the record of flip(11)
        at = off + RECORD_HEADER + length // 2
        with open(path, "r+b") as f:
            f.seek(at)
            byte = f.read(1)
            f.seek(at)
            f.write(bytes([byte[0] ^ 0x40]))
        with OwnServer(binary, UNLIMITED, data_dir=data) as srv:
            out = srv.output()
            want = "%s: checksum mismatch at offset %d" % (seg, off)
            assert want in out and "warning" in out, out[-2000:]
            assert "10 record(s) before it recovered" in out, out[-2000:]
            rows = await answer(srv, "?flip(X, Y)")
            assert rows == [(i, "payload %d" % i) for i in range(1, 11)], rows
            assert os.path.exists("%s.cut-%d" % (path, off)), os.listdir(os.path.dirname(path))


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


TESTS = [t_recover_torn_tail, t_recover_flipped_byte, t_recover_without_newest_checkpoint]
