"""Randomized restart test (servers of their own, one data directory): random writes of
values of every stored type (integers small and large, negative, floats, strings with
escapes and non-ASCII text, booleans, vectors; 1 and 1.0 are distinct values) to two
relations with persistent rules over them, `.compact` (a checkpoint) now and then, and a
restart after each round, by SIGTERM or SIGKILL in turn. After every restart each base
relation and each rule must answer exactly what it answered before, types included: the
log and the checkpoints keep every acknowledged write, no deleted fact comes back, and
derived relations are rebuilt from them.

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
                # Every other round the process is killed: what was acknowledged is synced.
                if r % 2:
                    srv.proc.send_signal(signal.SIGKILL)
                    srv.proc.wait()
                    srv.log.close()
                    shutil.rmtree(srv.dir, ignore_errors=True)
                else:
                    status, _ = srv.stop()
                    assert status == 0, status
                srv = OwnServer(binary, NO_MESSAGE_RATE, data_dir=data).srv
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


TESTS = [t_restart_random]
