//! Tests of the Codex adapter.
