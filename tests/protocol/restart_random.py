"""Randomized restart test (servers of their own, one data directory): random writes of
values of every stored type (integers small and large, negative, floats, strings with
escapes and non-ASCII text, booleans, vectors; 1 and 1.0 are distinct values) to two
relations with persistent rules over them, `.compact` (a checkpoint) now and then, and a
restart after each round, by SIGTERM or SIGKILL in turn. After every restart each base
relation and each rule must answer exactly what it answered before, types included: the
log and the checkpoints keep every acknowledged write, no deleted fact comes back, and
derived relations are rebuilt from them.

t_restart_catalog_random does the same for the catalog: random knowledge graphs created,
used and dropped, rule clauses added, removed, cleared and dropped, schemas declared,
relations dropped, users, API keys and graph ACLs created, changed and dropped, amid
writes and checkpoints (some of the commands fail: a rule index out of range, a graph
that exists); after every restart every graph's relations, rules (as `.rule def` lists
them), schemas, answers and ACL, and the users and keys, must be what they were.

Seeded: INPUTLAYER_TEST_SEED (default 1); INPUTLAYER_TEST_RESTARTS (rounds, default 6)."""

import json
import shutil
import signal

from common import NO_MESSAGE_RATE, OwnServer, connect, run, seeded
from recovery import DataDir

RULES = ["+pair(X, Z) <- fact(X, Y), fact(Y, Z)",
         "+tagged(X, T) <- fact(X, _), tag(X, T)",
         "+n(X, count<Y>) <- fact(X, Y)",
         "+lonely(X) <- tag(X, _), !fact(X, _)"]
QUERIES = ["?fact(X, Y)", "?tag(X, T)", "?pair(X, Z)", "?tagged(X, T)", "?n(X, C)",
           "?lonely(X)"]


def value(rng):
    kind = rng.randrange(10)
    if kind < 4:
        return str(rng.randint(-3, 6))
    if kind == 4:
        return "%d.0" % rng.randint(-1, 4)
    if kind == 5:
        return rng.choice(["2.5", "-0.125", "1e-300", "123456.75"])
    if kind == 6:
        return rng.choice(["9007199254740993", "-4611686018427387904"])
    if kind == 7:
        return rng.choice(['"a"', '"b"', '"q\\"uote"', '"caf\u00e9 \u6f22"', '"tab\\there"'])
    if kind == 8:
        return rng.choice(["true", "false"])
    return rng.choice(["[1.0, 2.0]", "[0.5, -1.5]"])


def program(rng):
    rel = rng.choice(["fact", "tag"])

    def fact():
        return "(%s, %s)" % (value(rng), value(rng))
    kind = rng.randrange(6)
    if kind < 3:
        return "+%s%s" % (rel, fact())
    if kind == 3:
        return "+%s[%s]" % (rel, ", ".join(fact() for _ in range(rng.randint(2, 5))))
    if kind == 4:
        return "-%s%s" % (rel, fact())
    return "-%s(X, Y) <- %s(X, Y), X = %s" % (rel, rel, value(rng))


def canon(rows):
    """Rows as sorted JSON texts: 1 and 1.0, true and 1 stay apart."""
    return sorted(json.dumps(r) for r in rows)


def restart(srv, binary, data, kill):
    """A new server on the same data directory after stopping this one, by SIGTERM or,
    with kill, SIGKILL (what was acknowledged is synced, so nothing may be lost)."""
    if kill:
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait()
        srv.log.close()
        shutil.rmtree(srv.dir, ignore_errors=True)
    else:
        status, _ = srv.stop()
        assert status == 0, status
    return OwnServer(binary, NO_MESSAGE_RATE, data_dir=data).srv


async def answers(srv):
    c = await connect(srv)
    out = {}
    for q in QUERIES:
        f = await run(c, q)
        assert f["type"] == "result" and f["errors"] == [], (q, f)
        out[q] = canon(f["rows"])
    await c.ws.close()
    return out


async def t_restart_random(binary):
    seed, rounds, rng = seeded("INPUTLAYER_TEST_RESTARTS", 6)
    written = rows = 0
    with DataDir() as data:
        srv = OwnServer(binary, NO_MESSAGE_RATE, data_dir=data).srv
        try:
            c = await connect(srv)
            for rule in RULES:
                f = await run(c, rule)
                assert f["type"] == "result" and f["errors"] == [], (rule, f)
            await c.ws.close()
            for r in range(rounds):
                c = await connect(srv)
                for _ in range(rng.randint(20, 60)):
                    prog = program(rng)
                    f = await run(c, prog)
                    assert f["type"] == "result" and f["errors"] == [], (seed, prog, f)
                    written += 1
                    if rng.randrange(40) == 0:
                        f = await run(c, ".compact")
                        assert f["type"] == "result", f
                await c.ws.close()
                before = await answers(srv)
                srv = restart(srv, binary, data, kill=r % 2 == 1)
                after = await answers(srv)
                rows += sum(len(v) for v in after.values())
                for q in QUERIES:
                    assert after[q] == before[q], (
                        "seed %d, round %d (%s): %s changed across the restart:\n"
                        "before %s\nafter  %s" % (seed, r, "kill" if r % 2 else "stop", q,
                                                  before[q], after[q]))
        finally:
            status, out = srv.stop()
        assert status == 0, out[-3000:]
    print("     %d rounds, %d random writes, each restart answered as before (%d rows "
          "compared, seed %d)" % (rounds, written, rows, seed))
    assert rows > rounds * 10, rows


GRAPHS = ["g0", "g1", "g2"]
CLAUSES = ["+r0(X, Y) <- a(X, Y)", "+r0(X, Z) <- r0(X, Y), a(Y, Z)", "+r0(X, Y) <- b(Y, X)",
           "+r1(X, count<Y>) <- a(X, Y)", "+r1(X, sum<Y>) <- b(X, Y)",
           "+r2(X) <- b(X, _), !a(X, _)", "+r2(Y) <- r0(_, Y), Y > 2",
           "+s(id: int, name: string)", "+s(id: int, name: string, extra: float)"]


def catalog_command(rng, current):
    """A random catalog or data command, given the connection's current graph: its text,
    and the current graph after it if it succeeds."""
    k = rng.randrange(24)
    g = rng.choice(GRAPHS)
    if k == 0:
        return ".kg create %s" % g, g
    if k == 1:
        return ".kg use %s" % g, g
    if k == 2:
        return (".kg drop %s" % g) if g != current else ".kg use default", (
            current if g != current else "default")
    if k < 6:
        return rng.choice(CLAUSES), current
    if k == 6:
        return ".rule remove r%d %d" % (rng.randrange(3), rng.randint(1, 3)), current
    if k == 7:
        return rng.choice([".rule drop r%d", ".rule clear r%d", "-r%d"]) % rng.randrange(3), \
            current
    if k == 8:
        return ".rel drop %s" % rng.choice("abs"), current
    if k == 9:
        u = "u%d" % rng.randrange(3)
        return rng.choice([".user create %s pw-%d editor" % (u, rng.randrange(9)),
                           ".user drop %s" % u, ".user role %s viewer" % u,
                           ".user password %s pw-%d" % (u, rng.randrange(9))]), current
    if k == 10:
        lab = "k%d" % rng.randrange(3)
        return rng.choice([".apikey create %s" % lab, ".apikey revoke %s" % lab]), current
    if k == 11:
        u = "u%d" % rng.randrange(3)
        return rng.choice([".kg acl grant %s %s %s" % (g, u, rng.choice(["viewer", "editor"])),
                           ".kg acl revoke %s %s" % (g, u)]), current
    if k == 12:
        return ".compact", current
    if k < 15:
        return "+s(%d, \"n%d\")" % (rng.randrange(4), rng.randrange(3)), current
    rel = rng.choice("ab")
    if k < 21:
        return "+%s(%d, %d)" % (rel, rng.randrange(5), rng.randrange(5)), current
    return "-%s(%d, %d)" % (rel, rng.randrange(5), rng.randrange(5)), current


async def catalog(srv):
    """Everything the catalog holds, as the server lists it, and every relation's rows."""
    c = await connect(srv)
    out = {}

    async def ask(key, cmd):
        f = await run(c, cmd)
        cols, rows = f.get("columns") or [], f.get("rows") or []
        if "last_used_at" in cols:  # moves with every use of a key: not the catalog's
            i = cols.index("last_used_at")
            cols, rows = cols[:i] + cols[i + 1:], [r[:i] + r[i + 1:] for r in rows]
        out[key] = (f["type"], cols, canon(rows), f.get("message"))
        return f
    f = await ask("kgs", ".kg list")
    graphs = [r[0].strip().rstrip(" *") for r in f["rows"][1:]]
    await ask("users", ".user list")
    await ask("keys", ".apikey list")
    for g in graphs:
        await run(c, ".kg use %s" % g)
        await ask((g, "acl"), ".kg acl list %s" % g)
        f = await ask((g, "rel"), ".rel")
        rels = [r[0].split()[0] for r in f["rows"][1:]]
        f = await ask((g, "rules"), ".rule list")
        rules = [r[0].split()[0] for r in f["rows"][1:] if r[0].startswith("  ")]
        for name in rules:
            await ask((g, "def", name), ".rule def %s" % name)
        for name in set(rels) | set(rules):
            for n in (1, 2, 3):
                await ask((g, "rows", name, n), "?%s(%s)" % (name, ", ".join("XYZ"[:n])))
    await c.ws.close()
    return out


async def t_restart_catalog_random(binary):
    seed, rounds, rng = seeded("INPUTLAYER_TEST_RESTARTS", 6)
    commands = failed = 0
    with DataDir() as data:
        srv = OwnServer(binary, NO_MESSAGE_RATE, data_dir=data).srv
        try:
            for r in range(rounds):
                c = await connect(srv)
                current = "default"
                history = []
                for _ in range(rng.randint(30, 80)):
                    cmd, after = catalog_command(rng, current)
                    f = await run(c, cmd)
                    history.append(cmd)
                    commands += 1
                    if f["type"] == "result" and not f.get("errors"):
                        current = after
                    else:
                        failed += 1
                await c.ws.close()
                before = await catalog(srv)
                srv = restart(srv, binary, data, kill=r % 2 == 1)
                after = await catalog(srv)
                for key in sorted(set(before) | set(after), key=str):
                    assert before.get(key) == after.get(key), (
                        "seed %d, round %d (%s): %s changed across the restart:\nbefore %s\n"
                        "after  %s\nthe round's commands:\n  %s" % (
                            seed, r, "kill" if r % 2 else "stop", key, before.get(key),
                            after.get(key), "\n  ".join(history)))
        finally:
            status, out = srv.stop()
        assert status == 0, out[-3000:]
    print("     %d rounds, %d random catalog commands (%d refused), each restart listed "
          "and answered as before (seed %d)" % (rounds, commands, failed, seed))


TESTS = [t_restart_random, t_restart_catalog_random]
