// A suite file that is not there fails to compile, naming the file.
niceeval::main!(suites = ["Cargo.toml", "evals/no_such_suite.yaml"]);
