//! The `niceeval` command: see the `niceeval_cli` library.

fn main() -> std::process::ExitCode {
    niceeval_cli::main()
}
