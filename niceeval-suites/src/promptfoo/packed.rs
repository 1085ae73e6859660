//! A file's tests from when they are read until their cases are built: each packed into a
//! record of JSON ([`PackedTest`]) and kept deflated with the others ([`Tests`]). 20,000 tests
//! as maps of values took 6 KB each, as compact text a tenth of that; 100,000 tests deflated
//! take 7.8 MB. A test's own grader, embedding grader and
//! provider (few tests have them) are kept beside, as they are.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::providers::TestProviders;
use super::{Origin, Test};
use crate::deflated::Deflated;
use crate::{JudgeSpec, ProviderSpec};

/// A test as a record: everything but what [`Beside`] keeps.
#[derive(Debug, Serialize, Deserialize)]
struct PackedTest {
    description: Option<String>,
    vars: Map<String, Value>,
    order: Vec<String>,
    /// The items, each with its place: the index of its file in `files`, its line and column.
    asserts: Vec<(Value, (u32, usize, usize))>,
    files: Vec<PathBuf>,
    transform: Option<String>,
    transform_vars: Option<String>,
    affixes: (Option<String>, Option<String>),
    no_expansion: bool,
    no_default_asserts: bool,
    repeat: Option<usize>,
    provider_output: Option<String>,
    rubric_prompt: Option<String>,
    threshold: Option<f64>,
    /// The test's `providers` filter.
    only: Option<Vec<String>>,
    line: usize,
}

/// What a test keeps beside its record, when it has any of it.
#[derive(Debug)]
struct Beside {
    judge: Option<JudgeSpec>,
    embedding: Option<JudgeSpec>,
    provider: Option<Arc<ProviderSpec>>,
}

/// The tests of a file, in order.
#[derive(Debug, Default)]
pub(crate) struct Tests {
    records: Deflated,
    beside: Vec<Option<Box<Beside>>>,
}

impl Tests {
    /// Appends `test`.
    pub(crate) fn push(&mut self, test: Test) {
        let Test {
            description,
            vars,
            order,
            asserts,
            transform,
            transform_vars,
            affixes,
            no_expansion,
            no_default_asserts,
            repeat,
            provider_output,
            judge,
            embedding,
            rubric_prompt,
            threshold,
            providers,
            line,
        } = test;
        let mut files: Vec<PathBuf> = Vec::new();
        let asserts = asserts
            .into_iter()
            .map(|(item, origin)| {
                let index = match files.iter().position(|f| *f == origin.file) {
                    Some(i) => i,
                    None => {
                        files.push(origin.file);
                        files.len() - 1
                    }
                };
                let index = u32::try_from(index).unwrap_or(u32::MAX);
                (item, (index, origin.line, origin.column))
            })
            .collect();
        let packed = PackedTest {
            description,
            vars,
            order,
            asserts,
            files,
            transform,
            transform_vars,
            affixes,
            no_expansion,
            no_default_asserts,
            repeat,
            provider_output: provider_output.map(|o| o.to_string()),
            rubric_prompt,
            threshold,
            only: providers.only,
            line,
        };
        // Texts, numbers and JSON values always serialize.
        self.records
            .push(&serde_json::to_vec(&packed).unwrap_or_default());
        let beside =
            (judge.is_some() || embedding.is_some() || providers.provider.is_some()).then(|| {
                Box::new(Beside {
                    judge,
                    embedding,
                    provider: providers.provider,
                })
            });
        self.beside.push(beside);
    }

    /// The tests `tests`.
    pub(crate) fn of(tests: impl IntoIterator<Item = Test>) -> Tests {
        let mut out = Tests::default();
        for test in tests {
            out.push(test);
        }
        out
    }

    /// Whether no test is in.
    pub(crate) fn is_empty(&self) -> bool {
        self.beside.is_empty()
    }

    /// Deflates the last block: every test has been read.
    pub(crate) fn seal(&mut self) {
        self.records.seal();
    }

    /// The tests whole again, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Test> + '_ {
        self.records
            .iter()
            .zip(&self.beside)
            .filter_map(|(record, beside)| {
                let packed: PackedTest = serde_json::from_slice(&record).ok()?;
                Some(unpack(packed, beside.as_deref()))
            })
    }
}

/// The test a record and what was kept beside it make.
fn unpack(packed: PackedTest, beside: Option<&Beside>) -> Test {
    let PackedTest {
        description,
        vars,
        order,
        asserts,
        files,
        transform,
        transform_vars,
        affixes,
        no_expansion,
        no_default_asserts,
        repeat,
        provider_output,
        rubric_prompt,
        threshold,
        only,
        line,
    } = packed;
    let asserts = asserts
        .into_iter()
        .map(|(item, (file, line, column))| {
            let origin = Origin {
                file: files.get(file as usize).cloned().unwrap_or_default(),
                line,
                column,
            };
            (item, origin)
        })
        .collect();
    Test {
        description,
        vars,
        order,
        asserts,
        transform,
        transform_vars,
        affixes,
        no_expansion,
        no_default_asserts,
        repeat,
        provider_output: provider_output.map(|o| Arc::from(o.as_str())),
        judge: beside.and_then(|b| b.judge.clone()),
        embedding: beside.and_then(|b| b.embedding.clone()),
        rubric_prompt,
        threshold,
        providers: TestProviders {
            provider: beside.and_then(|b| b.provider.clone()),
            only,
        },
        line,
    }
}
