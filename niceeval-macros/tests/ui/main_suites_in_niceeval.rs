// Suite files run through niceeval-suites: `niceeval::main!(suites = [..])` says where to go.
niceeval::main!(suites = ["Cargo.toml"]);
