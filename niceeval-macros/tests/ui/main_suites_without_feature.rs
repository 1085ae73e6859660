// A suite file that is there, but niceeval is built without its `suites` feature (as the UI
// tests build it): an error naming the feature.
niceeval::main!(suites = ["Cargo.toml"]);
