//! `niceeval view`'s local server: the viewer page and its data from results files, while a
//! run writes them. Loopback only (127.0.0.1, a port the OS picks unless `--port`), a random
//! token in the printed URL that every request must carry (403 without it), nothing read but
//! the results files and directories it was started on (requests name evals by id, never
//! paths), nothing loaded from outside the page (its content-security policy).
//!
//! The index ([`index`]) is kept up to date by a thread that reads what the files gained every
//! 200 ms (a large file in batches, answering requests between them: the first rows come
//! before the whole file is read), and kept beside each file ([`store`]) for the next start.
//! The page is the viewer's script and style without data (a few hundred kilobytes whatever
//! the run's size): it asks `/api/status` a few times a second — the totals, the progress of
//! the run writing the results and what is running ([`running`]) — and `/api/rows` for the
//! rows in view, again when the results changed (live: the evals of a running `cargo test`,
//! suite runner or `niceeval eval` as they finish), and `/api/eval` for an eval when it is
//! opened. With `--baseline` or `--combine` it serves the one-file page instead (the
//! comparison and the merge are made over the whole run), made again when the results change.

mod api;
mod distribution;
mod index;
mod running;
mod store;
mod token;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use crate::cli::{RESULTS_DIR, ViewArgs};

/// What the server shares between requests.
pub(crate) struct State {
    token: String,
    index: Mutex<index::Index>,
    /// The page as last made, and the index version it was made at.
    page: Mutex<Option<(u64, Arc<Vec<u8>>)>>,
    /// The page that asks the server for its data.
    shell: std::sync::OnceLock<Arc<Vec<u8>>>,
    args: ViewArgs,
    roots: Vec<PathBuf>,
}

impl State {
    /// The page: the viewer asking this server for its data, or with `--baseline` or
    /// `--combine` the one-file page for the results as they are now (made again when they
    /// changed).
    fn page(&self) -> Arc<Vec<u8>> {
        if self.args.baseline.is_none() && !self.args.combine {
            return Arc::clone(self.shell.get_or_init(|| {
                Arc::new(niceeval::__workspace::reporter::Html::served_page().into_bytes())
            }));
        }
        let version = self.index.lock().unwrap_or_else(|e| e.into_inner()).version;
        let mut cached = self.page.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((v, page)) = &*cached
            && *v == version
        {
            return Arc::clone(page);
        }
        let page = Arc::new(self.make_page(version));
        *cached = Some((version, Arc::clone(&page)));
        page
    }

    /// The viewer's page (the one-file page of `niceeval view --out`), with the live part.
    fn make_page(&self, version: u64) -> Vec<u8> {
        let empty = self.index.lock().unwrap_or_else(|e| e.into_inner()).len() == 0;
        let live = live_script(version);
        if empty {
            return format!(
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"{}\"><title>niceeval</title><style>body{{font:14px system-ui,sans-serif;margin:1em}}</style></head><body><header id=\"top\"><h1>niceeval</h1></header><p id=\"waiting\">No results yet: evals show here as they finish.</p>{live}</body></html>\n",
                api::CSP
            )
            .into_bytes();
        }
        let file = std::env::temp_dir().join(format!(
            "niceeval-view-{}-{}.html",
            std::process::id(),
            &self.token[..16]
        ));
        let mut rest = vec![
            "--report".to_string(),
            "--quiet".to_string(),
            "--html".to_string(),
            file.display().to_string(),
        ];
        if self.args.combine {
            rest.push("--combine".to_string());
        }
        if let Some(baseline) = &self.args.baseline {
            rest.extend(["--baseline".to_string(), baseline.display().to_string()]);
        }
        rest.extend(self.roots.iter().map(|p| p.display().to_string()));
        let made = crate::report::runner_args(rest).ok().map(|args| {
            niceeval::__workspace::harness::run_report(
                &args,
                std::path::Path::new(RESULTS_DIR),
                Vec::new(),
            )
        });
        let page = std::fs::read_to_string(&file).ok();
        let _ = std::fs::remove_file(&file);
        match (made, page) {
            (Some(_), Some(page)) => with_live(&page, &live).into_bytes(),
            _ => format!(
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>niceeval</title></head><body><header id=\"top\"><h1>niceeval</h1></header><p>The results could not be read (see the terminal).</p>{live}</body></html>\n"
            )
            .into_bytes(),
        }
    }
}

/// The one-file page, allowed to ask its own server (`connect-src 'self'`) and given the
/// live part before its end.
fn with_live(page: &str, live: &str) -> String {
    let page = page.replacen(
        "img-src data:\">",
        "img-src data:; connect-src 'self'\">",
        1,
    );
    match page.rfind("</body>") {
        Some(at) => format!("{}{live}{}", &page[..at], &page[at..]),
        None => page + live,
    }
}

/// The page's live part: asks the server for the run's status every 300 ms, shows a progress
/// bar and the totals in the header, and shows the new results when they changed.
fn live_script(version: u64) -> String {
    format!(
        r#"<div id="live" style="position:fixed;top:.4em;right:1em;display:flex;gap:.6em;align-items:center;font:12px system-ui,sans-serif;z-index:9"><progress id="live-progress" max="1" value="0" style="width:12em"></progress><span id="live-text"></span></div>
<script>(function () {{
  const token = new URLSearchParams(location.search).get("token") || "";
  const version = {version};
  const progress = document.getElementById("live-progress"), text = document.getElementById("live-text");
  async function tick() {{
    try {{
      const r = await fetch("/api/status?token=" + encodeURIComponent(token), {{ cache: "no-store" }});
      const s = await r.json();
      if (s.version !== version) {{ location.reload(); return; }}
      const c = s.counts;
      const done = s.evals;
      if (s.expected) {{ progress.max = s.expected; progress.value = Math.min(done, s.expected); }}
      else {{ progress.max = 1; progress.value = done ? 1 : 0; }}
      text.textContent = (s.expected ? done + " of " + s.expected : done) + " evals · " + c.passed + " passed · " + (c.failed + c.error) + " failed · " + c.skipped + " skipped";
      document.body.dataset.liveEvals = String(done);
      document.body.dataset.liveExpected = String(s.expected || "");
    }} catch (e) {{ text.textContent = "server stopped"; }}
    setTimeout(tick, 300);
  }}
  tick();
}})();</script>
"#
    )
}

/// Starts the server on the results `args` names, prints its URL (and opens it where there is
/// a display, unless `--no-open`) and serves until Ctrl-C.
pub(crate) fn serve(args: &ViewArgs) -> ExitCode {
    let roots = if args.paths.is_empty() {
        vec![PathBuf::from(RESULTS_DIR)]
    } else {
        args.paths.clone()
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the server: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(run(args, roots))
}

async fn run(args: &ViewArgs, roots: Vec<PathBuf>) -> ExitCode {
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", args.port.unwrap_or(0))).await
    {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("error: cannot listen on 127.0.0.1: {e}");
            return ExitCode::from(2);
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let state = Arc::new(State {
        token: token::new(),
        index: Mutex::new(index::Index::new(roots.clone())),
        page: Mutex::new(None),
        shell: std::sync::OnceLock::new(),
        args: args.clone(),
        roots,
    });
    // The index follows the files as they grow.
    let follower = Arc::downgrade(&state);
    std::thread::spawn(move || {
        while let Some(state) = follower.upgrade() {
            let more = state
                .index
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .refresh();
            drop(state);
            // Between batches a moment without the lock: a request waiting for it gets it (the
            // lock is not fair: taken again at once, a request could wait for the whole file).
            std::thread::sleep(std::time::Duration::from_millis(if more { 2 } else { 200 }));
        }
    });
    let url = format!("http://127.0.0.1:{port}/?token={}", state.token);
    {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "niceeval view: serving {url}");
        let _ = writeln!(out, "(Ctrl-C stops it)");
        let _ = out.flush();
    }
    if !args.no_open {
        open(&url);
    }
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => return ExitCode::SUCCESS,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let state = Arc::clone(&state);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        api::handle(Arc::clone(&state), request)
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        }
    }
}

/// Opens `url` in the browser where there is a display.
fn open(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        "xdg-open"
    } else {
        return;
    };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}
