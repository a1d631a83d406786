#!/usr/bin/env python3
"""Conformance runner: runs IQL transcript cases through the CLI and compares transcripts.

Two sets of cases are run, each laid out as <root>/<category>/<name>.iql with the expected
transcript beside it as <name>.iql.out:

  * the reference cases (--cases DIR, e.g. ../shared/conformance, holding cases/...):
    transcripts of the original InputLayer CLI. A failing case may be listed in the
    known-differences file (--known) with one of the allowed classes; a listed case
    that now passes is a stale entry and fails the run.
  * the project's own transcript tests (--own, default tests/iql): these must all pass.

Each case runs as `CLIENT --local --script /abs/path/case.iql` (or, with --server-bin,
as `CLIENT --server URL --script ...` against a fresh server started for that case on a
free port with a temporary data directory, so that cases do not see each other's data) with the current directory
set to a temporary directory in which `examples/iql` links to the case root, so that
`.load examples/iql/...` resolves.

With --shared (and --server-bin) every reference case runs through ONE server at its
default limits (rate limits included), --clients scripts at a time (default 2), as a
test suite, a loader or cron jobs would: no statement may be lost to the limits. Two
cases that may touch the same knowledge graph never run at the same time, and what a
case leaves behind is removed before the next case that could see it (shared.py says
how); at the end the server must hold nothing but an empty `default`. The project's own
transcript tests are not run in this mode: they write relations into `default`, which
no statement can remove again (a cleared relation keeps its name), so they need a
server each. Standard output is compared after the normalisation
of ../shared/conformance/README.md ("How to compare", step 3). A crash (death by a
signal), a timeout or sanitizer output on standard error fails a case even when its
output matches; such failures cannot be excused by the known-differences file.

Exit status: 0 when every case passes or is listed, no entry is stale, and every own
test passes; 1 otherwise; 2 for a usage error or an invalid known-differences file.

Only the Python 3 standard library is used.
"""

import argparse
import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import shared

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The classes of ../shared/conformance/README.md, plus `later`: the case needs a feature
# of a later issue (reported separately from the real known differences).
KNOWN_CLASSES = {
    "multiline",
    "lossy-rule",
    "placeholder-join",
    "string-order",
    "function-literal",
    "mutual-recursion",
    "escape",
    "float-text",
    "stale-session",
    "debug-plan",
    "utf8",
    "later",
}

# Lines starting with one of these are dropped before comparing.
_DROP_PREFIXES = (
    "Executing script:",
    "Connecting to server",
    "Connected!",
    "Authenticated as:",
    "Server status:",
    "Current knowledge graph:",
    "warning:",
    "   -->",
    "    |",
    "   = note:",
    "   = help:",
    "Compiling ",
    "Finished ",
    "Running ",
    "   Compiling ",
    "   Finished ",
    "   Running ",
)

_TIMESTAMP_RE = re.compile(
    r"(Created: |last_accessed: |created_at: )"
    r"(\"?\d[\w:.+\-/]*(?: \d[\w:.+\-/]*)?(?: UTC)?\"?)"
)
_KG_CREATE_RE = re.compile(r"^\s*\.kg\s+create\s+(\S+)")
_SANITIZER_MARKERS = (
    "ERROR: AddressSanitizer",
    "runtime error:",
    "LeakSanitizer",
    "ERROR: UndefinedBehaviorSanitizer",
)


# ---------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------


def created_graphs(script_text):
    """Names of the knowledge graphs a script creates with `.kg create NAME`."""
    names = set()
    for line in script_text.splitlines():
        m = _KG_CREATE_RE.match(line)
        if m:
            names.add(m.group(1))
    return names


def normalise(text, own_graphs):
    """Normalises a transcript as README.md "How to compare" step 3 says.

    own_graphs: the graphs the script creates; in a `.kg list` block only those and
    `default` are kept (a trailing ` *` is dropped)."""
    out = []
    in_kg_list = False
    for line in text.splitlines():
        line = line.rstrip()
        if not line:
            continue
        if line.startswith(_DROP_PREFIXES):
            continue
        if in_kg_list:
            if line.startswith("  "):
                name = line.strip()
                if name.endswith(" *"):
                    name = name[:-2].rstrip()
                if name == "default" or name in own_graphs:
                    out.append("  " + name)
                continue
            in_kg_list = False
        if line == "Knowledge Graphs:":
            in_kg_list = True
        out.append(_TIMESTAMP_RE.sub(lambda m: m.group(1) + "<timestamp>", line))
    return out


# ---------------------------------------------------------------------------
# Cases and the known-differences file
# ---------------------------------------------------------------------------


class Case:
    """One transcript case: <root>/<category>/<name>.iql and its .iql.out."""

    def __init__(self, root, category, name):
        self.root = root
        self.category = category
        self.name = name
        self.key = category + "/" + name  # e.g. 01_knowledge_graph/02_list_kg.iql
        self.path = os.path.join(root, category, name)


def discover(root):
    """Returns (cases, skipped) under root: cases sorted by key, and the keys of .iql
    files without an .iql.out (skipped)."""
    cases, skipped = [], []
    for category in sorted(os.listdir(root)):
        cdir = os.path.join(root, category)
        if not os.path.isdir(cdir) or category.startswith("."):
            continue
        for name in sorted(os.listdir(cdir)):
            if not name.endswith(".iql") or name.startswith("_") or "_pending_" in name:
                continue
            if not os.path.isfile(os.path.join(cdir, name + ".out")):
                skipped.append(category + "/" + name)
                continue
            cases.append(Case(root, category, name))
    return cases, skipped


def select(cases, categories, substring):
    """Applies the --category and --case filters."""
    if categories:
        cases = [c for c in cases if c.category in categories]
    if substring:
        cases = [c for c in cases if substring in c.key]
    return cases


class KnownError(Exception):
    pass


def read_known(path, valid_keys):
    """Reads the known-differences file: {key: (class, reason, lineno)}.

    valid_keys: the set of existing reference case keys, or None to skip that check.
    Raises KnownError listing every problem found."""
    entries, errors = {}, []
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            where = "%s:%d" % (path, lineno)
            if len(parts) < 3:
                errors.append("%s: malformed line (want `<category>/<case>.iql  <class>  "
                              "<reason>`): %s" % (where, line))
                continue
            key, cls, reason = parts
            if key.count("/") != 1 or not key.endswith(".iql"):
                errors.append("%s: malformed case name %r (want <category>/<case>.iql)"
                              % (where, key))
                continue
            if cls not in KNOWN_CLASSES:
                errors.append("%s: unknown class %r (allowed: %s)"
                              % (where, cls, ", ".join(sorted(KNOWN_CLASSES))))
                continue
            if valid_keys is not None and key not in valid_keys:
                errors.append("%s: no such case: %s" % (where, key))
                continue
            if key in entries:
                errors.append("%s: duplicate entry for %s (first on line %d)"
                              % (where, key, entries[key][2]))
                continue
            entries[key] = (cls, reason, lineno)
    if errors:
        raise KnownError("\n".join(errors))
    return entries


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------


class Outcome:
    """The result of running one case."""

    def __init__(self, case, status, detail, expected, actual, stderr, seconds):
        self.case = case
        self.status = status  # "pass", "differs", "crash", "timeout", "sanitizer", "error"
        self.detail = detail
        self.expected = expected
        self.actual = actual
        self.stderr = stderr
        self.seconds = seconds

    @property
    def passed(self):
        return self.status == "pass"


def make_workdir(case_root):
    """A temporary directory with examples/iql -> case_root."""
    d = tempfile.mkdtemp(prefix="il-conformance-")
    os.mkdir(os.path.join(d, "examples"))
    os.symlink(os.path.abspath(case_root), os.path.join(d, "examples", "iql"))
    return d


class Server:
    """A fresh inputlayer-server with a temporary data directory, on a port the system
    chooses (--port 0) and the server reports: picking a free port here and passing it on
    would race with the other cases running in parallel."""

    def __init__(self, binary):
        self.dir = tempfile.mkdtemp(prefix="il-conformance-server-")
        self.key = "conformance-" + os.urandom(16).hex()
        env = dict(os.environ, INPUTLAYER_BOOTSTRAP_API_KEY=self.key)
        self.log = open(os.path.join(self.dir, "server.log"), "w+b")
        # In its own directory: no ./config.toml changes its defaults.
        self.proc = subprocess.Popen(
            [binary, "--port", "0", "--data-dir", os.path.join(self.dir, "data")],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, env=env,
            cwd=self.dir, start_new_session=True)
        deadline = time.monotonic() + 15
        self.port = None
        while self.port is None:
            m = re.search(r"listening on: http://[^:\s]+:(\d+)", self.output())
            if m:
                self.port = int(m.group(1))
            elif self.proc.poll() is not None or time.monotonic() > deadline:
                raise OSError("server did not start: " + self.output())
            else:
                time.sleep(0.02)
        self.url = "http://127.0.0.1:%d" % self.port
        while True:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise OSError("server did not start: " + self.output())
            time.sleep(0.05)

    def output(self):
        # A separate handle: seeking the one the server writes through would move the
        # server's own write position.
        with open(self.log.name, "rb") as f:
            return f.read().decode("utf-8", errors="replace")

    def stop(self):
        """Stops the server; returns (ok, detail)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        out = self.output()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        if self.proc.returncode != 0:
            return False, "server exited with status %d:\n%s" % (self.proc.returncode, out[-4000:])
        if any(m in out for m in _SANITIZER_MARKERS):
            return False, "sanitizer report in the server output:\n" + out[-8000:]
        return True, ""


def run_case(client, case, workdir, timeout, server_bin=None):
    """Runs one case (in process, or through a fresh server) and compares its transcript."""
    server = None
    if server_bin:
        try:
            server = Server(server_bin)
        except OSError as e:
            return Outcome(case, "error", str(e), [], [], "", 0.0)
    try:
        outcome = run_client(client, case, workdir, timeout, server)
    finally:
        if server:
            ok, detail = server.stop()
    if server and not ok and outcome.passed:
        status = "sanitizer" if "sanitizer" in detail else "crash"
        outcome = Outcome(case, status, detail.splitlines()[0], outcome.expected, outcome.actual,
                          detail, outcome.seconds)
    elif server and not ok:
        outcome.stderr += "\n--- server ---\n" + detail
    return outcome


def run_client(client, case, workdir, timeout, server):
    """Runs the client on one case and compares its transcript."""
    with open(case.path, encoding="utf-8", errors="replace") as f:
        graphs = created_graphs(f.read())
    with open(case.path + ".out", encoding="utf-8", errors="replace") as f:
        expected = normalise(f.read(), graphs)
    start = time.monotonic()
    try:
        if server:
            cmd = [client, "--server", server.url, "--script", os.path.abspath(case.path)]
            env = dict(os.environ, INPUTLAYER_API_KEY=server.key)
        else:
            cmd = [client, "--local", "--script", os.path.abspath(case.path)]
            env = None
        proc = subprocess.Popen(
            cmd,
            env=env,
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as e:
        return Outcome(case, "error", "cannot start client: %s" % e, expected, [], "", 0.0)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the client's own process group
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
    seconds = time.monotonic() - start
    stdout = out.decode("utf-8", errors="replace")
    stderr = err.decode("utf-8", errors="replace")
    actual = normalise(stdout, graphs)

    if timed_out:
        status, detail = "timeout", "timed out after %gs" % timeout
    elif proc.returncode < 0:
        try:
            signame = signal.Signals(-proc.returncode).name
        except ValueError:
            signame = "signal %d" % -proc.returncode
        status, detail = "crash", "killed by %s" % signame
    elif any(m in stderr for m in _SANITIZER_MARKERS):
        status, detail = "sanitizer", "sanitizer report on stderr"
    elif actual != expected:
        status, detail = "differs", "output differs"
    else:
        status, detail = "pass", ""
    return Outcome(case, status, detail, expected, actual, stderr, seconds)


def run_shared(client, cases, workdir, timeout, clients, server):
    """Runs cases through one shared server, `clients` at a time, never two that may
    touch the same graph together, resetting what each leaves (shared.py). Returns
    (outcomes in the order of cases, leftovers at the end)."""
    def load_text(path):
        try:
            with open(os.path.join(workdir, path), encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return None

    names = {}
    for c in cases:
        with open(c.path, encoding="utf-8", errors="replace") as f:
            names[c.key] = shared.graph_names(f.read(), load_text)

    def work(case):
        outcome = run_client(client, case, workdir, timeout, server)
        try:
            shared.reset(client, server, names[case.key], timeout)
        except (OSError, subprocess.TimeoutExpired) as e:
            outcome = Outcome(case, "error", "reset after the case: %s" % e, outcome.expected,
                              outcome.actual, outcome.stderr, outcome.seconds)
        return outcome

    outcomes = shared.run_scheduled(cases, lambda c: names[c.key], work, clients)
    refused = shared.refusals(server)
    print("the server's refusals by its limits (each retried by the client): %s"
          % (", ".join("%s %d" % kv for kv in sorted(refused.items()) if kv[1]) or "none"))
    return outcomes, shared.leftovers(client, server, timeout)


def run_all(client, cases, workdir, timeout, jobs, server_bin=None):
    """Runs cases in parallel; returns outcomes in the order of cases."""
    if not cases:
        return []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(run_case, client, c, workdir, timeout, server_bin) for c in cases]
        return [f.result() for f in futures]


# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------


def print_diff(o):
    """Prints the normalised diff (and stderr tail) of a failing outcome."""
    print("=" * 78)
    print("%s: %s" % (o.case.key, o.detail))
    for line in difflib.unified_diff(o.expected, o.actual, "expected", "actual", lineterm=""):
        print(line)
    if o.stderr.strip():
        tail = o.stderr.rstrip().splitlines()[-30:]
        print("--- stderr (last %d lines) ---" % len(tail))
        for line in tail:
            print(line)


def summarise(title, outcomes, known, quiet, show_diff, with_known=True):
    """Prints the per-category lines and failures of one set.

    Returns (passed, failed, known_count, later_count, stale_keys, failing_outcomes)."""
    print(title)
    by_cat = {}
    for o in outcomes:
        by_cat.setdefault(o.case.category, []).append(o)
    passed = failed = n_known = n_later = 0
    stale, failing = [], []
    for cat in sorted(by_cat):
        cp = cf = ck = 0
        lines = []
        for o in by_cat[cat]:
            entry = known.get(o.case.key)
            if o.passed:
                cp += 1
                if entry:
                    stale.append(o.case.key)
                    lines.append("  STALE %s: passes but is listed as %s" % (o.case.key, entry[0]))
            elif entry and o.status == "differs":
                ck += 1
                if entry[0] == "later":
                    n_later += 1
            else:
                cf += 1
                failing.append(o)
                note = "; listed as %s, which does not excuse it" % entry[0] if entry else ""
                lines.append("  FAIL %s (%s%s)" % (o.case.key, o.detail, note))
        if with_known:
            print("%s: %d passed, %d failed, %d known" % (cat, cp, cf, ck))
        else:
            print("%s: %d passed, %d failed" % (cat, cp, cf))
        if not quiet:
            for line in lines:
                print(line)
        passed += cp
        failed += cf
        n_known += ck
    if show_diff:
        for o in failing:
            print_diff(o)
    return passed, failed, n_known, n_later, stale, failing


def resolve_client(client):
    if os.sep in client:
        path = os.path.abspath(client)
    else:
        path = shutil.which(client) or os.path.abspath(client)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return None
    return path


def case_root_of(cases_dir):
    """DIR/cases when it exists (the shared layout), else DIR itself."""
    sub = os.path.join(cases_dir, "cases")
    return sub if os.path.isdir(sub) else cases_dir


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--client", required=True, help="path to inputlayer-client")
    ap.add_argument("--server-bin", help="path to inputlayer-server: run every case through "
                    "one fresh server (`--server URL`) instead of `--local`")
    ap.add_argument("--shared", action="store_true", help="with --server-bin: run the "
                    "reference cases through one server at its default limits, --clients at "
                    "a time (own tests are not run)")
    ap.add_argument("--clients", type=int, default=2,
                    help="with --shared: scripts run at the same time (default 2)")
    ap.add_argument("--cases", help="reference cases dir (holding cases/<category>/...)")
    ap.add_argument("--own", default=os.path.join(REPO, "tests", "iql"),
                    help="the project's own transcript tests (default: tests/iql)")
    ap.add_argument("--known", help="known-differences file "
                    "(default: tests/conformance/known-differences.txt)")
    ap.add_argument("--category", action="append", default=[],
                    help="run only this category (repeatable)")
    ap.add_argument("--case", help="run only cases whose <category>/<name>.iql contains this")
    ap.add_argument("--diff", action="store_true",
                    help="print a unified diff of normalised expected vs actual for failures")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                    help="parallel jobs (default: number of CPUs)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per case (default 60)")
    ap.add_argument("-q", "--quiet", action="store_true", help="do not list failing cases")
    ap.add_argument("--update-known", action="store_true",
                    help="print known-differences lines (class TODO) for unlisted failing "
                    "cases; never writes the file")
    args = ap.parse_args(argv)
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)  # keep stdout and stderr in order

    client = resolve_client(args.client)
    if client is None:
        print("error: client not found or not executable: %s" % args.client, file=sys.stderr)
        return 2

    # Reference cases.
    ref_root, ref_all, ref_skipped = None, [], []
    if args.cases:
        ref_root = case_root_of(args.cases)
        if os.path.isdir(ref_root):
            ref_all, ref_skipped = discover(ref_root)
        else:
            print("note: reference cases dir %s does not exist: skipping the reference cases"
                  % args.cases)
            ref_root = None
    else:
        print("note: no --cases given: skipping the reference cases")

    # Known differences.
    known_path = args.known or os.path.join(REPO, "tests", "conformance",
                                            "known-differences.txt")
    known = {}
    if os.path.exists(known_path):
        valid = {c.key for c in ref_all} if ref_root else None
        try:
            known = read_known(known_path, valid)
        except KnownError as e:
            print("error: invalid known-differences file:\n%s" % e, file=sys.stderr)
            return 2
    elif args.known:
        print("error: known-differences file not found: %s" % known_path, file=sys.stderr)
        return 2

    # Own tests.
    own_all = []
    if os.path.isdir(args.own):
        own_all, own_skipped = discover(args.own)
        for key in own_skipped:
            print("note: own test without .out skipped: %s" % key)
    else:
        print("note: own tests dir %s does not exist" % args.own)

    ref_cases = select(ref_all, args.category, args.case)
    own_cases = select(own_all, args.category, args.case)
    if ref_skipped:
        print("note: %d reference .iql file(s) without .out skipped" % len(ref_skipped))

    start = time.monotonic()
    workdirs = []
    server_bin = None
    if args.server_bin:
        server_bin = resolve_client(args.server_bin)
        if server_bin is None:
            print("error: server not found or not executable: %s" % args.server_bin,
                  file=sys.stderr)
            return 2
        if args.shared:
            print("mode: through one %s at its default limits, %d client(s) at a time"
                  % (server_bin, args.clients))
        else:
            print("mode: through %s (a fresh server per case)" % server_bin)
    elif args.shared:
        print("error: --shared needs --server-bin", file=sys.stderr)
        return 2
    shared_server, leftovers, shared_detail = None, [], ""
    if args.shared:
        own_cases = []
        try:
            shared_server = Server(server_bin)
        except OSError as e:
            print("error: %s" % e, file=sys.stderr)
            return 1
    try:
        ref_out = own_out = []
        if ref_cases and shared_server:
            workdirs.append(make_workdir(ref_root))
            try:
                ref_out, leftovers = run_shared(client, ref_cases, workdirs[-1], args.timeout,
                                                args.clients, shared_server)
            except (OSError, subprocess.TimeoutExpired) as e:
                shared_detail = str(e)
        elif ref_cases:
            workdirs.append(make_workdir(ref_root))
            ref_out = run_all(client, ref_cases, workdirs[-1], args.timeout, args.jobs, server_bin)
        if own_cases:
            workdirs.append(make_workdir(args.own))
            own_out = run_all(client, own_cases, workdirs[-1], args.timeout, args.jobs, server_bin)
    finally:
        for d in workdirs:
            shutil.rmtree(d, ignore_errors=True)
        if shared_server:
            server_ok, server_detail = shared_server.stop()
    elapsed = time.monotonic() - start

    ok = True
    if shared_server:
        if shared_detail:
            print("FAIL: the shared run stopped: %s" % shared_detail)
            ok = False
        if leftovers:
            print("FAIL: the server kept state after the cases' resets: %s"
                  % ", ".join(leftovers))
            ok = False
        if not server_ok:
            print("FAIL: the shared server: %s" % server_detail)
            ok = False
    failing = []
    if ref_root:
        p, f, k, later, stale, failing = summarise(
            "== Reference cases (%s)" % ref_root, ref_out, known, args.quiet, args.diff)
        print("TOTAL: %d passed, %d failed, %d known-differences (of %d cases)"
              % (p, f, k, len(ref_out)))
        if k:
            print("  of the known differences: %d `later` (need a feature of a later issue), "
                  "%d real differences of the original" % (later, k - later))
        for key in stale:
            print("stale known-difference entry: remove it: %s" % key)
        if f or stale:
            ok = False
    if not args.shared:
        p, f, _, _, _, own_failing = summarise("== Own transcript tests (%s)" % args.own,
                                               own_out, {}, args.quiet, args.diff,
                                               with_known=False)
        print("OWN TOTAL: %d passed, %d failed (of %d cases)" % (p, f, len(own_out)))
        if f:
            ok = False

    if args.update_known:
        print("# known-differences lines for the failing reference cases (edit the class):")
        for o in failing:
            if o.status == "differs":
                print("%s  TODO  %s" % (o.case.key, o.detail))
            else:
                print("# %s: %s (cannot be listed: fix it)" % (o.case.key, o.detail))
        for key in sorted(known):
            if any(o.case.key == key and o.passed for o in ref_out):
                print("# remove: %s" % key)

    print("%s in %.1fs" % ("PASS" if ok else "FAIL", elapsed))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
