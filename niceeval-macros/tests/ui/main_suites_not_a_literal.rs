// Through the expansion of `niceeval_suites::main!(suites = ..)`, which forwards here.
// A path must be a string literal: it is read when the crate compiles.
const SUITE: &str = "evals/promptfooconfig.yaml";

niceeval_macros::__suites_main!(niceeval_suites; [SUITE]);
