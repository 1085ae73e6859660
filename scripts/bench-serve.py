#!/usr/bin/env python3
"""Bench of `niceeval view`'s server (not a timed test): a results file of N records
(default 1,000,000; written by this script's generator, records shaped like
tests/synthetic.rs's cases but shorter — or a real run's file with --results, e.g. the one
`RUNS=1 PLAIN=0 BENCH_DIR=… bash scripts/bench-dataset.sh 1000000` leaves under
$BENCH_DIR/target/niceeval/results), the server started on it, then: the time to its first
page of rows (from the start of the process), the served page's own first requests (the page,
/api/status, the first window of rows in name order, as viewer.js asks them), each filter's
and sort's time over HTTP, and the server's peak RSS (VmHWM). Then the server is started
again on the same file: what the index kept beside it (`.niceeval-index/`) saves. Loopback
only; bounded in requests and time. The index folder is removed first (--keep-index keeps it).

    python3 scripts/bench-serve.py [--evals N | --results FILE] [--niceeval target/release/niceeval]
"""
import argparse, fcntl, json, os, shutil, subprocess, sys, tempfile, time, urllib.parse, urllib.request

p = argparse.ArgumentParser()
p.add_argument("--evals", type=int, default=1_000_000)
p.add_argument("--niceeval", default="target/release/niceeval")
p.add_argument("--dir", default=None, help="where to write the results (kept)")
p.add_argument("--results", default=None, help="a results file to serve (not written)")
p.add_argument("--keep-index", action="store_true", help="start with the index kept beside the file")
p.add_argument("--chromium", default="/usr/bin/chromium", help="headless Chromium for the page's own timing ('' to skip)")
a = p.parse_args()

if a.results:
    path = a.results
    d = os.path.dirname(os.path.abspath(path))
    a.evals = sum(1 for _ in open(path, "rb"))
else:
    d = a.dir or tempfile.mkdtemp(prefix="niceeval-bench-serve-")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "evals.jsonl")
if not a.keep_index:
    shutil.rmtree(os.path.join(d, ".niceeval-index"), ignore_errors=True)
if not a.results and (not os.path.exists(path) or sum(1 for _ in open(path)) != a.evals):
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

def page_ready(url):
    """The served page opened in headless Chromium (DevTools over a pipe, as tests/chromium.rs
    drives it) at 1400x900: its own `data-ready` (performance.now() when the summary and the
    first rows are painted, from navigation start), after the server has read the file."""
    if not a.chromium or not os.path.exists(a.chromium):
        return None
    profile = tempfile.mkdtemp(prefix="niceeval-bench-chromium-")
    commands_r, commands_w = os.pipe()
    answers_r, answers_w = os.pipe()

    def fds():
        r = fcntl.fcntl(commands_r, fcntl.F_DUPFD, 10)
        w = fcntl.fcntl(answers_w, fcntl.F_DUPFD, 10)
        os.dup2(r, 3)
        os.dup2(w, 4)

    chrome = subprocess.Popen([a.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                               "--remote-debugging-pipe", "--window-size=1400,900", f"--user-data-dir={profile}"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              close_fds=False, preexec_fn=fds)
    os.close(commands_r)
    os.close(answers_w)
    answers = os.fdopen(answers_r, "rb")
    buffered = b""
    next_id = [0]

    def call(method, params, session=None):
        nonlocal buffered
        next_id[0] += 1
        message = {"id": next_id[0], "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(commands_w, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in buffered:
                chunk = answers.read1(1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed its pipe")
                buffered += chunk
            raw, buffered = buffered.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == next_id[0]:
                return answer.get("result", {})

    try:
        target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        call("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session)
        call("Page.navigate", {"url": url}, session)
        deadline = time.time() + 60
        while time.time() < deadline:
            value = call("Runtime.evaluate", {"expression": "document.body && [document.body.dataset.ready, document.querySelectorAll('#rows .row[data-id]').length]", "returnByValue": True}, session)
            ready = value.get("result", {}).get("value")
            if ready and ready[0]:
                return float(ready[0]), ready[1]
            time.sleep(0.02)
        return None
    finally:
        chrome.kill()
        chrome.wait()
        shutil.rmtree(profile, ignore_errors=True)


def serve(label, measure):
    start = time.time()
    proc = subprocess.Popen([a.niceeval, "view", "--no-open", path], stdout=subprocess.PIPE, text=True,
                            env={k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")})
    try:
        url = proc.stdout.readline().strip().split("serving ", 1)[1]
        base, token = url.split("/?token=")

        def get(q, raw=False):
            t = time.time()
            body = urllib.request.urlopen(f"{base}{q}{'&' if '?' in q else '?'}token={token}", timeout=120).read()
            return (time.time() - t) * 1000, (body if raw else json.loads(body))

        print(f"== {label}")
        ms, first = get("/api/rows?limit=100")
        print(f"first rows: {(time.time() - start) * 1000:.0f} ms from start ({first['total']} evals indexed so far; the request {ms:.0f} ms)")
        # What the served page asks first, in its order: the page, the status, the first window.
        t = time.time()
        page_ms, page = get("/", raw=True)
        status_ms, _ = get("/api/status")
        rows_ms, _ = get("/api/rows?sort=name&offset=0&limit=400")
        print(f"the page's first requests: {(time.time() - t) * 1000:.0f} ms (page {len(page) / 1024:.0f} KB {page_ms:.0f} ms, status {status_ms:.0f} ms, first 400 rows by name {rows_ms:.0f} ms)")
        while get("/api/status")[1]["evals"] < a.evals and time.time() - start < 600:
            time.sleep(0.05)
        status = get("/api/status")[1]
        print(f"whole file indexed: {(time.time() - start) * 1000:.0f} ms from start ({status['read']['from_index']} rows from the index kept beside the file, {status['read']['from_records']} from records)")
        for _ in range(3 if measure else 0):
            ready = page_ready(url)
            if ready:
                print(f"the served page in headless Chromium: summary and first rows painted at {ready[0]:.0f} ms ({ready[1]} rows drawn)")
        if measure:
            for q in ["outcome=failed", "outcome=skipped", "q=q99999", "tag=refund", "dataset=dataset::cases",
                      "sort=name", "sort=id", "sort=-score", "sort=cost", "sort=-duration", "sort=tokens", "sort=outcome",
                      "outcome=failed&sort=-duration"]:
                times = [get(f"/api/rows?{q}&limit=100")[0] for _ in range(3)]
                print(f"{q}: {min(times):.0f} ms (best of 3; {get(f'/api/rows?{q}&limit=1')[1]['total']} rows)")
            for q in ["", "outcome=failed"]:
                times = [get("/api/distributions" + (f"?{q}" if q else ""))[0] for _ in range(3)]
                print(f"distributions {q or '(all)'}: {min(times):.0f} ms (best of 3)")
            some = get(f"/api/rows?offset={a.evals // 2}&limit=1")[1]["rows"][0]["id"]
            ms, _ = get(f"/api/eval?id={urllib.parse.quote(some)}")
            print(f"one eval's record: {ms:.1f} ms")
            times = [get("/api/status")[0] for _ in range(3)]
            print(f"status: {min(times):.1f} ms (best of 3)")
        status = open(f"/proc/{proc.pid}/status").read()
        hwm = [l for l in status.splitlines() if l.startswith("VmHWM")][0].split()[1]
        print(f"server peak RSS: {int(hwm) / 1024:.0f} MB")
    finally:
        proc.terminate()
        proc.wait()


serve("first start (no index kept)" if not a.keep_index else "start", True)
serve("started again (the index kept beside the file)", False)
size = sum(os.path.getsize(os.path.join(d, ".niceeval-index", f)) for f in os.listdir(os.path.join(d, ".niceeval-index")))
print(f"index kept beside the file: {size / 1e6:.0f} MB")
