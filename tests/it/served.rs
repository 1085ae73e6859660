//! `niceeval view`'s server (the `niceeval` command built with the fixtures, feature `serve`)
//! with its page in headless Chromium: a real suite running beside it shows in the page as it
//! goes — each eval within a second of finishing, a progress bar, what is running and for how
//! long —, every request without the token is refused and none names a path, and the served
//! page fits 1400×900 as the one-file page does (the geometry of `views`).

use std::io::{BufRead as _, Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use niceeval_tests::chromium::{Browser, Tab};
use niceeval_tests::fixture::Fixtures;
use niceeval_tests::synthetic;

/// The viewport the served page is checked at.
const SIZE: (u32, u32) = (1400, 900);

/// `niceeval view` serving `results`, stopped when dropped.
pub(super) struct Server {
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
    /// Without a history: the command, built in the fixtures' target directory, would find
    /// the history the fixtures' other runs recorded there.
    fn start(dir: &Path, results: &Path) -> Server {
        Server::start_with(dir, results, &[("NICEEVAL_HISTORY", Path::new("off"))])
    }

    /// [`Server::start`] with `env` set (`NICEEVAL_HISTORY`: the history it serves).
    pub(super) fn start_with(dir: &Path, results: &Path, env: &[(&str, &Path)]) -> Server {
        let mut command = Command::new(Fixtures::get().niceeval_cli());
        niceeval_tests::child::clean_env(&mut command);
        command.envs(env.iter().copied());
        let mut child = command
            .args(["view", "--no-open"])
            .arg(results)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the niceeval command runs");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("the server prints its URL");
        let rest = line
            .trim()
            .strip_prefix("niceeval view: serving http://127.0.0.1:")
            .unwrap_or_else(|| panic!("printed {line:?}"));
        let (port, token) = rest.split_once("/?token=").expect("a token in the URL");
        Server {
            child,
            port: port.parse().expect("a port"),
            token: token.to_string(),
        }
    }

    pub(super) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/?token={}", self.port, self.token)
    }

    /// `GET target` as raw HTTP/1.1: the status and the body.
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
}

/// Opens the served page at [`SIZE`] and waits until it is painted.
fn open(browser: &mut Browser, server: &Server, hash: &str) -> Tab {
    let tab = browser.open_sized(&format!("{}{hash}", server.url()), Some(SIZE));
    browser.wait_for(&tab, "document.body && document.body.dataset.ready");
    tab
}

fn quiet(browser: &Browser) {
    assert!(
        browser.console.is_empty(),
        "the page logged:\n{}",
        browser.console.join("\n")
    );
}

/// Records in the page, for each eval, when its row first appeared in the list
/// (`window.seen[id]`, milliseconds since the epoch).
const WATCH_ROWS: &str = r##"(() => {
  window.seen = {};
  const note = () => {
    for (const row of document.querySelectorAll("#rows .row[data-id]")) {
      if (!(row.dataset.id in window.seen)) window.seen[row.dataset.id] = Date.now();
    }
  };
  new MutationObserver(note).observe(document.getElementById("rows"), { childList: true, subtree: true });
  note();
  return true;
})()"##;

#[test]
fn a_running_suite_shows_in_the_page_as_each_eval_finishes() {
    let Some(mut browser) = Browser::launch() else {
        return;
    };
    let fixtures = Fixtures::get();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let results = dir.path().join("results");
    std::fs::create_dir_all(&results).expect("the results directory");
    let server = Server::start(dir.path(), &results);
    let tab = open(&mut browser, &server, "");
    assert_eq!(browser.eval(&tab, "document.body.dataset.shown"), "0");
    browser.eval(&tab, WATCH_ROWS);

    // Twelve evals of 1.5 s, three at a time (the fixture's concurrency), and one with a
    // conversation: they finish over about six seconds.
    let mut suite = fixtures.command("suite", "suite", &["slow::", "smoke::greets"]);
    suite
        .env("FIXTURE_SLOW_MS", "1500")
        .env("NICEEVAL_RESULTS_DIR", &results)
        .env("NICEEVAL_HISTORY", "off");
    let running = niceeval_tests::child::spawn(&mut suite);

    // While it runs: a progress bar against the run's 13 evals, and the evals running now
    // with how long they have run, in the summary.
    browser.wait_for(&tab, "document.body.dataset.running > 0");
    let progress = browser.wait_for(
        &tab,
        "(() => { const p = document.getElementById('live-progress'); return !p.hidden && p.max === 13 && [p.value, p.max]; })()",
    );
    assert_eq!(progress[1], 13, "{progress}");
    let shown = browser.wait_for(
        &tab,
        "(() => { const rows = Array.from(document.querySelectorAll('#detail table.running tr.running'), (r) => [r.dataset.id, r.cells[1].textContent]); return rows.length && rows; })()",
    );
    let shown = shown.as_array().expect("rows");
    assert!(shown.len() <= 3, "three at a time: {shown:?}");
    for row in shown {
        let id = row[0].as_str().expect("an id");
        assert!(
            id.starts_with("suite::slow::e") || id == "suite::smoke::greets",
            "{id}"
        );
        let secs: f64 = row[1]
            .as_str()
            .and_then(|t| t.strip_suffix('s'))
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("a duration: {row}"));
        assert!((0.0..20.0).contains(&secs), "{row}");
    }
    let header = browser.eval(&tab, "document.querySelector('#top .totals').textContent");
    assert!(
        header.as_str().is_some_and(|t| t.contains(" running")),
        "{header}"
    );

    let output = running.wait(Duration::from_secs(120));
    assert_eq!(output.code(), Some(0), "{}", output.dump());
    browser.wait_for(&tab, "Object.keys(window.seen).length === 13");

    // Each eval's row appeared within a second of the time its record says it finished.
    let file = std::fs::read_dir(&results)
        .expect("the results directory")
        .map(|e| e.expect("an entry").path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("a results file");
    let finished: Vec<(String, String)> = std::fs::read_to_string(&file)
        .expect("the results file")
        .lines()
        .map(|l| {
            let record: serde_json::Value = serde_json::from_str(l).expect("a record");
            (
                record["id"].as_str().expect("an id").to_string(),
                record["finished"]
                    .as_str()
                    .expect("when it finished")
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(finished.len(), 13);
    let lags = browser.eval(
        &tab,
        &format!(
            "{}.map(([id, at]) => [id, window.seen[id] - Date.parse(at)])",
            serde_json::to_string(&finished).expect("JSON")
        ),
    );
    let lags: Vec<(String, f64)> = serde_json::from_value(lags).expect("lags");
    let late: Vec<&(String, f64)> = lags
        .iter()
        .filter(|(_, ms)| !(-50.0..1000.0).contains(ms))
        .collect();
    assert!(
        late.is_empty(),
        "not shown within 1 s of finishing: {late:?} (all: {lags:?})"
    );

    // The run is over: nothing running, the totals as they are.
    browser.wait_for(&tab, "document.body.dataset.running === '0'");
    let totals = browser.eval(&tab, "document.querySelector('#top .totals').textContent");
    assert!(
        totals
            .as_str()
            .is_some_and(|t| t.starts_with("13 passed0 failed0 skipped")),
        "{totals}"
    );
    assert_eq!(browser.eval(&tab, "document.body.dataset.shown"), "13");

    // A finished eval opens at once: its checks and its conversation.
    browser.eval(
        &tab,
        "document.querySelector('#rows .row[data-id=\"suite::smoke::greets\"]').click()",
    );
    browser.wait_for(
        &tab,
        "document.body.dataset.opened === 'suite::smoke::greets'",
    );
    let titles = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#detail section > h3'), (h) => h.textContent).filter((t) => t !== 'Across runs')",
    );
    // (With a run history where the server runs, its trend too: `plots`.)
    assert_eq!(titles, serde_json::json!(["Assertions", "Conversation"]));
    let reply = browser.eval(
        &tab,
        "document.querySelector('#detail .msg.assistant').textContent",
    );
    assert!(
        reply.as_str().is_some_and(|t| t.contains("echo: hello")),
        "{reply}"
    );
    // Every request the page made carried the token, to its own server.
    let requests = browser.eval(
        &tab,
        "performance.getEntriesByType('resource').map((e) => e.name)",
    );
    let requests: Vec<String> = serde_json::from_value(requests).expect("names");
    assert!(!requests.is_empty());
    for url in &requests {
        assert!(
            url.starts_with(&format!("http://127.0.0.1:{}/api/", server.port))
                && url.contains(&format!("token={}", server.token)),
            "{url}"
        );
    }
    quiet(&browser);
}

#[test]
fn every_request_needs_the_token_and_none_names_a_path() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let results = dir.path().join("results");
    std::fs::create_dir_all(&results).expect("the results directory");
    let lines: String = (0..5)
        .map(|i| format!("{}\n", synthetic::case(i)))
        .collect();
    std::fs::write(results.join("evals.jsonl"), lines).expect("a results file");
    std::fs::write(dir.path().join("secret.txt"), "not for the page").expect("a file");
    let server = Server::start(dir.path(), &results);
    let t = server.token.clone();
    let id = format!("{}::case_000001", synthetic::DATASET).replace(':', "%3A");
    let wrong = "f".repeat(64);
    // Without the token, or with a wrong one: 403, whatever is asked.
    for target in [
        "/".to_string(),
        "/api/status".to_string(),
        "/api/rows?limit=5".to_string(),
        format!("/api/eval?id={id}"),
        "/secret.txt".to_string(),
        "/../secret.txt".to_string(),
        "/%2e%2e/secret.txt".to_string(),
        format!("/?token={wrong}"),
        format!("/api/eval?token={wrong}&id={id}"),
        format!("/api/rows?token={}", &t[..32]),
        format!("/?token={t}x"),
        format!("/?TOKEN={t}"),
    ] {
        let (status, body) = server.get(&target);
        assert_eq!(status, 403, "{target}: {body}");
        assert!(!body.contains("not for the page") && !body.contains("case_000001"));
    }
    // With it, a path (or `..`) is named nowhere: not as a route, not as a parameter, not as
    // an eval id.
    for (target, expected) in [
        (format!("/secret.txt?token={t}"), 404),
        (format!("/../secret.txt?token={t}"), 404),
        (format!("/%2e%2e/secret.txt?token={t}"), 404),
        (format!("/results/evals.jsonl?token={t}"), 404),
        (format!("/api/eval?token={t}&id=..%2Fsecret.txt"), 404),
        (format!("/api/eval?token={t}&id=%2Fetc%2Fpasswd"), 404),
        (format!("/api/eval?token={t}&path=..%2Fsecret.txt"), 400),
        (format!("/api/rows?token={t}&file=..%2Fsecret.txt"), 400),
        (format!("/?token={t}&dir=%2Fetc"), 400),
    ] {
        let (status, body) = server.get(&target);
        assert_eq!(status, expected, "{target}: {body}");
        assert!(!body.contains("not for the page"), "{target}");
    }
    // With the token, the page and its data.
    let (status, page) = server.get(&format!("/?token={t}"));
    assert_eq!(status, 200);
    assert!(page.contains("connect-src 'self'"));
    let (status, record) = server.get(&format!("/api/eval?token={t}&id={id}"));
    assert_eq!(status, 200, "{record}");
    assert!(record.contains("case_000001"));
}

#[test]
fn the_served_page_fits_1400_by_900() {
    let Some(mut browser) = Browser::launch() else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let results = dir.path().join("results");
    std::fs::create_dir_all(&results).expect("the results directory");
    let mut lines = String::new();
    let rich = super::html::rich_report();
    lines.push_str(&serde_json::to_string(&rich).expect("JSON"));
    lines.push('\n');
    for i in 0..300 {
        lines.push_str(&synthetic::case(i).to_string());
        lines.push('\n');
    }
    std::fs::write(results.join("evals.jsonl"), lines).expect("a results file");
    // A run in progress (its file said so a moment ago, and for a minute yet): four evals
    // running, one of them with a long name.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as u64;
    std::fs::write(
        results.join("evals.running.json"),
        serde_json::json!({"schema": 1, "run": "r", "pid": 1, "started_ms": now - 90_000,
            "updated_ms": now + 60_000, "total": 400, "finished": 301,
            "running": [
                {"id": "evals::support_tickets::case_000301", "since_ms": now - 75_000},
                {"id": "suite::promptfooconfig::a refund request for an order that never arrived [prompt 2, anthropic:claude-3-5-haiku-latest]", "since_ms": now - 4_000},
                {"id": "evals::support_tickets::case_000302", "since_ms": now - 1_200},
                {"id": "evals::support_tickets::case_000303", "since_ms": now - 300},
            ]})
        .to_string(),
    )
    .expect("a running file");
    let server = Server::start(dir.path(), &results);
    let mut wrong = Vec::new();

    // The list and the summary, with what is running.
    let tab = open(&mut browser, &server, "");
    browser.wait_for(
        &tab,
        "document.querySelectorAll('#detail table.running tr.running').length === 4",
    );
    wrong.extend(super::views::geometry(&mut browser, &tab, "served list"));
    let first = browser.eval(
        &tab,
        "document.querySelector('#rows .row[data-id]').getBoundingClientRect().bottom",
    );
    assert!(first.as_f64().expect("a position") < 300.0, "{first}");
    assert_eq!(browser.eval(&tab, "document.body.dataset.shown"), "301");
    let progress = browser.eval(
        &tab,
        "(() => { const p = document.getElementById('live-progress'); return [p.value, p.max, p.getBoundingClientRect().width > 0]; })()",
    );
    assert_eq!(progress, serde_json::json!([301, 400, true]));
    // The distributions, binned by the server over what the filters keep (the page holds only
    // the rows in view): each figure's bars add up to its count of values.
    let figures = "Array.from(document.querySelectorAll('figure.dist'), (f) => [f.dataset.plot, +f.dataset.n, Array.from(f.querySelectorAll('rect.bar'), (b) => +b.dataset.count).reduce((a, b) => a + b, 0) + +(f.dataset.zeros || 0)])";
    browser.wait_for(&tab, "document.body.dataset.plots === '301'");
    let drawn = browser.eval(&tab, figures);
    let drawn = drawn.as_array().expect("a list of figures");
    let names: Vec<&str> = drawn.iter().filter_map(|f| f[0].as_str()).collect();
    assert_eq!(names, ["score", "duration", "cost", "tokens"], "{drawn:?}");
    for figure in drawn {
        let n = figure[1].as_u64().expect("a count");
        assert!(n > 250 && n <= 301, "{figure}: most evals have each value");
        assert_eq!(figure[1], figure[2], "{figure}: the bars hold every value");
    }
    super::views::photograph(&mut browser, &tab, "served");
    let ids = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#rows .row[data-id]'), (r) => r.dataset.id).slice(0, 3)",
    );
    assert_eq!(
        ids,
        serde_json::json!([
            "evals::capitals::paris",
            format!("{}::case_000000", synthetic::DATASET),
            format!("{}::case_000001", synthetic::DATASET),
        ]),
        "in name order"
    );

    // Scrolled to the end: the rows there are fetched.
    browser.eval(&tab, "document.getElementById('list').scrollTop = 1e6");
    browser.wait_for(
        &tab,
        &format!(
            "document.querySelector('#rows .row[data-id=\"{}::case_000299\"]')",
            synthetic::DATASET
        ),
    );

    // Filtered and sorted on the server, as the hash says.
    browser.eval(&tab, "location.hash = 'o=failed&sort=-duration'");
    browser.wait_for(&tab, "document.body.dataset.shown === '31'");
    // The distributions follow the filter.
    browser.wait_for(&tab, "document.body.dataset.plots === '31'");
    let durations = browser.eval(
        &tab,
        "Array.from(document.querySelectorAll('#rows .row[data-id] .v.time'), (c) => c.textContent)",
    );
    assert!(
        durations.as_array().is_some_and(|d| d.len() > 10),
        "{durations}"
    );
    wrong.extend(super::views::geometry(
        &mut browser,
        &tab,
        "served list, filtered",
    ));

    // An eval opened: its details (conversation, diff, spans) come from its record.
    let tab = open(&mut browser, &server, "#open=evals::capitals::paris");
    browser.wait_for(
        &tab,
        "document.body.dataset.opened === 'evals::capitals::paris'",
    );
    for section in ["assertions", "spans", "conversation"] {
        assert_eq!(
            browser.eval(
                &tab,
                &format!("document.querySelector('#detail section.{section}') !== null")
            ),
            true,
            "{section}"
        );
    }
    wrong.extend(super::views::geometry(&mut browser, &tab, "served eval"));
    browser.eval(
        &tab,
        "document.querySelector('#detail section.spans').scrollIntoView()",
    );
    wrong.extend(super::views::geometry(
        &mut browser,
        &tab,
        "served eval's spans",
    ));
    quiet(&browser);
    assert!(
        wrong.is_empty(),
        "at {}×{}:\n{}",
        SIZE.0,
        SIZE.1,
        wrong.join("\n")
    );
}
