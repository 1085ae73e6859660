// Through the expansion of `niceeval_suites::main!(suites = ..)`, which forwards here.
// `suites` takes a list of string literals.
niceeval_macros::__suites_main!(niceeval_suites; "evals/promptfooconfig.yaml");
