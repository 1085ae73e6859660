//! Headless Chromium (Debian's `chromium`, installed by `scripts/install-chromium.sh`) for the
//! tests and the benchmark of the HTML viewer, driven through the DevTools protocol: opens
//! pages, evaluates script in them, waits for what they say, keeps what they log, takes
//! screenshots.

use std::path::Path;
use std::process::Command;

/// Where Debian installs Chromium.
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// Headless Chromium driven through the DevTools protocol over a pipe
/// (`--remote-debugging-pipe`: commands on the child's fd 3, answers and events on its fd 4,
/// each message JSON ended by a NUL byte). The protocol is a few JSON calls; a client crate
/// (chromiumoxide) would add a WebSocket stack and thousands of generated types to the tests'
/// build for them.
pub struct Browser {
    child: std::process::Child,
    commands: std::io::PipeWriter,
    messages: std::sync::mpsc::Receiver<serde_json::Value>,
    next: u64,
    /// Console messages, uncaught exceptions and log entries (CSP violations, failed loads)
    /// of every page, as text.
    pub console: Vec<String>,
    _profile: tempfile::TempDir,
}

/// An open tab: its DevTools session.
pub struct Tab {
    session: String,
}

/// How long one DevTools call may take before the test fails.
pub const CALL_DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

impl Browser {
    /// Starts headless Chromium with a fresh profile, networking off. When Chromium is
    /// missing: under CI the test fails, naming the install script; elsewhere a notice goes to
    /// stderr and `None` tells the caller to skip (as every tool-dependent test here does).
    pub fn launch() -> Option<Browser> {
        if !crate::available(
            Path::new(CHROMIUM).exists(),
            CHROMIUM,
            "run scripts/install-chromium.sh",
        ) {
            return None;
        }
        let profile = tempfile::tempdir().expect("a profile directory");
        let (their_commands, commands) = std::io::pipe().expect("a pipe");
        let (answers, their_answers) = std::io::pipe().expect("a pipe");
        let mut command = Command::new(CHROMIUM);
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--hide-scrollbars",
                "--remote-debugging-pipe",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        {
            use std::os::fd::AsRawFd;
            use std::os::unix::process::CommandExt;
            let read = their_commands.as_raw_fd();
            let write = their_answers.as_raw_fd();
            // SAFETY: only async-signal-safe calls (fcntl, dup2) between fork and exec.
            unsafe {
                command.pre_exec(move || {
                    let read = libc::fcntl(read, libc::F_DUPFD, 10);
                    let write = libc::fcntl(write, libc::F_DUPFD, 10);
                    if read < 0 || write < 0 || libc::dup2(read, 3) < 0 || libc::dup2(write, 4) < 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let child = command.spawn().expect("chromium starts");
        drop(their_commands);
        drop(their_answers);
        let (tx, messages) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut reader = std::io::BufReader::new(answers);
            loop {
                let mut buf = Vec::new();
                match reader.read_until(0, &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        buf.pop();
                        if let Ok(value) = serde_json::from_slice(&buf)
                            && tx.send(value).is_err()
                        {
                            return;
                        }
                    }
                }
            }
        });
        Some(Browser {
            child,
            commands,
            messages,
            next: 0,
            console: Vec::new(),
            _profile: profile,
        })
    }

    /// Calls `method` (in `tab`, or on the browser) and returns its result; fails the test on a
    /// protocol error or after [`CALL_DEADLINE`].
    pub fn call(
        &mut self,
        tab: Option<&Tab>,
        method: &str,
        params: serde_json::Value,
    ) -> serde_json::Value {
        use std::io::Write;
        self.next += 1;
        let id = self.next;
        let mut message = serde_json::json!({ "id": id, "method": method, "params": params });
        if let Some(tab) = tab {
            message["sessionId"] = tab.session.clone().into();
        }
        let mut bytes = serde_json::to_vec(&message).expect("JSON");
        bytes.push(0);
        self.commands
            .write_all(&bytes)
            .expect("chromium reads its commands");
        let deadline = std::time::Instant::now() + CALL_DEADLINE;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let message = self
                .messages
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no answer to {method} from chromium ({e})"));
            if message["id"] == id {
                if let Some(error) = message.get("error") {
                    panic!("{method} failed: {error}");
                }
                return message["result"].clone();
            }
            self.note(&message);
        }
    }

    /// Keeps what an event says of a page's console.
    fn note(&mut self, event: &serde_json::Value) {
        let params = &event["params"];
        match event["method"].as_str() {
            Some("Runtime.consoleAPICalled") => self.console.push(format!(
                "console.{}: {}",
                params["type"].as_str().unwrap_or(""),
                params["args"]
            )),
            Some("Runtime.exceptionThrown") => self
                .console
                .push(format!("exception: {}", params["exceptionDetails"])),
            Some("Log.entryAdded") => self.console.push(format!(
                "log {}: {}",
                params["entry"]["level"].as_str().unwrap_or(""),
                params["entry"]["text"].as_str().unwrap_or("")
            )),
            _ => {}
        }
    }

    /// Opens a tab at `url`, its console and log watched.
    pub fn open(&mut self, url: &str) -> Tab {
        self.open_sized(url, None)
    }

    /// Opens a tab at `url` as [`Browser::open`] does, its viewport `width` × `height` CSS
    /// pixels when `size` is given (set before the page loads, so its first layout has it).
    pub fn open_sized(&mut self, url: &str, size: Option<(u32, u32)>) -> Tab {
        let target = self.call(
            None,
            "Target.createTarget",
            serde_json::json!({ "url": "about:blank" }),
        );
        let attached = self.call(
            None,
            "Target.attachToTarget",
            serde_json::json!({ "targetId": target["targetId"], "flatten": true }),
        );
        let tab = Tab {
            session: attached["sessionId"]
                .as_str()
                .expect("a session id")
                .to_string(),
        };
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            self.call(Some(&tab), domain, serde_json::json!({}));
        }
        if let Some((width, height)) = size {
            self.call(
                Some(&tab),
                "Emulation.setDeviceMetricsOverride",
                serde_json::json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
            );
        }
        self.call(
            Some(&tab),
            "Page.navigate",
            serde_json::json!({ "url": url }),
        );
        tab
    }

    /// Evaluates `expression` in the tab (awaiting a promise) and returns its value.
    pub fn eval(&mut self, tab: &Tab, expression: &str) -> serde_json::Value {
        let result = self.call(
            Some(tab),
            "Runtime.evaluate",
            serde_json::json!({ "expression": expression, "awaitPromise": true, "returnByValue": true }),
        );
        if let Some(e) = result.get("exceptionDetails") {
            panic!("{expression} threw: {e}");
        }
        result["result"]["value"].clone()
    }

    /// Evaluates `expression` until it is truthy (every 20 ms), and returns its value; fails the
    /// test after [`CALL_DEADLINE`], with the console so far.
    pub fn wait_for(&mut self, tab: &Tab, expression: &str) -> serde_json::Value {
        let deadline = std::time::Instant::now() + CALL_DEADLINE;
        loop {
            let value = self.eval(tab, expression);
            let falsy = value.is_null() || value == false || value == "" || value == 0;
            if !falsy {
                return value;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{expression} never held; console:\n{}",
                self.console.join("\n")
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// A PNG screenshot of the tab's viewport.
    pub fn screenshot(&mut self, tab: &Tab) -> Vec<u8> {
        let shot = self.call(
            Some(tab),
            "Page.captureScreenshot",
            serde_json::json!({ "format": "png" }),
        );
        decode_base64(shot["data"].as_str().expect("image data"))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        use std::io::Write;
        let close = b"{\"id\":0,\"method\":\"Browser.close\"}\0";
        let _ = self.commands.write_all(close);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard base64 (what DevTools sends screenshots in), decoded.
fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a' + 26) as u32,
            b'0'..=b'9' => (c - b'0' + 52) as u32,
            b'+' => 62,
            b'/' => 63,
            _ => 0,
        }
    };
    let bytes: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for group in bytes.chunks(4) {
        let pad = group.iter().filter(|&&b| b == b'=').count();
        let n = group.iter().fold(0u32, |acc, &c| {
            (acc << 6) | if c == b'=' { 0 } else { value(c) }
        }) << (6 * (4 - group.len()));
        let all = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&all[..3 - pad.min(2)]);
    }
    out
}
