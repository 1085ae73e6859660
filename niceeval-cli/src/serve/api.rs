//! The server's requests: the token first (403 without it), then the page (`/`), the run's
//! status (`/api/status`: totals, progress, what is running), a page of rows (`/api/rows`),
//! an eval's record (`/api/eval?id=`), the distributions of the evals a filter keeps
//! (`/api/distributions`, binned for the plots) and the run history's trends (`/api/history`, `?eval=`
//! an eval's, `&last=` how many runs). Parameters are eval ids, filters and numbers, never
//! paths: an unknown parameter is refused (400), so no request can name a file.

use std::sync::Arc;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response, StatusCode};

use super::State;
use super::index::{Query, STATUSES};

/// The policy of everything served: nothing from anywhere but the page itself, and requests
/// to its own server only.
pub(super) const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// How many of the running evals the status names (the longest running).
const RUNNING_SHOWN: usize = 50;

/// Answers one request.
pub(super) async fn handle<B>(
    state: Arc<State>,
    request: Request<B>,
) -> Result<Response<Full<Bytes>>, std::convert::Infallible> {
    Ok(answer(&state, request.method(), request.uri()).await)
}

async fn answer(
    state: &Arc<State>,
    method: &hyper::Method,
    uri: &hyper::Uri,
) -> Response<Full<Bytes>> {
    let params = parse_query(uri.query().unwrap_or(""));
    let token = params
        .iter()
        .find(|(k, _)| k == "token")
        .map(|(_, v)| v.as_str());
    if !token.is_some_and(|t| super::token::matches(t, &state.token)) {
        return plain(
            StatusCode::FORBIDDEN,
            "forbidden: this server answers requests that carry its token (the URL it printed)\n",
        );
    }
    if method != hyper::Method::GET && method != hyper::Method::HEAD {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "only GET\n");
    }
    let allowed: &[&str] = match uri.path() {
        "/" | "/index.html" | "/api/status" => &["token"],
        "/api/rows" => &[
            "token", "offset", "limit", "outcome", "q", "tag", "dataset", "sort",
        ],
        "/api/eval" => &["token", "id"],
        "/api/distributions" => &["token", "outcome", "q", "tag", "dataset"],
        "/api/history" => &["token", "eval", "last"],
        _ => return plain(StatusCode::NOT_FOUND, "not found\n"),
    };
    if let Some((k, _)) = params.iter().find(|(k, _)| !allowed.contains(&k.as_str())) {
        return plain(
            StatusCode::BAD_REQUEST,
            &format!(
                "unknown parameter {k:?}: the server reads the results it was started on, by eval id\n"
            ),
        );
    }
    let get = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str())
            .to_string()
    };
    match uri.path() {
        "/" | "/index.html" => {
            let state = Arc::clone(state);
            let page = tokio::task::spawn_blocking(move || state.page())
                .await
                .unwrap_or_else(|_| Arc::new(b"the page could not be made".to_vec()));
            let mut response = Response::new(Full::new(Bytes::from((*page).clone())));
            headers(&mut response, "text/html; charset=utf-8");
            response
        }
        "/api/status" => {
            // The configuration is read outside the index's lock (it is asked a few times a
            // second by each open page).
            let history = has_history();
            let mut index = state.index.lock().unwrap_or_else(|e| e.into_inner());
            let expected = index.expected();
            let counts: serde_json::Map<String, serde_json::Value> = STATUSES
                .iter()
                .zip(index.counts())
                .map(|(s, c)| ((*s).to_string(), c.into()))
                .collect();
            let live = super::running::read(index.paths());
            let running: Vec<serde_json::Value> = live
                .running
                .iter()
                .take(RUNNING_SHOWN)
                .map(|(id, ms)| serde_json::json!({"id": id, "ms": ms}))
                .collect();
            json(&serde_json::json!({
                "version": index.version,
                "evals": index.len(),
                "expected": expected,
                "counts": counts,
                "run": (live.runs > 0).then(|| serde_json::json!({
                    "total": live.total,
                    "finished": live.finished,
                })),
                "running": running,
                "running_count": live.running.len(),
                "tags": index.tags(),
                "datasets": index.datasets(),
                "read": {"from_index": index.from_index, "from_records": index.from_records},
                "history": history,
            }))
        }
        "/api/distributions" => {
            let query = Query {
                limit: usize::MAX,
                outcome: get("outcome"),
                text: get("q"),
                tag: get("tag"),
                dataset: get("dataset"),
                ..Query::default()
            };
            let index = state.index.lock().unwrap_or_else(|e| e.into_inner());
            let page = index.query(&query);
            json(&super::distribution::distributions(&page.rows))
        }
        "/api/rows" => {
            let number = |name: &str, default: usize| get(name).parse().unwrap_or(default);
            let query = Query {
                offset: number("offset", 0),
                limit: number("limit", 200).min(10_000),
                outcome: get("outcome"),
                text: get("q"),
                tag: get("tag"),
                dataset: get("dataset"),
                sort: get("sort"),
            };
            let index = state.index.lock().unwrap_or_else(|e| e.into_inner());
            let page = index.query(&query);
            let finite = |x: f32| x.is_finite().then_some(f64::from(x));
            let rows: Vec<serde_json::Value> = page
                .rows
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "id": &*r.id,
                        "status": STATUSES[r.status as usize],
                        "score": finite(r.score),
                        "duration_ms": finite(r.duration_ms),
                        "cost_usd": finite(r.cost),
                        "tokens": finite(r.tokens),
                        "runs": r.runs,
                        "pass_rate": finite(r.pass_rate),
                        "dataset": index.name_of(r.dataset),
                        "tags": r.tags.iter().filter_map(|t| index.name_of(*t)).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let counts: serde_json::Map<String, serde_json::Value> = STATUSES
                .iter()
                .zip(page.counts)
                .map(|(s, c)| ((*s).to_string(), c.into()))
                .collect();
            json(&serde_json::json!({
                "total": page.total,
                "evals": index.len(),
                "counts": counts,
                "rows": rows,
            }))
        }
        "/api/eval" => {
            let id = get("id");
            let record = state
                .index
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .record(&id);
            match record {
                Some(bytes) => {
                    let mut response = Response::new(Full::new(Bytes::from(bytes)));
                    headers(&mut response, "application/json");
                    response
                }
                None => plain(StatusCode::NOT_FOUND, "no such eval\n"),
            }
        }
        "/api/history" => {
            let Some(last) = (match get("last").as_str() {
                "" => Some(HISTORY_RUNS),
                n => n
                    .parse()
                    .ok()
                    .filter(|n| (1..=MAX_HISTORY_RUNS).contains(n)),
            }) else {
                return plain(
                    StatusCode::BAD_REQUEST,
                    &format!("last: a number of runs from 1 to {MAX_HISTORY_RUNS}\n"),
                );
            };
            let eval = get("eval");
            match tokio::task::spawn_blocking(move || history(&eval, last)).await {
                Ok(Ok(value)) => json(&value),
                Ok(Err((status, text))) => plain(status, &text),
                Err(_) => plain(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the history could not be read\n",
                ),
            }
        }
        _ => plain(StatusCode::NOT_FOUND, "not found\n"),
    }
}

/// Whether the crate the server was started in has a run history (`/api/history` answers).
fn has_history() -> bool {
    use niceeval::__workspace::history::{Place, store_path};
    matches!(store_path(std::path::Path::new(".")), Place::At(path) if path.is_file())
}

/// Runs the history's trends go back by default (as the one-file page's).
const HISTORY_RUNS: usize = 30;
/// The most runs `/api/history?last=` answers.
const MAX_HISTORY_RUNS: usize = 500;

/// The trends of the history of the crate the server was started in (as `niceeval history`
/// finds it): `eval`'s (and its target's suite) when named, else every target's suite; in the
/// compact form the page reads (`History::for_page`). 404 when there is no history.
fn history(eval: &str, last: usize) -> Result<serde_json::Value, (StatusCode, String)> {
    use niceeval::__workspace::history::{History, MarkRule, Place, store_path};
    let here = std::path::Path::new(".");
    let missing = |why: &str| (StatusCode::NOT_FOUND, format!("no history: {why}\n"));
    let Place::At(path) = store_path(here) else {
        return Err(missing(
            "it is off (NICEEVAL_HISTORY=off or [history] enabled = false)",
        ));
    };
    if !path.is_file() {
        return Err(missing("no run recorded yet"));
    }
    let failed = |e: niceeval::__workspace::history::HistoryError| {
        (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n"))
    };
    let rule = niceeval::__workspace::config::Config::discover(here)
        .map(|config| MarkRule::of(&config.compare))
        .unwrap_or_default();
    let history = History::open(&path).map_err(failed)?;
    if eval.is_empty() {
        history.for_suites(last, &rule).map_err(failed)
    } else {
        history.for_page(&[eval], last, &rule).map_err(failed)
    }
}

fn headers(response: &mut Response<Full<Bytes>>, kind: &'static str) {
    let h = response.headers_mut();
    h.insert(
        "content-type",
        hyper::header::HeaderValue::from_static(kind),
    );
    h.insert(
        "content-security-policy",
        hyper::header::HeaderValue::from_static(CSP),
    );
    h.insert(
        "x-content-type-options",
        hyper::header::HeaderValue::from_static("nosniff"),
    );
    h.insert(
        "referrer-policy",
        hyper::header::HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        "cache-control",
        hyper::header::HeaderValue::from_static("no-store"),
    );
}

fn json(value: &serde_json::Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(value.to_string())));
    headers(&mut response, "application/json");
    response
}

fn plain(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_string())));
    *response.status_mut() = status;
    headers(&mut response, "text/plain; charset=utf-8");
    response
}

/// `a=1&b=x%20y` as pairs, percent-decoded (`+` is a space).
fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
}
