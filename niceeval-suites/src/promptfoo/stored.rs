//! A promptfoo file's cases from when the file is read until each one runs. Every case is
//! built and checked when the file is read (errors at their places, notices said once, names
//! made unique); then what differs from case to case (its rendered prompt, vars and items, its
//! test's place and description) is kept as one deflated record ([`Deflated`]), and what many
//! cases share (the prompts and providers, a test's graders, options and own provider) once.
//! A case is whole again when it is made to run ([`StoredCases::case`]) and is dropped with its
//! report: the cases of 100,000 inline tests, 170 MB as definitions and cases held for the run
//! (heaptrack), are 5.5 MB here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{Prompt, position};
use crate::deflated::Deflated;
use crate::select_best::Group;
use crate::{Graded, JudgeSpec, Packed, ProviderSpec, SuiteCase};
use niceeval::reporter::MatrixCell;

/// What differs from case to case, as a record.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    line: usize,
    /// The test's 1-based position and description.
    test: usize,
    description: String,
    /// The prompt's and the provider's 1-based positions.
    prompt: usize,
    provider: usize,
    /// The prompt rendered with the vars, or why the case cannot run (`SuiteCase::load_error`).
    text: String,
    error: Option<String>,
    /// The test's `providerOutput`.
    fixed: Option<String>,
    vars: Box<RawValue>,
    asserts: Box<RawValue>,
    /// The case's [`Shared`] part, when its test has one.
    shared: Option<u32>,
    /// Its index in its test's `select-best` group.
    rank: Option<usize>,
}

/// What every case of one test (one of its expansions) shares, when it is not the file's
/// default: graders, options, its own provider, its `select-best` group.
#[derive(Debug)]
struct Shared {
    provider: Option<Arc<ProviderSpec>>,
    graded: Vec<Graded>,
    transform: Option<String>,
    threshold: Option<f64>,
    judge: Option<JudgeSpec>,
    embedding: Option<JudgeSpec>,
    group: Option<Arc<Group>>,
}

/// The cases of a promptfoo file, by index.
#[derive(Debug)]
pub(crate) struct StoredCases {
    records: Deflated,
    /// Every case's name, one after the other, and where each ends.
    names: String,
    ends: Vec<u32>,
    shared: Vec<Shared>,
    prompts: Vec<Prompt>,
    providers: Vec<Arc<ProviderSpec>>,
    labels: (Vec<String>, Vec<String>),
    base_dir: PathBuf,
    /// How many tests the file's tests expand into (known when every case is in).
    total: usize,
}

impl StoredCases {
    /// Cases of a file with these prompts and providers (and their labels, made unique).
    pub(super) fn new(
        base_dir: &Path,
        prompts: &[Prompt],
        providers: &[Arc<ProviderSpec>],
        labels: &(Vec<String>, Vec<String>),
    ) -> Self {
        StoredCases {
            records: Deflated::default(),
            names: String::new(),
            ends: Vec::new(),
            shared: Vec::new(),
            prompts: prompts.to_vec(),
            providers: providers.to_vec(),
            labels: labels.clone(),
            base_dir: base_dir.to_path_buf(),
            total: 0,
        }
    }

    /// Keeps the cases of one test (of one of its expansions), as `cases_of` built them.
    pub(super) fn push(&mut self, cases: Vec<SuiteCase>) {
        let mut shared = None;
        for case in cases {
            let provider = case.matrix.provider.saturating_sub(1);
            let own = self
                .providers
                .get(provider)
                .is_none_or(|p| !Arc::ptr_eq(p, &case.provider));
            let plain = !own
                && case.graded.is_empty()
                && case.transform.is_none()
                && case.threshold.is_none()
                && case.judge.is_none()
                && case.embedding.is_none()
                && case.select_best.is_none();
            if !plain && shared.is_none() {
                self.shared.push(Shared {
                    provider: own.then(|| case.provider.clone()),
                    graded: case.graded.clone(),
                    transform: case.transform.clone(),
                    threshold: case.threshold,
                    judge: case.judge.clone(),
                    embedding: case.embedding.clone(),
                    group: case.select_best.as_ref().map(|(group, _)| group.clone()),
                });
                shared = Some(u32::try_from(self.shared.len() - 1).unwrap_or(u32::MAX));
            }
            let raw = |text: &str| {
                RawValue::from_string(text.to_string())
                    .unwrap_or_else(|_| RawValue::NULL.to_owned())
            };
            let record = Record {
                line: case.line,
                test: case.matrix.test,
                description: case.matrix.description,
                prompt: case.matrix.prompt,
                provider: case.matrix.provider,
                text: case.prompt,
                error: case.load_error.map(|e| e.to_string()),
                fixed: case.fixed_output.map(|o| o.to_string()),
                vars: raw(case.vars.text()),
                asserts: raw(case.asserts.text()),
                shared: shared.filter(|_| !plain),
                rank: case.select_best.map(|(_, rank)| rank),
            };
            // Texts, numbers and JSON text always serialize.
            self.records
                .push(&serde_json::to_vec(&record).unwrap_or_default());
            self.names.push_str(&case.name);
            self.ends
                .push(u32::try_from(self.names.len()).unwrap_or(u32::MAX));
        }
    }

    /// Every case is in: the file's tests expand into `total`.
    pub(super) fn finish(mut self, total: usize) -> Self {
        self.records.seal();
        self.names.shrink_to_fit();
        self.ends.shrink_to_fit();
        self.total = total;
        self
    }

    /// How many cases.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Case `index`'s name.
    pub(crate) fn name(&self, index: usize) -> &str {
        let start = match index {
            0 => 0,
            i => self.ends.get(i - 1).copied().unwrap_or(0) as usize,
        };
        let end = self.ends.get(index).copied().unwrap_or(0) as usize;
        self.names.get(start..end).unwrap_or_default()
    }

    /// Case `index`, whole; `None` past the last one (or if its record cannot be read back).
    pub(crate) fn case(&self, index: usize) -> Option<SuiteCase> {
        let record = self.records.get(index)?;
        let record: Record = serde_json::from_slice(&record).ok()?;
        let (p, q) = (
            record.prompt.checked_sub(1)?,
            record.provider.checked_sub(1)?,
        );
        let prompt = self.prompts.get(p)?;
        let provider = self.providers.get(q)?;
        let shared = match record.shared {
            Some(i) => Some(self.shared.get(i as usize)?),
            None => None,
        };
        Some(SuiteCase {
            name: self.name(index).to_string(),
            line: record.line,
            prompt: record.text,
            prompt_function: prompt.function.clone(),
            load_error: record.error.map(Arc::from),
            fixed_output: record.fixed.map(Arc::from),
            provider: shared
                .and_then(|s| s.provider.clone())
                .unwrap_or_else(|| provider.clone()),
            vars: Packed::from_text(record.vars.get()),
            asserts: Packed::from_text(record.asserts.get()),
            graded: shared.map(|s| s.graded.clone()).unwrap_or_default(),
            transform: shared.and_then(|s| s.transform.clone()),
            threshold: shared.and_then(|s| s.threshold),
            judge: shared.and_then(|s| s.judge.clone()),
            embedding: shared.and_then(|s| s.embedding.clone()),
            select_best: shared.and_then(|s| s.group.clone()).zip(record.rank),
            base_dir: self.base_dir.clone(),
            expected_output: None,
            criteria: None,
            position: position(
                record.test.saturating_sub(1),
                self.total,
                (p, prompt),
                (q, provider),
            ),
            trajectories: Vec::new(),
            agentv: None,
            matrix: MatrixCell::new(
                record.test,
                record.description,
                (record.prompt, self.labels.0.get(p)?.clone()),
                (record.provider, self.labels.1.get(q)?.clone()),
            )
            .columns(self.prompts.len() * self.providers.len()),
        })
    }
}
