use super::*;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn sh(script: &str) -> Command {
    let mut command = Command::new("sh");
    command.arg("-c").arg(script).stdout(Stdio::piped());
    command
}

/// The pids of every process whose environment carries `id` in the tree marker, read from
/// `/proc` here rather than through the code under test.
#[cfg(target_os = "linux")]
fn carrying(id: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rfind(')').map(|i| s[i + 2..].starts_with('Z')))
            .unwrap_or(true);
        let marked = environ
            .split(|b| *b == 0)
            .filter_map(|e| e.strip_prefix(format!("{TREE_VAR}=").as_bytes()))
            .any(|v| v.split(|b| *b == b':').any(|t| t == id.as_bytes()));
        if marked && !zombie {
            found.push(pid);
        }
    }
    found
}

async fn first_line(spawned: &mut Spawned) -> String {
    use tokio::io::AsyncBufReadExt;
    let stdout = spawned.child.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = lines.next_line().await.unwrap().unwrap_or_default();
    // Keep the pipe open: the tree must not die of a broken pipe.
    std::mem::forget(lines);
    line
}

#[cfg(target_os = "linux")]
#[test]
fn ending_a_tree_ends_descendants_that_left_its_session() {
    rt().block_on(async {
        // The subshell exits at once: the setsid'd sleep is orphaned (its parent becomes init),
        // out of the root's group and session; only the marker still ties it to the tree.
        let mut spawned = spawn(
            &mut sh("(setsid sleep 300 &); setsid sleep 301 & echo started; sleep 302"),
            None,
            Stderr::AsSet,
        )
        .unwrap();
        assert_eq!(first_line(&mut spawned).await, "started");
        let id = spawned.tree.id().to_string();
        // The setsid'd sleeps may take a moment to exec. The shell may run its last command in
        // place of itself (dash does), so the tree is three or four processes; what matters is
        // the orphan that left both the group and the parent chain.
        let root = spawned.child.id().unwrap();
        let orphans = |tree: &[u32]| {
            tree.iter()
                .filter(|pid| **pid != root && linux::stat(**pid).is_some_and(|s| s.parent != root))
                .count()
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut tree = carrying(&id);
        while (tree.len() < 3 || orphans(&tree) < 1) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
            tree = carrying(&id);
        }
        assert!(
            (3..=4).contains(&tree.len()),
            "sh (or its last command), its sleep and the two setsid'd sleeps: {tree:?}"
        );
        assert_eq!(orphans(&tree), 1, "one sleep left the tree: {tree:?}");
        spawned.tree.end().await;
        // Ended by SIGTERM, not by the SIGKILL that follows after GRACE (a time bound could
        // not tell them apart on a loaded machine, where ending may take longer than GRACE).
        let status = spawned.child.wait().await.expect("the root is reaped");
        assert_eq!(
            signal_note(&status),
            " by signal 15",
            "the root dies of SIGTERM"
        );
        assert_eq!(carrying(&id), Vec::<u32>::new());
    });
}

#[cfg(unix)]
#[test]
fn a_tree_gets_sigterm_first() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("got-term");
    rt().block_on(async {
        let script = format!(
            "trap 'echo term > {}; exit 0' TERM; echo ready; while :; do sleep 0.05; done",
            file.display()
        );
        let mut spawned = spawn(&mut sh(&script), None, Stderr::AsSet).unwrap();
        assert_eq!(first_line(&mut spawned).await, "ready");
        spawned.tree.end().await;
        let _ = spawned.child.wait().await;
    });
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), "term");
}

#[cfg(target_os = "linux")]
#[test]
fn a_tree_ignoring_sigterm_gets_sigkill_after_the_grace_period() {
    rt().block_on(async {
        let mut spawned = spawn(
            &mut sh("trap '' TERM; echo ready; while :; do sleep 0.05; done"),
            None,
            Stderr::AsSet,
        )
        .unwrap();
        assert_eq!(first_line(&mut spawned).await, "ready");
        let id = spawned.tree.id().to_string();
        let started = Instant::now();
        spawned.tree.end().await;
        let took = started.elapsed();
        let status = spawned.child.wait().await.unwrap();
        assert!(took >= GRACE, "{took:?}");
        // Not held past the grace period (far from GRACE + 3 s only on an idle machine).
        assert!(took < GRACE + Duration::from_secs(20), "{took:?}");
        assert_eq!(signal_note(&status), " by signal 9");
        assert_eq!(carrying(&id), Vec::<u32>::new());
    });
}

#[cfg(unix)]
#[test]
fn the_stderr_tail_is_complete_after_a_stdout_failure() {
    rt().block_on(async {
        let mut spawned = spawn(
            &mut sh("echo 'not what was expected'; sleep 0.05; echo 'late words' >&2"),
            None,
            Stderr::Tail(1024),
        )
        .unwrap();
        assert_eq!(first_line(&mut spawned).await, "not what was expected");
        // The caller gives up on stdout now; the error it composes must carry the stderr
        // written after.
        assert_eq!(spawned.stderr_tail().await.trim(), "late words");
    });
}

#[cfg(unix)]
#[test]
fn stdin_is_written_while_stdout_is_read() {
    rt().block_on(async {
        let big = vec![b'x'; 1024 * 1024];
        let mut spawned = spawn(&mut sh("cat"), Some(big.clone()), Stderr::Tail(64)).unwrap();
        let out = read_head(spawned.child.stdout.take(), usize::MAX).await;
        assert_eq!(out.len(), big.len());
        assert!(spawned.child.wait().await.unwrap().success());
    });
}

#[test]
fn stderr_keeps_the_tail() {
    let mut data = vec![b'a'; 100];
    data.extend_from_slice(b"END");
    let tail = rt().block_on(read_tail(&data[..], 10));
    assert!(
        tail.ends_with("aaaaaaaEND") && tail.contains("elided"),
        "{tail}"
    );
}

#[test]
fn tail_keeps_the_last_characters() {
    assert_eq!(tail("  short  ", 10), "short");
    assert_eq!(tail("abcdef", 3), "…(last 3 chars) def");
}

#[cfg(unix)]
mod jobs {
    use super::super::*;

    fn sh(script: &str, timeout_ms: u64) -> Finished {
        Job {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            stdin: b"hello".to_vec(),
            cwd: None,
            env: vec![],
            timeout: Duration::from_millis(timeout_ms),
        }
        .run()
        .unwrap()
    }

    #[test]
    fn captures_stdin_stdout_stderr_and_code() {
        let f = sh("cat; echo oops >&2; exit 3", 5000);
        assert_eq!(f.stdout, "hello");
        assert_eq!(f.stderr.trim(), "oops");
        assert_eq!(f.code, Some(3));
        assert!(!f.timed_out);
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let started = Instant::now();
        let f = sh("sleep 30 & sleep 30", 200);
        assert!(f.timed_out);
        // Cut short: the sleeps alone run 30 s (a bound far from both, for a loaded machine).
        assert!(started.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn background_children_do_not_hold_the_result() {
        let started = Instant::now();
        let f = sh("(sleep 30 &) ; echo done", 10_000);
        assert_eq!(f.stdout.trim(), "done");
        // Not held by the background sleep (30 s), nor by the timeout (10 s).
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn huge_output_is_bounded() {
        let f = sh("head -c 20000000 /dev/zero | tr '\\0' 'a'", 20_000);
        assert_eq!(f.stdout.len(), MAX_CAPTURE);
        assert_eq!(f.code, Some(0));
    }

    #[test]
    fn works_inside_a_multi_thread_runtime() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        let f = rt.block_on(async { tokio::spawn(async { sh("echo hi", 5000) }).await.unwrap() });
        assert_eq!(f.stdout.trim(), "hi");
    }

    #[test]
    fn works_inside_a_current_thread_runtime() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let f = rt.block_on(async { sh("echo hi", 5000) });
        assert_eq!(f.stdout.trim(), "hi");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_tree_is_registered_while_it_lives() {
    rt().block_on(async {
        let mut spawned = spawn(&mut sh("echo started; sleep 300"), None, Stderr::AsSet).unwrap();
        assert_eq!(first_line(&mut spawned).await, "started");
        let key = spawned.tree.key;
        let registered = || owner::live().has(key);
        assert!(registered(), "a started tree is registered");
        spawned.tree.end().await;
        assert!(!registered(), "an ended tree is forgotten");
        // Dropped without being ended (a cancelled turn): forgotten once its end is done.
        let mut spawned = spawn(&mut sh("echo started; sleep 300"), None, Stderr::AsSet).unwrap();
        assert_eq!(first_line(&mut spawned).await, "started");
        let key = spawned.tree.key;
        let id = spawned.tree.id().to_string();
        drop(spawned);
        let deadline = Instant::now() + GRACE * 3;
        while owner::live().has(key) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(!owner::live().has(key));
        assert_eq!(carrying(&id), Vec::<u32>::new());
    });
}

/// The watchdog's end of file: a tree whose owner died is killed — its root ignoring SIGTERM,
/// a child that left its session, and a stopped one — and nothing else.
#[cfg(target_os = "linux")]
#[test]
fn the_watchdog_kills_what_carries_its_token_once_its_owner_is_gone() {
    let token = format!(
        "watchdogtest{}x{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let id = format!("{token}-7");
    let start = |marker: &str| {
        std::process::Command::new("sh")
            .args([
                "-c",
                "trap '' TERM INT; setsid sleep 300 & sleep 301 & wait",
            ])
            .env(TREE_VAR, marker)
            .stdin(Stdio::null())
            .spawn()
            .unwrap()
    };
    // Nested: another run's tree id before this one's.
    let mut doomed = start(&format!("outer-1:{id}"));
    // A process whose token merely starts the same way is another process's.
    let other = format!("{token}0-7");
    let mut spared = start(&other);
    let deadline = Instant::now() + Duration::from_secs(10);
    while (carrying(&id).len() < 3 || carrying(&other).len() < 3) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(carrying(&id).len(), 3, "sh and its two sleeps");
    signal(doomed.id(), libc::SIGSTOP);
    let watchdog = watchdog::Watchdog::start(&token).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        carrying(&id).len(),
        3,
        "nothing happens while the owner lives"
    );
    drop(watchdog);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !carrying(&id).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        carrying(&id),
        Vec::<u32>::new(),
        "the stopped tree is killed"
    );
    let _ = doomed.wait();
    assert_eq!(carrying(&other).len(), 3, "another token's tree is spared");
    for pid in carrying(&other) {
        signal(pid, libc::SIGKILL);
    }
    let _ = spared.wait();
}
