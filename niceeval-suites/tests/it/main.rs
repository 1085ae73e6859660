//! niceeval-suites' integration tests, as one test binary: the peers' own unit-test vectors
//! run through the path a suite file's items take (`vectors`), and AgentV's run end to end as
//! eval files (`agentv_vectors`). The `niceeval eval` command's tests on whole suite files and
//! the conformance corpora (`tests/conformance/`) run the command, so they live with it, in
//! `niceeval-cli/tests/it`.

mod agentv_vectors;
mod graded_vectors;
mod support;

mod vectors;
