//! niceeval-suites' integration tests, as one test binary: the peers' own unit-test vectors
//! run through the path a suite file's items take (`vectors`). The `niceeval eval` command's
//! tests on whole suite files and the conformance corpora (`tests/conformance/`) run the
//! command, so they live with it, in `niceeval-cli/tests/it`.

mod graded_vectors;
mod support;

mod vectors;
