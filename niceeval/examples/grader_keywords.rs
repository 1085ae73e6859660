//! A script grader written in Rust with `niceeval::grader`: passes when the output contains
//! every keyword of `config.keywords`.
//!
//! Use it from an eval with `script(["target/debug/examples/grader_keywords"])`, or from data
//! with `type: script` and `command: [target/debug/examples/grader_keywords]`.

use niceeval::grader::{self, Check, Output};

fn main() {
    grader::run(|input| {
        let output = input.output.as_deref().unwrap_or_default().to_lowercase();
        let keywords: Vec<String> = input
            .config
            .as_ref()
            .and_then(|c| c.get("keywords"))
            .and_then(|k| k.as_array())
            .map(|k| {
                k.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        if keywords.is_empty() {
            return Output::fail("config.keywords is empty: nothing to look for");
        }
        Output::from_checks(
            keywords
                .iter()
                .map(|k| {
                    let found = output.contains(&k.to_lowercase());
                    Check::new(
                        format!("mentions {k:?}"),
                        found,
                        if found { "found" } else { "missing" },
                    )
                })
                .collect(),
        )
    })
}
