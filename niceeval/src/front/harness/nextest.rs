//! The filter of the nextest run a test process is part of, read from the command line of
//! nextest itself (the process's parent): nextest runs each eval as a process of its own with
//! `--exact NAME` and does not pass its `-E` expressions on, yet shards made with the same
//! expression must say so in their run manifests to merge.

/// The filter expressions (`-E`, `--filterset`, `--filter-expr`) and name filters of the
/// `cargo nextest run` this process is a test of, as written (`not test(/^bad::/)`; several
/// joined with ` | `, as nextest unions them); `None` when the parent is not nextest, its
/// command line cannot be read (outside Linux), or it has no filter.
pub(super) fn filter() -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        let parent = std::os::unix::process::parent_id();
        let cmdline = std::fs::read(format!("/proc/{parent}/cmdline")).ok()?;
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        from_args(&args)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// [`filter`] from nextest's arguments (`cargo-nextest nextest run …`).
fn from_args(args: &[String]) -> Option<String> {
    let program = args.first()?;
    if !program.rsplit('/').next()?.contains("nextest") {
        return None;
    }
    let mut expressions = Vec::new();
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        if arg == "--" {
            break;
        }
        if matches!(arg.as_str(), "-E" | "--filterset" | "--filter-expr") {
            expressions.extend(rest.next().cloned());
        } else if let Some(value) = arg
            .strip_prefix("--filterset=")
            .or_else(|| arg.strip_prefix("--filter-expr="))
        {
            expressions.push(value.to_string());
        } else if let Some(value) = arg.strip_prefix("-E").filter(|v| !v.is_empty()) {
            expressions.push(value.strip_prefix('=').unwrap_or(value).to_string());
        }
    }
    match expressions.len() {
        0 => None,
        1 => expressions.pop(),
        _ => Some(
            expressions
                .iter()
                .map(|e| format!("({e})"))
                .collect::<Vec<_>>()
                .join(" | "),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::from_args;

    fn words(line: &[&str]) -> Vec<String> {
        line.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn the_expressions_of_nextest_are_read_in_each_spelling() {
        let nextest = "/root/.cargo/bin/cargo-nextest";
        assert_eq!(
            from_args(&words(&[
                nextest,
                "nextest",
                "run",
                "--partition",
                "count:1/2",
                "-E",
                "not test(/^bad::/)"
            ])),
            Some("not test(/^bad::/)".to_string())
        );
        assert_eq!(
            from_args(&words(&[
                nextest,
                "nextest",
                "run",
                "-Etest(a)",
                "--filterset=test(b)"
            ])),
            Some("(test(a)) | (test(b))".to_string())
        );
        assert_eq!(
            from_args(&words(&[
                nextest,
                "nextest",
                "run",
                "--filter-expr",
                "test(c)"
            ])),
            Some("test(c)".to_string())
        );
        assert_eq!(from_args(&words(&[nextest, "nextest", "run"])), None);
        // After `--` the arguments are the test binary's.
        assert_eq!(
            from_args(&words(&[nextest, "nextest", "run", "--", "-E", "x"])),
            None
        );
        // Not nextest: nothing read.
        assert_eq!(from_args(&words(&["/usr/bin/bash", "-E", "x"])), None);
    }
}
