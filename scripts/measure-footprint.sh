#!/usr/bin/env bash
# Measures what niceeval costs a user's crate under a few dev-profile settings: the first
# build (wall and CPU seconds), the test binary's size, the target directory's size, and how
# long 2,000 evals (20 evals x runs = 100) against a loopback OpenAI-compatible model take.
# The guide's Performance page (docs/book/src/performance.md) quotes its figures.
#
#   bash scripts/measure-footprint.sh [profile...]     # profiles: default lean hot deps-o1 all-opt
#
# Each profile builds a fresh crate in a temporary directory (with niceeval as a path
# dependency, as a user outside this repository would have it) and its own target directory.
# Nothing is left behind. Needs no network beyond crates.io (and nothing when the registry
# cache is warm).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
profiles=("$@")
[ ${#profiles[@]} -gt 0 ] || profiles=(default lean hot deps-o1 all-opt)

profile_toml() {
    case "$1" in
    default) ;;
    lean)
        cat <<'EOF'
[profile.dev]
debug = "line-tables-only"
[profile.dev.package."*"]
debug = false
EOF
        ;;
    hot)
        cat <<'EOF'
[profile.dev]
debug = "line-tables-only"
[profile.dev.package."*"]
debug = false
[profile.dev.package.niceeval]
opt-level = 3
[profile.dev.package.serde_json]
opt-level = 3
[profile.dev.package.tokio]
opt-level = 3
[profile.dev.package.hyper]
opt-level = 3
[profile.dev.package.reqwest]
opt-level = 3
EOF
        ;;
    deps-o1)
        cat <<'EOF'
[profile.dev]
debug = "line-tables-only"
[profile.dev.package."*"]
debug = false
opt-level = 1
EOF
        ;;
    all-opt)
        cat <<'EOF'
[profile.dev]
debug = "line-tables-only"
[profile.dev.package."*"]
debug = false
opt-level = 3
EOF
        ;;
    *)
        echo "unknown profile $1 (known: default lean hot deps-o1 all-opt)" >&2
        exit 2
        ;;
    esac
}

write_crate() {
    local dir="$1" profile="$2"
    mkdir -p "$dir/src" "$dir/tests"
    cat >"$dir/Cargo.toml" <<EOF
[package]
name = "footprint"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
niceeval = { path = "$repo/niceeval" }

[[test]]
name = "evals"
path = "tests/evals.rs"
harness = false

$(profile_toml "$profile")
EOF
    echo "" >"$dir/src/lib.rs"
    {
        cat <<'EOF'
//! 20 evals x 100 runs against a loopback OpenAI-compatible server (a thread in this process).
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::OnceLock;

use niceeval::prelude::*;

const BODY: &str = r#"{"id":"c","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Your order 42 ships today."}}],"usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19}}"#;

fn server() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                    let mut stream = stream;
                    loop {
                        let mut length = 0usize;
                        let mut line = String::new();
                        loop {
                            line.clear();
                            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            if line == "\r\n" {
                                break;
                            }
                            let lower = line.to_ascii_lowercase();
                            if let Some(v) = lower.strip_prefix("content-length:") {
                                length = v.trim().parse().unwrap_or(0);
                            }
                        }
                        let mut body = vec![0; length];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        let reply = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{}",
                            BODY.len(),
                            BODY
                        );
                        if stream.write_all(reply.as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        url
    })
}

fn bot() -> impl Agent {
    niceeval::agent::chat::ChatAgent::new("openai/gpt-4o-mini").base_url(server()).api_key_env("")
}
EOF
        for i in $(seq -w 1 20); do
            cat <<EOF

#[eval(agent = bot, runs = 100)]
async fn order_$i(t: &mut Eval) -> niceeval::Result {
    t.send("Where is order 42?").await?;
    t.check(t.reply(), includes("ships"));
    t.check(t.reply(), regex(r"order \d+"));
    Ok(())
}
EOF
        done
        echo
        echo "niceeval::main!();"
    } >"$dir/tests/evals.rs"
}

printf '%-8s %12s %12s %10s %10s %12s %12s\n' profile "build wall" "build cpu" binary target "2000 wall" "2000 cpu"
for profile in "${profiles[@]}"; do
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    write_crate "$work/crate" "$profile"
    export CARGO_TARGET_DIR="$work/target" CARGO_INCREMENTAL=0
    unset CARGO_PROFILE_DEV_DEBUG
    (cd "$work/crate" && cargo fetch -q)
    # From the crate's own directory: cargo reads .cargo/config.toml from the working
    # directory up, and this repository's would change the profile being measured.
    (cd "$work/crate" && /usr/bin/time -f '%e %U %S' -o "$work/build.time" \
        cargo test -q --test evals --no-run 2>"$work/build.log") ||
        { cat "$work/build.log" >&2; exit 1; }
    binary="$(find "$work/target/debug/deps" -maxdepth 1 -type f -executable -name 'evals-*' | head -n 1)"
    /usr/bin/time -f '%e %U %S' -o "$work/run.time" "$binary" --format terse >"$work/run.log" 2>&1 ||
        { tail -n 30 "$work/run.log" >&2; exit 1; }
    read -r bw bu bs <"$work/build.time"
    read -r rw ru rs <"$work/run.time"
    printf '%-8s %11ss %11ss %9sM %9sM %11ss %11ss\n' "$profile" "$bw" "$(echo "$bu + $bs" | bc)" \
        "$(($(stat -c %s "$binary") / 1048576))" "$(du -sm "$work/target" | cut -f1)" \
        "$rw" "$(echo "$ru + $rs" | bc)"
    rm -rf "$work"
    trap - EXIT
done
