"""Protocol tests of online backup (`.backup`, `.backup status`, storage.backup_dir) and
of `inputlayer-server --restore`, each on servers of their own: an export taken while a
writer keeps inserting numbered facts restores to exactly the numbers 1..k for one k (a
consistent cut), with the rules, users, API keys and ACLs; the refusals (no backup_dir,
a backup_dir inside the data directory, bad and taken names, a second export while one
runs, non-admins); shutdown during an export leaves it whole or gone; restore refuses
an export without a manifest, one with a damaged or truncated file, and a data
directory that already holds data, leaving the data directory as it was."""

import asyncio
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

from common import KEY, OwnServer, clean_env, connect, login, run, still_answers

MANIFEST = "inputlayer-backup.json"
STARTED = re.compile(r"Exporting the checkpoint at revision (\d+) to (.+)\.$")
HELD = re.compile(r"Commits were held for \d+ us; check progress with \.backup status\.$")
COMPLETE = re.compile(r"Last export complete: revision (\d+) in (.+)\.$")
COUNTS = re.compile(r"(\d+) files, (\d+) bytes; commits held \d+ us, written in \d+ ms\.$")


def lines(f):
    assert f["type"] == "result" and f["columns"] == ["message"], f
    return [r[0] for r in f["rows"]]


def backup_args(bdir):
    # the writer of the consistency test sends more than the default 100 messages a second
    return ["--set", "storage.backup_dir=" + bdir,
            "--set", "http.rate_limit.ws_max_messages_per_sec=100000"]


async def wait_complete(c, timeout=120):
    """Polls `.backup status` until the last export is complete; returns its lines."""
    deadline = time.monotonic() + timeout
    while True:
        rows = lines(await run(c, ".backup status"))
        if rows[0].startswith("Last export complete"):
            return rows
        assert rows[0].startswith("Export running"), rows
        assert time.monotonic() < deadline, rows
        await asyncio.sleep(0.05)


async def fill(c, rel, n, batch=10000):
    """Inserts rel(1..n) in batches."""
    for lo in range(1, n + 1, batch):
        hi = min(lo + batch, n + 1)
        f = await run(c, "+%s[%s]" % (rel, ", ".join("(%d)" % i for i in range(lo, hi))))
        assert f["type"] == "result", f


def start_restore(binary, src, data):
    """Runs the server with --restore where it must refuse; returns (status, output)."""
    d = tempfile.mkdtemp(prefix="il-restore-")
    try:
        p = subprocess.run([binary, "--port", "0", "--data-dir", data, "--restore", src],
                           capture_output=True, text=True, env=clean_env(), cwd=d, timeout=60)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return p.returncode, p.stdout + p.stderr


async def t_backup_consistent_cut(binary):
    root = tempfile.mkdtemp(prefix="il-backup-")
    bdir = os.path.join(root, "backups")
    try:
        with OwnServer(binary, backup_args(bdir), data_dir=os.path.join(root, "a")) as srv:
            a = await connect(srv)
            for stmt in ("+big(X) <- n(X), X > 3", ".user create bob pw-bob-1 viewer",
                         ".kg acl grant default bob viewer"):
                assert (await run(a, stmt))["type"] == "result", stmt
            f = await run(a, ".apikey create k1")
            k1 = f["rows"][0][1]
            w = await connect(srv)
            acked = 0
            go_on = True

            async def writer():
                nonlocal acked
                while go_on or acked < 50:
                    f = await run(w, "+n(%d)" % (acked + 1))
                    assert f["type"] == "result", f
                    acked += 1

            task = asyncio.create_task(writer())
            while acked < 20:
                await asyncio.sleep(0.005)
            before = acked  # acknowledged before .backup was sent: in the export
            f = await run(a, ".backup snap1", "b1")
            rows = lines(f)
            m = STARTED.match(rows[0])
            assert m and m.group(2) == os.path.join(os.path.realpath(bdir), "snap1"), rows
            assert HELD.match(rows[1]), rows
            revision = int(m.group(1))
            await asyncio.sleep(0.05)
            go_on = False
            await task
            rows = await wait_complete(a)
            m = COMPLETE.match(rows[0])
            assert m and int(m.group(1)) == revision, rows
            nfiles, nbytes = map(int, COUNTS.match(rows[1]).groups())
            dest = os.path.join(bdir, "snap1")
            with open(os.path.join(dest, MANIFEST)) as fh:
                manifest = json.load(fh)
            assert manifest["revision"] == revision == manifest["log_position"], manifest
            paths = sorted(e["path"] for e in manifest["files"])
            assert paths == ["ckpt/ckpt-%016x.ckpt" % revision, "identities.tsv"], paths
            assert nfiles == 3 and not os.path.exists(os.path.join(dest, "wal")), nfiles
            on_disk = sum(os.path.getsize(os.path.join(dest, p)) for p in paths + [MANIFEST])
            assert nbytes == on_disk, (nbytes, on_disk)
            total = acked
            await still_answers(a)
        with OwnServer(binary, ["--restore", dest], data_dir=os.path.join(root, "b")) as srv:
            a = await connect(srv)
            f = await run(a, "?n(X)")
            got = sorted(r[0] for r in f["rows"])
            k = len(got)
            assert got == list(range(1, k + 1)), got[:10]
            assert before <= k <= total, (before, k, total)
            f = await run(a, "?big(X)")
            assert sorted(r[0] for r in f["rows"]) == list(range(4, k + 1)), f
            b, f = await login(srv, "bob", "pw-bob-1")
            assert f["type"] == "authenticated" and f["role"] == "viewer", f
            assert (await run(b, "?n(1)"))["type"] == "result"  # the ACL came back too
            c = await connect(srv, key=k1)
            await still_answers(c)
            # the restored store goes on from the export's log position
            f = await run(a, "+n(%d)" % (k + 1))
            assert f["type"] == "result", f
            assert "Restored revision %d" % revision in srv.output(), srv.output()
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def t_backup_refusals(binary):
    root = tempfile.mkdtemp(prefix="il-backup-")
    bdir = os.path.join(root, "backups")
    try:
        with OwnServer(binary, backup_args(bdir), data_dir=os.path.join(root, "a")) as srv:
            a = await connect(srv)
            assert lines(await run(a, ".backup status")) == ["No export yet."]
            for name in (".hidden", "a/b", "semi;colon", "x" * 201):
                f = await run(a, ".backup " + name)
                assert f["type"] == "error" and f["code"] == "validation", f
                assert f["message"].startswith("Backup error: invalid backup name"), f
            f = await run(a, ".backup one two")
            assert f["type"] == "error" and f["validation_errors"][0]["error"] == \
                "Usage: .backup [name] | .backup status", f
            os.makedirs(os.path.join(bdir, "taken"))
            open(os.path.join(bdir, "taken", "f"), "w").close()
            f = await run(a, ".backup taken")
            assert f["code"] == "conflict" and "already exists and is not empty" in \
                f["message"], f
            assert os.listdir(os.path.join(bdir, "taken")) == ["f"]
            os.makedirs(os.path.join(bdir, "empty"))
            assert STARTED.match(lines(await run(a, ".backup empty"))[0])
            await wait_complete(a)
            assert os.path.exists(os.path.join(bdir, "empty", MANIFEST))
            f = await run(a, ".backup")  # the default name
            m = STARTED.match(lines(f)[0])
            assert m and re.fullmatch(r"checkpoint-\d{8}T\d{6}\.\d{3}Z",
                                      os.path.basename(m.group(2))), f
            await wait_complete(a)
            f = await run(a, ".backup empty")
            assert f["code"] == "conflict", f
            # non-admins
            await run(a, ".user create ed pw-ed-1 editor")
            await run(a, ".kg acl grant default ed owner")
            e, f = await login(srv, "ed", "pw-ed-1")
            assert f["type"] == "authenticated", f
            for stmt in (".backup x", ".backup status"):
                f = await run(e, stmt)
                assert f["code"] == "access_denied", f
                assert f["message"] == "Permission denied: only admins can back up", f
            assert not os.path.exists(os.path.join(bdir, "x"))
            # a second export while one runs: both in one program, so nothing can finish
            # in between (a state large enough to take a while to write)
            await fill(a, "m", 200000)
            f = await run(a, ".backup first\n.backup second")
            assert f["type"] == "result", f
            assert STARTED.match(f["rows"][0][0]), f
            errs = f["errors"]
            assert len(errs) == 1 and errs[0]["index"] == 1, f
            assert errs[0]["message"].startswith("Backup error: an export is already running"), f
            await wait_complete(a)
            assert os.path.exists(os.path.join(bdir, "first", MANIFEST))
            assert not os.path.exists(os.path.join(bdir, "second"))
            await still_answers(a)
        # shutdown in the middle of an export: whole or gone, and quick
        with OwnServer(binary, backup_args(bdir), data_dir=os.path.join(root, "a")) as srv:
            a = await connect(srv)
            assert STARTED.match(lines(await run(a, ".backup at-shutdown"))[0])
            t0 = time.monotonic()
            srv.proc.send_signal(15)
            srv.proc.wait(timeout=60)
            assert time.monotonic() - t0 < 30
        dest = os.path.join(bdir, "at-shutdown")
        assert not os.path.exists(dest) or os.path.exists(os.path.join(dest, MANIFEST)), \
            os.listdir(dest)
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def t_backup_configuration(binary):
    root = tempfile.mkdtemp(prefix="il-backup-")
    try:
        with OwnServer(binary, data_dir=os.path.join(root, "a")) as srv:
            a = await connect(srv)
            for stmt in (".backup", ".backup status"):
                f = await run(a, stmt)
                assert f["type"] == "error" and "storage.backup_dir" in f["message"], f
                assert f["message"].startswith("Backup error: `.backup` is disabled"), f
        # the environment sets it too
        bdir = os.path.join(root, "env-backups")
        env = {"INPUTLAYER_STORAGE__BACKUP_DIR": bdir}
        with OwnServer(binary, env=env, data_dir=os.path.join(root, "a")) as srv:
            a = await connect(srv)
            assert STARTED.match(lines(await run(a, ".backup e1"))[0])
            await wait_complete(a)
        assert os.path.exists(os.path.join(bdir, "e1", MANIFEST))
        # never inside the data directory (refused at start, nothing created)
        data = os.path.join(root, "c")
        inside = os.path.join(data, "sub", "backups")
        p = subprocess.run([binary, "--port", "0", "--data-dir", data] + backup_args(inside),
                           capture_output=True, text=True, env=clean_env(), cwd=root, timeout=60)
        assert p.returncode == 1 and "is inside the data directory" in p.stderr, p.stderr
        assert not os.path.exists(data)
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def t_restore_refusals(binary):
    root = tempfile.mkdtemp(prefix="il-backup-")
    bdir = os.path.join(root, "backups")
    try:
        used = os.path.join(root, "a")
        with OwnServer(binary, backup_args(bdir), data_dir=used) as srv:
            a = await connect(srv)
            await run(a, "+n[(1), (2), (3)]")
            assert STARTED.match(lines(await run(a, ".backup good"))[0])
            await wait_complete(a)
        good = os.path.join(bdir, "good")
        with open(os.path.join(good, MANIFEST)) as fh:
            ckpt = [e["path"] for e in json.load(fh)["files"] if e["path"].startswith("ckpt/")][0]

        def variant(name, change):
            path = os.path.join(root, name)
            shutil.copytree(good, path)
            change(path)
            return path

        def flip(path):
            with open(os.path.join(path, ckpt), "r+b") as fh:
                fh.seek(60)
                b = fh.read(1)
                fh.seek(60)
                fh.write(bytes([b[0] ^ 0x20]))

        def truncate(path):
            with open(os.path.join(path, "identities.tsv"), "r+b") as fh:
                fh.truncate(10)

        cases = [
            (variant("no-manifest", lambda p: os.remove(os.path.join(p, MANIFEST))),
             "has no manifest"),
            (variant("flipped", flip), "SHA-256 mismatch"),
            (variant("truncated", truncate), "bytes where the manifest lists"),
            (variant("missing", lambda p: os.remove(os.path.join(p, ckpt))), ": missing"),
        ]
        for src, why in cases:
            fresh = os.path.join(root, "fresh")
            status, out = start_restore(binary, src, fresh)
            assert status == 1 and "Restore failed" in out and why in out, (why, out)
            assert not os.path.exists(fresh), os.listdir(fresh)
        # a data directory that already holds data is refused and left as it was
        before = sorted(os.listdir(used))
        status, out = start_restore(binary, good, used)
        assert status == 1 and "already holds data" in out, out
        assert sorted(os.listdir(used)) == before, (before, os.listdir(used))
        # an empty existing directory is fine
        empty = os.path.join(root, "empty")
        os.makedirs(empty)
        with OwnServer(binary, ["--restore", good], data_dir=empty) as srv:
            a = await connect(srv)
            f = await run(a, "?n(X)")
            assert sorted(r[0] for r in f["rows"]) == [1, 2, 3], f
    finally:
        shutil.rmtree(root, ignore_errors=True)


TESTS = [t_backup_consistent_cut, t_backup_refusals, t_backup_configuration,
         t_restore_refusals]
