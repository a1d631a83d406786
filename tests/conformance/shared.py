"""Running transcript cases through one shared server, several clients at a time.

The cases were written for a server of their own: each creates, uses and drops its own
knowledge graphs, and a few run statements on `default`. On one shared server two
scripts must not touch the same graph at the same time, and what a script leaves behind
must not reach the next one. So:

  * graph_names() reads a script (and the files it `.load`s) and returns every graph it
    may touch: each name of a `.kg create/use/drop NAME`, and `default` (or whichever
    graph is current) for a statement that runs there;
  * run_scheduled() runs the cases on N threads; a case starts only when none of its
    graph names is held by a running case (the first such case in order, so the order
    stays close to the sequential one);
  * reset() runs after each case, before its names are released: it drops the
    graphs the case named (other than `default`), and, when the case touched `default`,
    drops the rules and clears the facts left there, through the client like any user;
  * leftovers() says what the server holds beyond an empty `default`: checked at the end
    of a run, so that a reset that missed something fails the run.

The scripts and their expected transcripts are never changed."""

import os
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request

_KG_CMD_RE = re.compile(r"^\.kg\s+(create|use|drop)\s+(\S+)")
_LOAD_RE = re.compile(r"^\.load\s+(\S+)")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def strip_comments(text):
    """The text without `//` and (nesting) `/* */` comments, strings kept; a comment's
    newlines are kept so that lines stay lines."""
    out, i, n, depth, in_str = [], 0, len(text), 0, False
    while i < n:
        c = text[i]
        if depth:
            if text.startswith("/*", i):
                depth, i = depth + 1, i + 2
            elif text.startswith("*/", i):
                depth, i = depth - 1, i + 2
            else:
                if c == "\n":
                    out.append(c)
                i += 1
        elif in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"' or c == "\n":  # a string never continues past its line
                in_str = False
            i += 1
        elif c == '"':
            in_str = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def graph_names(text, resolve_load=None, _depth=0, _state=None):
    """Every knowledge graph a script may touch, as a frozenset of names.

    The current graph is followed through the script as a set of the graphs it may be:
    `.kg create X` and `.kg use X` make it X when X certainly exists (created by the
    script and not dropped since, or `default`), and add X to it otherwise (the switch
    may fail); `.kg drop X` of a possibly current X adds `default`. A statement other
    than a `.kg` command touches every graph that may be current; `.kg list` and `.kg`
    alone read no graph's contents (the comparison keeps only the script's own graphs
    of a listing). resolve_load(path) returns the text of a `.load`ed file or None; a
    loaded file is read in the current graph, like the client runs it."""
    st = _state if _state is not None else {"cur": {"default"}, "alive": set(), "names": set()}
    for raw in strip_comments(text).splitlines():
        line = raw.strip()
        if not line:
            continue
        m = _KG_CMD_RE.match(line)
        if m:
            op, name = m.groups()
            if not (op == "use" and name == "default"):  # a switch reads nothing
                st["names"].add(name)
            certain = name == "default" or name in st["alive"]
            if op == "create":
                # it fails (and the current graph stays) for a name that exists or is
                # not a valid one
                fresh = not certain and _NAME_RE.match(name)
                st["cur"] = {name} if fresh else st["cur"] | {name}
                if fresh:
                    st["alive"].add(name)
            elif op == "use":
                st["cur"] = {name} if certain else st["cur"] | {name}
            else:
                st["alive"].discard(name)
                if name in st["cur"]:
                    st["cur"] = st["cur"] | {"default"}
            continue
        if re.match(r"^\.kg(\s+list)?$", line):
            continue
        m = _LOAD_RE.match(line)
        if m and resolve_load and _depth < 8:
            loaded = resolve_load(m.group(1))
            if loaded is not None:
                graph_names(loaded, resolve_load, _depth + 1, st)
                continue
        st["names"] |= st["cur"]
    return frozenset(st["names"])


def run_scheduled(items, names_of, work, clients):
    """Runs work(item) for every item on `clients` threads, never two items whose
    names_of() sets meet at the same time; returns the results in the order of items."""
    cond = threading.Condition()
    pending = list(range(len(items)))
    held = {}
    results = [None] * len(items)
    errors = []

    def take():
        with cond:
            while True:
                if not pending or errors:
                    return None
                for k, i in enumerate(pending):
                    if not any(held.get(g) for g in names_of(items[i])):
                        del pending[k]
                        for g in names_of(items[i]):
                            held[g] = held.get(g, 0) + 1
                        return i
                cond.wait()

    def worker():
        while True:
            i = take()
            if i is None:
                return
            try:
                results[i] = work(items[i])
            except BaseException as e:  # reported after the others stop
                errors.append(e)
            finally:
                with cond:
                    for g in names_of(items[i]):
                        held[g] -= 1
                    cond.notify_all()

    threads = [threading.Thread(target=worker) for _ in range(max(1, clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def run_iql(client, server, text, timeout):
    """Runs a script given as text through the client on the server; returns
    (exit status, stdout, stderr)."""
    env = dict(os.environ, INPUTLAYER_API_KEY=server.key)
    p = subprocess.run([client, "--server", server.url, "--script", "-"], input=text.encode(),
                       capture_output=True, timeout=timeout, env=env)
    return (p.returncode, p.stdout.decode("utf-8", errors="replace"),
            p.stderr.decode("utf-8", errors="replace"))


def _listed(out, header):
    """The names of the two-space-indented lines after `header` in out."""
    names, inside = [], False
    for line in out.splitlines():
        if line == header:
            inside = True
        elif inside and line.startswith("  "):
            names.append(line.split()[0])
        else:
            inside = False
    return names


def default_contents(client, server, timeout):
    """(relations with their tuple counts, rule names) of `default`."""
    st, out, err = run_iql(client, server, ".kg use default\n.rel\n.rule\n", timeout)
    if st != 0:
        raise OSError("cannot list default (status %d): %s" % (st, (out + err)[-2000:]))
    rels = {}
    for line in out.splitlines():
        m = re.match(r"^  (\S+) \(arity: .*tuples: (\d+)\)$", line)
        if m:
            rels[m.group(1)] = int(m.group(2))
    return rels, _listed(out, "Rules:")


def reset(client, server, names, timeout):
    """Removes what a case may have left in the graphs it named. Raises OSError when the
    server cannot be reached."""
    drops = sorted(n for n in names if n != "default")
    if drops:
        text = ".kg use default\n" + "".join(".kg drop %s\n" % n for n in drops)
        st, out, err = run_iql(client, server, text, timeout)
        if st not in (0, 1):  # 1: a graph the case had dropped itself
            raise OSError("reset failed (status %d): %s" % (st, (out + err)[-2000:]))
    if "default" in names:
        rels, rules = default_contents(client, server, timeout)
        text = "".join(".rule drop %s\n" % r for r in rules)
        text += "".join(".clear prefix %s\n" % r for r, n in sorted(rels.items()) if n)
        if text:
            st, out, err = run_iql(client, server, ".kg use default\n" + text, timeout)
            if st != 0:
                raise OSError("reset of default failed (status %d): %s"
                              % (st, (out + err)[-2000:]))


def leftovers(client, server, timeout):
    """What the server holds beyond `default` without rules and facts: a list of
    descriptions, empty when nothing is left."""
    st, out, err = run_iql(client, server, ".kg list\n", timeout)
    if st != 0:
        raise OSError("cannot list the graphs (status %d): %s" % (st, (out + err)[-2000:]))
    left = ["graph %s" % g for g in _listed(out, "Knowledge Graphs:") if g != "default"]
    rels, rules = default_contents(client, server, timeout)
    left += ["%d fact(s) of %s in default" % (n, r) for r, n in sorted(rels.items()) if n]
    left += ["rule %s in default" % r for r in rules]
    return left


def refusals(server, timeout=60):
    """The server's refusals by a limit ({reason: count} of inputlayer_rejections_total,
    and `ws <code>` of the error frames sent for load), read from its metrics; the
    metrics request is itself refused (429) while the address is over its rate."""
    req = urllib.request.Request(server.url + "/metrics/prometheus",
                                 headers={"Authorization": "Bearer " + server.key})
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                body = r.read().decode()
            break
        except urllib.error.HTTPError as e:
            if e.code != 429 or time.monotonic() > deadline:
                raise OSError("metrics: HTTP %d" % e.code)
            time.sleep(0.1)
    out = {}
    for m in re.finditer(r'^inputlayer_rejections_total\{reason="(\w+)"\} (\d+)$', body, re.M):
        out[m.group(1)] = int(m.group(2))
    for m in re.finditer(r'^inputlayer_ws_errors_total\{code="(rate_limited|overloaded)"\} (\d+)$',
                         body, re.M):
        out["ws " + m.group(1)] = int(m.group(2))
    return out
