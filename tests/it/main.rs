//! The integration tests of the whole toolchain, as one test binary: each module is a theme,
//! and its tests are named `module::test` (`cargo test -p niceeval-tests --test it suite::`).
//! The fixture crates under `fixtures/` are built once for the whole binary
//! (`niceeval_tests::fixture`).

/// What `cargo test` shows a user of `#[eval]`: builds the crates under fixtures/ and runs them.
mod outcomes;

/// The valid uses of the macros (niceeval-macros/tests/ui/pass), built as examples of a fixture
/// crate and run.
mod macros;

/// The runner in process: `niceeval::__workspace::run_eval` on hand-built definitions.
mod runtime;

/// The suite runner (`niceeval::main!()`) as libtest sees it: filters, --list, tags, exit codes,
/// runs and their precedence, report files.
mod suite;

/// The README's first command prints what it printed before the tree was rearranged, apart from
/// timings.
mod example_suite;

/// A suite killed (SIGKILL) or interrupted (SIGINT, SIGTERM) mid-way: what finished is on disk,
/// every report file is whole, and the evals that did not finish are named.
mod interrupt;

/// A 100 MB reply: assertions see all of it, reports store it capped, memory stays bounded.
mod big_reply;

/// Shards of a suite merged by `niceeval report`, or by the suite binary's `--report`, give the
/// report of a single run.
mod merge;

/// Console, JUnit and Markdown output as insta snapshots (`snapshots/it__reporters__*.snap`);
/// JUnit parsed as XML.
mod reporters;

/// The HTML viewer in headless Chromium (DevTools protocol): the suite's page, a conversation, a
/// workspace diff, spans, filters and the URL hash, a 100,000-case page.
mod html;

/// Every view of the HTML viewer at 1400×900: geometry (nothing overlaps, breaks mid-word or
/// is wider than its pane), what each view is for, and a screenshot of each.
mod views;

/// The viewer's plots in headless Chromium: a run's distributions counted right, and the trends
/// of 20 recorded runs of a suite, one eval regressing at run 12, marked there with its commit.
mod plots;

/// `niceeval view`'s server with its page in headless Chromium: a suite running beside it shows
/// as it goes (each eval within a second of finishing, what is running), requests without the
/// token or naming a path are refused, the served page fits 1400×900.
mod served;

/// `cargo insta test` / `accept` / CI on a copy of a crate with #[eval(snapshot)] evals.
mod insta_workflow;

/// Dataset evals (`cases = ".."`) under `cargo test`, nextest and the suite runner, on a copy
/// of a crate whose dataset files the test edits.
mod datasets;

/// Baselines and the comparison of two runs of a suite whose agent changed: classifications,
/// statistics, policies and exit codes, `--rerun-failed`, the reports.
mod compare;

/// The guide under docs/book against the code: "Your own agent in 10 minutes" followed in a new
/// crate outside the repository, the configuration reference against the parser's keys, every
/// code block compiled, run or marked.
mod book;
/// The published crates as crates.io and users receive them: every file read at build time is
/// in its package, and the declared `rust-version` covers the locked dependency tree.
mod packaging;
/// Nothing an eval starts outlives it: an agent that ignores SIGTERM, ended by the eval's
/// timeout, SIGINT, SIGTERM, SIGKILL or a panic, under libtest, the suite runner and nextest.
mod trees;
