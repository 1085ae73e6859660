// Through the expansion of `niceeval_suites::main!(suites = ..)`, which forwards here.
// A suite file that is not there fails to compile, naming the file.
niceeval_macros::__suites_main!(niceeval_suites; ["Cargo.toml", "evals/no_such_suite.yaml"]);
