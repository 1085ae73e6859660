#!/usr/bin/env python3
"""Bench of `niceeval view`'s server (not a timed test): a results file of N records
(default 1,000,000; written by this script's generator, records shaped like
tests/synthetic.rs's cases but shorter), the server started on it, then: the time to its
first page of rows (from the start of the process), each filter's and sort's time over HTTP,
and the server's peak RSS (VmHWM). Loopback only; bounded in requests and time.

    python3 scripts/bench-serve.py [--evals N] [--niceeval target/debug/niceeval] [--keep DIR]
"""
import argparse, json, os, subprocess, sys, tempfile, time, urllib.request

p = argparse.ArgumentParser()
p.add_argument("--evals", type=int, default=1_000_000)
p.add_argument("--niceeval", default="target/release/niceeval")
p.add_argument("--dir", default=None, help="where to write the results (kept)")
a = p.parse_args()

d = a.dir or tempfile.mkdtemp(prefix="niceeval-bench-serve-")
os.makedirs(d, exist_ok=True)
path = os.path.join(d, "evals.jsonl")
if not os.path.exists(path) or sum(1 for _ in open(path)) != a.evals:
    t = time.time()
    with open(path, "w") as f:
        for i in range(a.evals):
            topic = ["refund", "billing", "shipping"][i % 3]
            outcome = "skipped" if i % 50 == 7 else "failed" if i % 10 == 3 else "passed"
            judged = ((i * 37) % 101) / 100
            cost = ((180 + (i * 13) % 400) * 3 + (60 + (i * 7) % 200) * 15) / 1e6
            f.write(json.dumps({
                "id": f"evals::support_tickets::case_{i:07}", "file": "tests/evals.rs", "line": 12,
                "outcome": outcome, "tags": ["support", topic], "dataset": "evals::support_tickets",
                "score": None if outcome == "skipped" else judged,
                "duration_ms": 200 + ((i * 7919) % 5000) / 3, "cost_usd": cost,
                "assertions": [{"name": f'includes("{topic}")', "kind": "value", "severity": "gate",
                                "score": 1.0, "passed": outcome != "failed", "reason": "found"}],
                "events": [{"type": "message", "role": "assistant", "text": f"About order #{i}: your {topic} request was approved."}],
            }) + "\n")
    print(f"wrote {a.evals} records ({os.path.getsize(path) / 1e6:.0f} MB) in {time.time() - t:.1f}s", file=sys.stderr)

start = time.time()
proc = subprocess.Popen([a.niceeval, "view", "--no-open", path], stdout=subprocess.PIPE, text=True,
                        env={k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")})
try:
    url = proc.stdout.readline().strip().split("serving ", 1)[1]
    base, token = url.split("/?token=")

    def get(q):
        t = time.time()
        body = urllib.request.urlopen(f"{base}{q}{'&' if '?' in q else '?'}token={token}", timeout=120).read()
        return (time.time() - t) * 1000, json.loads(body)

    ms, first = get("/api/rows?limit=100")
    print(f"first rows: {(time.time() - start) * 1000:.0f} ms from start ({first['total']} evals indexed so far; the request {ms:.0f} ms)")
    while get("/api/status")[1]["evals"] < a.evals and time.time() - start < 120:
        time.sleep(0.05)
    print(f"whole file indexed: {(time.time() - start) * 1000:.0f} ms from start")
    for q in ["outcome=failed", "outcome=skipped", "q=case_00999", "tag=refund", "dataset=evals::support_tickets",
              "sort=id", "sort=-score", "sort=cost", "sort=-duration", "sort=outcome", "outcome=failed&sort=-duration"]:
        times = [get(f"/api/rows?{q}&limit=100")[0] for _ in range(3)]
        print(f"{q}: {min(times):.0f} ms (best of 3; {get(f'/api/rows?{q}&limit=1')[1]['total']} rows)")
    ms, _ = get(f"/api/eval?id=evals::support_tickets::case_{a.evals // 2:07}")
    print(f"one eval's record: {ms:.1f} ms")
    status = open(f"/proc/{proc.pid}/status").read()
    hwm = [l for l in status.splitlines() if l.startswith("VmHWM")][0].split()[1]
    print(f"server peak RSS: {int(hwm) / 1024:.0f} MB")
finally:
    proc.terminate()
    proc.wait()
