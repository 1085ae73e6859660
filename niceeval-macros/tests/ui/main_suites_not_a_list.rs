// `suites` takes a list of string literals.
niceeval::main!(suites = "evals/promptfooconfig.yaml");
