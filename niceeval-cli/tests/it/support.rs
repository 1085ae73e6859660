//! The loopback fake (`scripts/fake-openai.py`, started on an ephemeral port and killed when
//! dropped) and the `niceeval` binary.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The workspace's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("niceeval-cli sits in the workspace")
        .to_path_buf()
}

/// The fake OpenAI API, stopped when dropped.
pub struct Fake {
    child: Child,
    /// `http://127.0.0.1:<port>/v1`.
    pub url: String,
}

impl Fake {
    pub fn start() -> Fake {
        let mut child = Command::new("python3")
            .arg(root().join("scripts/fake-openai.py"))
            .arg("0")
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs scripts/fake-openai.py");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("the fake prints its port");
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .unwrap_or_else(|| panic!("the fake printed {line:?}"));
        Fake {
            child,
            url: format!("http://127.0.0.1:{port}/v1"),
        }
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `niceeval eval ARGS` in `dir` against `fake`.
pub fn niceeval(dir: &Path, fake: &Fake, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_niceeval"))
        .arg("eval")
        .args(args)
        .current_dir(dir)
        .env("OPENAI_BASE_URL", &fake.url)
        .env("OPENAI_API_KEY", "sk-fake")
        .env("NO_COLOR", "1")
        .output()
        .expect("the niceeval binary runs")
}
