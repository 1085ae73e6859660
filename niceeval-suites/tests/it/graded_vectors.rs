//! The vectors of promptfoo's model-graded types (`llm-rubric`, `factuality`, the retrieval
//! metrics, `similar`, …) run end to end: each becomes a one-test promptfoo file whose
//! provider and grader are a loopback fake of the OpenAI API. The fake answers the provider
//! with the vector's output and each grader call with the next of the replies promptfoo's
//! test mocked (`grader_replies`), and `/embeddings` with the vectors it mocked
//! (`embeddings`, `"*"` for any other text). The file runs through
//! [`niceeval_suites::run_files`]; the case's report is the verdict.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, OnceLock};

use niceeval::__workspace::harness::Args;
use niceeval::reporter::Reporter;
use niceeval::spec::SpecOutcome;
use niceeval::{EvalReport, Outcome};
use serde_json::{Value, json};

/// What the fake answers for the vector being run.
#[derive(Default)]
struct Script {
    output: String,
    replies: VecDeque<String>,
    embeddings: serde_json::Map<String, Value>,
    /// A service's reply (status, JSON body) to any request that is no chat or embedding.
    service: Option<(u16, Value)>,
}

/// The one fake of the test binary: its address and the script it plays.
struct Fake {
    url: String,
    script: Arc<Mutex<Script>>,
}

fn fake() -> &'static Fake {
    static FAKE: OnceLock<Fake> = OnceLock::new();
    FAKE.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let url = format!("http://{}/v1", listener.local_addr().expect("an address"));
        let script = Arc::new(Mutex::new(Script::default()));
        let shared = script.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let script = shared.clone();
                std::thread::spawn(move || serve(stream, &script));
            }
        });
        Fake { url, script }
    })
}

/// One request: read it, answer it, close.
fn serve(stream: TcpStream, script: &Mutex<Script>) {
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
    let (status, reply) = answer(&path, &request, script);
    let text = reply.to_string();
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    );
}

fn answer(path: &str, request: &Value, script: &Mutex<Script>) -> (String, Value) {
    let mut script = script.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((status, body)) = &script.service
        && !path.ends_with("/chat/completions")
        && !path.ends_with("/embeddings")
    {
        return (format!("{status} Reply"), body.clone());
    }
    if path.ends_with("/embeddings") {
        let input = match &request["input"] {
            Value::Array(items) => items.first().and_then(Value::as_str).unwrap_or(""),
            other => other.as_str().unwrap_or(""),
        };
        let vector = script
            .embeddings
            .get(input)
            .or_else(|| script.embeddings.get("*"))
            .cloned();
        return match vector {
            Some(v) => (
                "200 OK".to_string(),
                json!({"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": v}],
                       "model": "emb", "usage": {"prompt_tokens": 1, "total_tokens": 1}}),
            ),
            None => (
                "500 Internal Server Error".to_string(),
                json!({"error": {"message": "no embedding"}}),
            ),
        };
    }
    let model = request["model"].as_str().unwrap_or("");
    let text = if model == "agent" {
        Some(script.output.clone())
    } else {
        script.replies.pop_front()
    };
    match text {
        Some(text) => (
            "200 OK".to_string(),
            json!({"id": "fake", "object": "chat.completion", "created": 0, "model": model,
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}),
        ),
        None => (
            "500 Internal Server Error".to_string(),
            json!({"error": {"message": "the test mocked no further grader reply"}}),
        ),
    }
}

/// Serves `reply` (a vector's `service_reply`: `{status, body}`, or `classifier`'s mocked
/// `{classification: {label: score}}` as HuggingFace's wire format) to the service items of
/// the vector run meanwhile; the fake's base URL. The guard ends the script.
pub(crate) fn service(reply: &Value) -> (String, std::sync::MutexGuard<'static, ()>) {
    let one = ONE.lock().unwrap_or_else(|p| p.into_inner());
    let fake = fake();
    let (status, body) = match reply.get("classification").and_then(Value::as_object) {
        Some(scores) => (
            200,
            Value::Array(vec![Value::Array(
                scores
                    .iter()
                    .map(|(label, score)| json!({"label": label, "score": score}))
                    .collect(),
            )]),
        ),
        None => (
            reply.get("status").and_then(Value::as_u64).unwrap_or(200) as u16,
            reply.get("body").cloned().unwrap_or(Value::Null),
        ),
    };
    fake.script
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .service = Some((status, body));
    (fake.url.clone(), one)
}

/// Ends a service script.
pub(crate) fn end_service() {
    fake()
        .script
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .service = None;
}

/// One vector at a time: the fake plays one script.
static ONE: Mutex<()> = Mutex::new(());

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

/// Whether promptfoo would read `text` as a path (a one-line prompt with `/`, `\`, `*` or a
/// dot near its end): such a prompt gets a second line.
fn looks_like_path(text: &str) -> bool {
    let n = text.chars().count();
    let dot_near_end = text
        .chars()
        .enumerate()
        .any(|(i, c)| c == '.' && (i + 3 == n || i + 4 == n));
    !text.contains('\n') && (text.contains(['/', '\\', '*']) || dot_near_end || text.contains(':'))
}

/// Runs one graded vector: `Ok` with the case's outcome, `Err` with its error (a load error
/// or the case's execution error).
pub(crate) fn run(vector: &Value) -> Result<SpecOutcome, String> {
    let _one = ONE.lock().unwrap_or_else(|p| p.into_inner());
    let fake = fake();
    let connection = json!({"apiBaseUrl": fake.url, "apiKey": "test-key"});
    {
        let mut script = fake.script.lock().unwrap_or_else(|p| p.into_inner());
        script.output = match &vector["output"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        script.replies = vector["grader_replies"]
            .as_array()
            .map(|r| {
                r.iter()
                    .map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        script.embeddings = vector["embeddings"]
            .as_object()
            .cloned()
            .unwrap_or_default();
    }
    let context = &vector["context"];
    let mut prompt = context["prompt"]
        .as_str()
        .unwrap_or("Some prompt")
        .to_string();
    if looks_like_path(&prompt) {
        prompt.push('\n');
    }
    let grader = json!({"id": "openai:chat:grader", "config": connection});
    let mut items = match &vector["assert"] {
        Value::Array(items) => items.clone(),
        item => vec![item.clone()],
    };
    for item in &mut items {
        if let Some(map) = item.as_object_mut()
            && map.contains_key("provider")
        {
            map.insert("provider".into(), grader.clone());
        }
    }
    let mut test = json!({"assert": items});
    if let Some(vars) = context.get("vars").filter(|v| v.is_object()) {
        test["vars"] = vars.clone();
    }
    if let Some(threshold) = vector.get("test_threshold") {
        test["threshold"] = threshold.clone();
    }
    let config = json!({
        "prompts": [prompt],
        "providers": [{"id": "openai:chat:agent", "config": connection}],
        "defaultTest": {"options": {"provider": {
            "text": grader,
            "embedding": {"id": "openai:embedding:emb", "config": connection},
        }}},
        "tests": [test],
    });
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = dir.path().join("promptfooconfig.yaml");
    std::fs::write(
        &file,
        serde_json::to_string_pretty(&config).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    // No judge cache: two vectors asking the same question expect different mocked replies
    // (a cache in a target directory shared by earlier runs would answer with another's).
    std::fs::write(
        dir.path().join("niceeval.toml"),
        "[judge]\ncache = \"off\"\n",
    )
    .map_err(|e| e.to_string())?;
    let reports = Arc::new(Mutex::new(Vec::new()));
    let mut args = Args::default();
    args.quiet = true;
    args.concurrency = Some(1);
    let code = niceeval_suites::run_files(
        &[file],
        "vector",
        dir.path(),
        args,
        Vec::new(),
        vec![Box::new(Collect(reports.clone()))],
    );
    let reports = reports.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let Some(report) = reports.into_iter().next() else {
        return Err(format!("the file did not load (exit {code})"));
    };
    if let Some(error) = &report.error {
        return Err(format!("{error:?}"));
    }
    Ok(SpecOutcome {
        pass: report.outcome == Outcome::Passed,
        score: report.score.unwrap_or(0.0),
        named_scores: report.metrics.clone(),
        results: report.assertions.clone(),
    })
}
