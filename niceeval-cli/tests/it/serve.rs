//! `niceeval view`'s server over plain HTTP: every request without the token it printed
//! (page, API, anything) is refused with 403, a parameter that could name a path with 400;
//! rows page, filter and sort on the server; an eval's record comes by id; the run history's
//! trends come by eval id; and a record appended to a results file shows in the server's
//! status within a second (live).

use std::io::{BufRead as _, Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../../../tests/synthetic.rs"]
#[allow(dead_code)]
mod synthetic;

/// The server, stopped when dropped.
struct Server {
    child: Child,
    port: u16,
    token: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(dir: &Path, args: &[&str]) -> Server {
        Server::start_with(dir, args, &[])
    }

    fn start_with(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_niceeval"))
            .envs(env.iter().map(|(k, v)| (k, v)))
            .arg("view")
            .arg("--no-open")
            .args(args)
            .current_dir(dir)
            .env("NO_COLOR", "1")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .stdout(Stdio::piped())
            .spawn()
            .expect("the niceeval binary runs");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("the server prints its URL");
        let url = line
            .trim()
            .strip_prefix("niceeval view: serving http://127.0.0.1:")
            .unwrap_or_else(|| panic!("printed {line:?}"))
            .to_string();
        let (port, token) = url.split_once("/?token=").expect("a token in the URL");
        assert_eq!(token.len(), 64, "32 random bytes, hex: {token}");
        Server {
            child,
            port: port.parse().expect("a port"),
            token: token.to_string(),
        }
    }

    /// `GET target`: the status and the body.
    fn get(&self, target: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("the server listens");
        write!(
            stream,
            "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        .expect("request sent");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("a response");
        let status = response
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let body = response
            .split_once("\r\n\r\n")
            .map_or(String::new(), |(_, b)| b.to_string());
        (status, body)
    }

    fn json(&self, target: &str) -> serde_json::Value {
        let (status, body) = self.get(target);
        assert_eq!(status, 200, "{target}: {body}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{target}: {e}: {body}"))
    }
}

fn results(dir: &Path, cases: std::ops::Range<usize>) -> std::path::PathBuf {
    let results = dir.join("results");
    std::fs::create_dir_all(&results).expect("results directory");
    let lines: String = cases.map(|i| format!("{}\n", synthetic::case(i))).collect();
    std::fs::write(results.join("evals.jsonl"), lines).expect("results file");
    results
}

#[test]
fn every_request_needs_the_token_and_none_names_a_path() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    results(dir.path(), 0..20);
    std::fs::write(dir.path().join("secret.txt"), "not for the page").expect("a file");
    let server = Server::start(dir.path(), &["results"]);
    let wrong = "0".repeat(64);
    for target in [
        "/".to_string(),
        "/index.html".to_string(),
        "/api/status".to_string(),
        "/api/rows".to_string(),
        "/api/eval?id=x".to_string(),
        "/viewer.js".to_string(),
        "/secret.txt".to_string(),
        format!("/?token={wrong}"),
        format!("/api/rows?token={wrong}"),
        format!("/api/eval?token={wrong}&id=x"),
        format!("/?token={}", &server.token[..63]),
        format!("/../secret.txt?token={wrong}"),
    ] {
        let (status, body) = server.get(&target);
        assert_eq!(status, 403, "{target}: {body}");
        assert!(!body.contains("not for the page"));
    }
    let t = &server.token;
    for target in [
        format!("/api/eval?token={t}&path=../secret.txt"),
        format!("/api/rows?token={t}&file=secret.txt"),
        format!("/?token={t}&path=%2Fetc%2Fpasswd"),
    ] {
        let (status, body) = server.get(&target);
        assert_eq!(status, 400, "{target}: {body}");
    }
    for target in [
        format!("/secret.txt?token={t}"),
        format!("/../secret.txt?token={t}"),
        format!("/api/eval?token={t}&id=..%2Fsecret.txt"),
    ] {
        let (status, body) = server.get(&target);
        assert_eq!(status, 404, "{target}: {body}");
        assert!(!body.contains("not for the page"));
    }
    // With the token: the page (the viewer, allowed to ask its own server only), with no
    // data of its own: it asks the API for it.
    let (status, page) = server.get(&format!("/?token={t}"));
    assert_eq!(status, 200);
    assert!(page.contains("connect-src 'self'"), "{}", &page[..400]);
    assert!(
        page.contains(
            "<script type=\"application/json\" id=\"source\">{\"api\":\"/api/\"}</script>"
        )
    );
    assert!(!page.contains("id=\"rows-data\""));
    assert!(!page.contains("case_000001"), "no row is inline");
    assert!(
        page.contains("function server(config)"),
        "the viewer's script"
    );
}

#[test]
fn rows_filter_sort_and_page_on_the_server_and_records_come_by_id() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    results(dir.path(), 0..100);
    let server = Server::start(dir.path(), &["results"]);
    let t = &server.token;
    let all = server.json(&format!("/api/rows?token={t}&limit=10&sort=id"));
    assert_eq!(all["total"], 100);
    assert_eq!(all["rows"].as_array().unwrap().len(), 10);
    assert_eq!(all["counts"]["skipped"], 2, "{all}");
    assert_eq!(all["counts"]["failed"], 10, "{all}");
    let id0 = format!("{}::case_000000", synthetic::DATASET);
    assert_eq!(all["rows"][0]["id"], id0.as_str());
    let failed = server.json(&format!("/api/rows?token={t}&outcome=failed&limit=1000"));
    assert_eq!(failed["total"], 10);
    assert!(
        failed["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["status"] == "failed")
    );
    let text = server.json(&format!("/api/rows?token={t}&q=CASE_00009"));
    assert_eq!(text["total"], 10, "case_000090..99");
    // Between slashes, a regular expression over ids (case-insensitive, as the page's box).
    let pattern = server.json(&format!(
        "/api/rows?token={t}&q=%2FCASE_0000%5B0-4%5D7%24%2F"
    ));
    assert_eq!(
        pattern["total"], 5,
        "case_000007, 17, 27, 37, 47: {pattern}"
    );
    // The distributions of what a filter keeps, binned on the server.
    let failed_plots = server.json(&format!("/api/distributions?token={t}&outcome=failed"));
    assert_eq!(failed_plots["evals"], 10, "{failed_plots}");
    for field in ["score", "duration", "cost", "tokens"] {
        let d = &failed_plots[field];
        let counted: u64 = d["counts"]
            .as_array()
            .map_or(0, |c| c.iter().filter_map(|x| x.as_u64()).sum());
        assert_eq!(
            counted + d["zeros"].as_u64().unwrap_or(0),
            d["n"].as_u64().unwrap_or(u64::MAX),
            "{field}: {d}"
        );
    }
    let (status, _) = server.get(&format!("/api/distributions?token={t}&sort=name"));
    assert_eq!(status, 400, "the distributions take filters only");
    let tag = server.json(&format!("/api/rows?token={t}&tag=refund"));
    assert_eq!(tag["total"], 34);
    let none = server.json(&format!("/api/rows?token={t}&dataset=nothing"));
    assert_eq!(none["total"], 0);
    let slow = server.json(&format!("/api/rows?token={t}&sort=-duration&limit=100"));
    let durations: Vec<f64> = slow["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["duration_ms"].as_f64().unwrap())
        .collect();
    assert!(durations.windows(2).all(|w| w[0] >= w[1]), "{durations:?}");
    let page2 = server.json(&format!("/api/rows?token={t}&offset=95&limit=10"));
    assert_eq!(page2["rows"].as_array().unwrap().len(), 5);
    let record = server.json(&format!(
        "/api/eval?token={t}&id={}",
        id0.replace(':', "%3A")
    ));
    assert_eq!(record, synthetic::case(0));
}

#[test]
fn a_record_appended_shows_within_a_second() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let results = results(dir.path(), 0..3);
    std::fs::write(
        results.join("evals.manifest.json"),
        serde_json::json!({"schema": 1, "niceeval": "0", "target": "evals", "run": "r",
            "commit": null, "config_hash": "", "shard": null,
            "evals": (0..6).map(|i| format!("{}::case_{i:06}", synthetic::DATASET)).collect::<Vec<_>>()})
        .to_string(),
    )
    .expect("a manifest");
    let server = Server::start(dir.path(), &[]);
    let t = server.token.clone();
    // Without PATH it reads target/niceeval/results: nothing there.
    let status = server.json(&format!("/api/status?token={t}"));
    assert_eq!(status["evals"], 0);
    drop(server);
    let server = Server::start(dir.path(), &["results"]);
    let t = server.token.clone();
    let status = server.json(&format!("/api/status?token={t}"));
    assert_eq!(status["evals"], 3);
    assert_eq!(status["expected"], 6);
    for i in 3..6 {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(results.join("evals.jsonl"))
            .expect("the results file");
        writeln!(file, "{}", synthetic::case(i)).expect("a record appended");
        drop(file);
        let written = Instant::now();
        loop {
            let status = server.json(&format!("/api/status?token={t}"));
            if status["evals"] == i + 1 {
                break;
            }
            assert!(
                written.elapsed() < Duration::from_secs(1),
                "eval {i} not shown after 1 s: {status}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    // The rows too.
    let rows = server.json(&format!("/api/rows?token={t}&sort=name"));
    assert_eq!(rows["total"], 6);
    assert_eq!(
        rows["rows"][5]["id"],
        format!("{}::case_000005", synthetic::DATASET)
    );
    // A compacted file (shorter) is read again.
    std::fs::write(
        results.join("evals.jsonl"),
        format!("{}\n", synthetic::case(1)),
    )
    .expect("compacted");
    let started = Instant::now();
    while server.json(&format!("/api/status?token={t}"))["evals"] != 1 {
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the compacted file is read again"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // So is one renamed over it, even a longer one (another run's, compacted).
    let lines: String = (10..14)
        .map(|i| format!("{}\n", synthetic::case(i)))
        .collect();
    std::fs::write(dir.path().join("new.jsonl"), lines).expect("another file");
    std::fs::rename(dir.path().join("new.jsonl"), results.join("evals.jsonl"))
        .expect("renamed over");
    let started = Instant::now();
    while server.json(&format!("/api/status?token={t}"))["evals"] != 4 {
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the replaced file is read again"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let rows = server.json(&format!("/api/rows?token={t}&q=case_000001"));
    assert_eq!(rows["total"], 0, "the earlier file's rows are gone: {rows}");
}

/// Waits until the server has read `evals` evals.
fn indexed(server: &Server, evals: usize) -> serde_json::Value {
    let started = Instant::now();
    loop {
        let status = server.json(&format!("/api/status?token={}", server.token));
        if status["evals"] == evals {
            return status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{evals} evals never read: {status}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The ids and statuses of every row, by id.
fn every_row(server: &Server) -> Vec<(String, String)> {
    let rows = server.json(&format!(
        "/api/rows?token={}&sort=id&limit=10000",
        server.token
    ));
    rows["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["id"].as_str().expect("an id").to_string(),
                r["status"].as_str().expect("a status").to_string(),
            )
        })
        .collect()
}

#[test]
fn the_index_kept_beside_the_file_is_read_again_and_never_gives_stale_rows() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let results = results(dir.path(), 0..20);
    let file = results.join("evals.jsonl");
    let server = Server::start(dir.path(), &["results"]);
    let status = indexed(&server, 20);
    assert_eq!(status["read"]["from_records"], 20, "{status}");
    let first = every_row(&server);
    drop(server);
    let kept = results.join(".niceeval-index/evals.jsonl.idx");
    assert!(kept.is_file(), "the index is kept beside the file");

    // Started again: the rows come from the index, not the records.
    let server = Server::start(dir.path(), &["results"]);
    let status = indexed(&server, 20);
    assert_eq!(
        (
            &status["read"]["from_index"],
            &status["read"]["from_records"]
        ),
        (&20.into(), &0.into()),
        "{status}"
    );
    assert_eq!(every_row(&server), first);
    drop(server);

    // Grown while no server ran: the index, then only the new records.
    let mut appended = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .expect("the results file");
    for i in 20..23 {
        writeln!(appended, "{}", synthetic::case(i)).expect("a record appended");
    }
    drop(appended);
    let server = Server::start(dir.path(), &["results"]);
    let status = indexed(&server, 23);
    assert_eq!(
        (
            &status["read"]["from_index"],
            &status["read"]["from_records"]
        ),
        (&20.into(), &3.into()),
        "{status}"
    );
    drop(server);

    // Rewritten in place to the same length with other outcomes ("passed" and "failed" are
    // as long): the index no longer describes it, and the rows are the file's.
    let text = std::fs::read_to_string(&file).expect("the results file");
    let flipped = text
        .replace("\"outcome\":\"passed\"", "\"outcome\":\"FAILED\"")
        .replace("\"outcome\":\"failed\"", "\"outcome\":\"passed\"")
        .replace("\"outcome\":\"FAILED\"", "\"outcome\":\"failed\"");
    assert_eq!(flipped.len(), text.len());
    assert_ne!(flipped, text);
    std::fs::write(&file, &flipped).expect("rewritten in place");
    let server = Server::start(dir.path(), &["results"]);
    let status = indexed(&server, 23);
    assert_eq!(status["read"]["from_index"], 0, "{status}");
    let now = every_row(&server);
    let expected: Vec<(String, String)> = flipped
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a record");
            let status = match (
                v["outcome"].as_str(),
                v["error"].is_null(),
                v["below_threshold"] == true,
            ) {
                (Some("failed"), false, _) => "error",
                (Some("passed"), _, true) => "below",
                (Some(o), _, _) => o,
                _ => "",
            };
            (
                v["id"].as_str().expect("an id").to_string(),
                status.to_string(),
            )
        })
        .collect();
    let mut expected = expected;
    expected.sort();
    assert_eq!(now, expected);
    assert_ne!(now[..20], first[..], "the outcomes changed");
    drop(server);

    // Another file of the same length renamed over it: the same.
    let other: String = text
        .lines()
        .map(|l| format!("{}\n", l.replace("case_0000", "case_9999")))
        .collect();
    assert_eq!(other.len(), text.len());
    std::fs::write(dir.path().join("other.jsonl"), &other).expect("another file");
    std::fs::rename(dir.path().join("other.jsonl"), &file).expect("renamed over");
    let server = Server::start(dir.path(), &["results"]);
    indexed(&server, 23);
    let rows = every_row(&server);
    assert!(
        rows.iter().all(|(id, _)| id.contains("case_9999")),
        "{rows:?}"
    );
    drop(server);
    // And started once more on it: from its new index.
    let server = Server::start(dir.path(), &["results"]);
    let status = indexed(&server, 23);
    assert_eq!(status["read"]["from_index"], 23, "{status}");
    assert_eq!(every_row(&server), rows);
}

/// `/api/history`: the trends of the history `niceeval eval` recorded (three runs of a suite
/// file), a suite's and an eval's by id, as many runs as asked; a parameter that is not an
/// eval id or a number is refused, and so is a request without the token.
#[test]
fn the_history_comes_by_eval_id_and_no_parameter_names_a_file() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(
        dir.path().join("promptfooconfig.yaml"),
        "prompts: ['{{q}}']\nproviders: [echo]\ntests:\n  - vars: {q: a refund please}\n    assert:\n      - type: contains\n        value: refund\n",
    )
    .expect("a suite file");
    let history = dir.path().join("kept/history.sqlite");
    for _ in 0..3 {
        let out = Command::new(env!("CARGO_BIN_EXE_niceeval"))
            .args(["eval", "-c", "promptfooconfig.yaml"])
            .current_dir(dir.path())
            .env("NICEEVAL_HISTORY", &history)
            .env("NO_COLOR", "1")
            .output()
            .expect("the niceeval binary runs");
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(history.is_file(), "the runs were recorded");
    let server = Server::start_with(dir.path(), &[], &[("NICEEVAL_HISTORY", &history)]);
    let t = &server.token;
    let suites = server.json(&format!("/api/history?token={t}"));
    assert_eq!(suites["runs"].as_array().map(Vec::len), Some(3), "{suites}");
    let targets = suites["suites"].as_object().expect("suites");
    assert_eq!(targets.len(), 1, "{suites}");
    let (target, points) = targets.iter().next().expect("a target");
    assert_eq!(points.as_array().map(Vec::len), Some(3), "{suites}");
    // [run#, passed, failed, skipped, …], runs oldest first.
    assert_eq!(points[2][0], 2);
    assert_eq!((&points[2][1], &points[2][2]), (&1.into(), &0.into()));
    assert_eq!(suites["evals"], serde_json::json!({}));

    let rows = server.json(&format!("/api/rows?token={t}"));
    let id = rows["rows"][0]["id"].as_str().expect("an eval").to_string();
    let query = id
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect::<String>();
    let trend = server.json(&format!("/api/history?token={t}&eval={query}"));
    let points = trend["evals"][&id].as_array().expect("the eval's trend");
    assert_eq!(points.len(), 3, "{trend}");
    assert!(
        points.iter().all(|p| p[1] == 0),
        "passed each time: {trend}"
    );
    // Its suite's trend too: the target it was recorded under (`niceeval eval`'s own, not
    // its id's first part).
    assert_eq!(
        trend["suites"][target].as_array().map(Vec::len),
        Some(3),
        "{id} of {target}: {trend}"
    );
    let last = server.json(&format!("/api/history?token={t}&eval={query}&last=2"));
    assert_eq!(last["evals"][&id].as_array().map(Vec::len), Some(2));
    let unknown = server.json(&format!("/api/history?token={t}&eval=nothing"));
    assert_eq!(unknown["evals"], serde_json::json!({}));

    for target in [
        format!("/api/history?token={t}&path=kept%2Fhistory.sqlite"),
        format!("/api/history?token={t}&file=history.sqlite"),
        format!("/api/history?token={t}&last=0"),
        format!("/api/history?token={t}&last=../x"),
    ] {
        let (status, body) = server.get(&target);
        assert_eq!(status, 400, "{target}: {body}");
    }
    let (status, body) = server.get("/api/history");
    assert_eq!(status, 403, "{body}");
    let (status, body) = server.get(&format!(
        "/api/history?token={}&eval={query}",
        "0".repeat(64)
    ));
    assert_eq!(status, 403, "{body}");
    drop(server);
    // No history: said, not an empty answer.
    let server = Server::start_with(dir.path(), &[], &[("NICEEVAL_HISTORY", Path::new("off"))]);
    let (status, body) = server.get(&format!("/api/history?token={}", server.token));
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("no history"), "{body}");
}
