// A path must be a string literal: it is read when the crate compiles.
const SUITE: &str = "evals/promptfooconfig.yaml";

niceeval::main!(suites = [SUITE]);
