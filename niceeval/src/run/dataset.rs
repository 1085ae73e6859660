//! Dataset evals (`#[eval(cases = "..")]`): the cases of one, read from its file when asked
//! (so a suite runs the file as it is now, without a rebuild), each made into an eval of its
//! own when its turn to run comes, and a case's record turned into the function's case type
//! with the path of a field that does not fit.
//!
//! A case's eval is `<function>::<case>`, sharing the dataset eval's options. A run holds the
//! file's [`Cases`] — each case's name and where its record is ([`niceeval_dataset::Index`]),
//! a few bytes a case, read once per process — and makes each case's definition as it runs it,
//! dropped with its report: a million cases are never all made at once. The file format and
//! naming rules are `niceeval_dataset`'s, shared with the macro that names one test per case at
//! compile time.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use serde::de::DeserializeOwned;

use crate::run::definition::{Case, EvalDefinition, Owned};
use crate::run::error::Error;

/// The cases of a dataset eval, listed by name: the suite runner lists, filters and counts
/// them by index and name, and makes each one ([`Cases::make`]) when it runs it.
#[derive(Debug)]
pub struct Cases {
    def: &'static EvalDefinition,
    index: niceeval_dataset::Index,
}

impl Cases {
    /// How many cases.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether there are none (never: a dataset of no case cannot be read).
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The dataset eval.
    pub fn def(&self) -> &'static EvalDefinition {
        self.def
    }

    /// Case `i`'s name (`paris`): the last segment of its eval's id.
    pub fn name(&self, i: usize) -> &str {
        self.index.name(i)
    }

    /// Case `i`'s eval id (`evals::capitals::paris`), as [`EvalDefinition::id`].
    pub fn id(&self, i: usize) -> String {
        format!("{}::{}", self.def.id(), self.name(i))
    }

    /// Case `i`'s test name, as [`EvalDefinition::test_name`]: what filters match.
    pub fn test_name(&self, i: usize) -> String {
        format!("{}::{}", self.def.test_name(), self.name(i))
    }

    /// The position of the case named `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.index.position(name)
    }

    /// Case `i`'s definition, its record read from the file now: it owns its name and case,
    /// and is dropped with its report.
    pub fn make(&self, i: usize) -> Result<EvalDefinition, Error> {
        let case = self.index.case(i).map_err(|source| Error::Dataset {
            eval: self.def.id(),
            source: Arc::new(source),
        })?;
        Ok(self.definition(Case {
            id: case.id,
            name: case.name,
            line: case.line,
            record: case.record,
            matrix: None,
        }))
    }

    /// A definition that only names case `i` (its record is not read): the report of a case
    /// that is not run, or could not be made, is built on it.
    pub fn named(&self, i: usize) -> EvalDefinition {
        let name = self.name(i).to_string();
        self.definition(Case {
            id: name.clone(),
            name,
            line: self.index.line(i),
            record: serde_json::value::RawValue::from_string("null".into())
                .unwrap_or_else(|_| unreachable!("`null` is JSON")),
            matrix: None,
        })
    }

    fn definition(&self, case: Case) -> EvalDefinition {
        let parent = self.def;
        EvalDefinition {
            name: "",
            case: None,
            data: parent.data.clone(),
            owned: Some(Box::new(Owned {
                name: format!("{}::{}", parent.name, case.name),
                description: parent.description.map(str::to_string),
                case,
            })),
            ..*parent
        }
    }
}

/// The cases of the dataset eval `def`, read from its file the first time a process asks
/// (later calls share them); `None` when `def` is not a dataset eval (or is one of its cases).
/// A dataset that cannot be read is an error naming the file (and line); the caller reports it
/// as that eval's failure while the others run.
///
/// ```no_run
/// for def in niceeval::__workspace::registered() {
///     match niceeval::__workspace::dataset::cases(def) {
///         Some(Ok(cases)) => println!("{}: {} case(s)", def.id(), cases.len()),
///         Some(Err(e)) => eprintln!("{}: {e}", def.id()),
///         None => println!("{}: an eval", def.id()),
///     }
/// }
/// ```
pub fn cases(def: &'static EvalDefinition) -> Option<Result<Arc<Cases>, Error>> {
    let dataset = def.dataset.filter(|_| def.own_case().is_none())?;
    type Read = Result<Arc<Cases>, Arc<niceeval_dataset::DatasetError>>;
    static READ: OnceLock<Mutex<HashMap<usize, Read>>> = OnceLock::new();
    let mut read = READ
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let key = def as *const EvalDefinition as usize;
    let cases = read.entry(key).or_insert_with(|| {
        let path = Path::new(def.manifest_dir).join(dataset.path);
        let index = niceeval_dataset::index(&path).map_err(Arc::new)?;
        Ok(Arc::new(Cases { def, index }))
    });
    Some(cases.clone().map_err(|source| Error::Dataset {
        eval: def.id(),
        source,
    }))
}

/// The evals `def` stands for: itself, or — for a dataset eval — one per case of its file, in
/// file order, each defined for the rest of the process (the suite runner makes each case as
/// it runs it instead: [`cases`]). A dataset that cannot be read is an error naming the file
/// (and line).
///
/// ```no_run
/// for def in niceeval::__workspace::registered() {
///     match niceeval::__workspace::dataset::expand(def) {
///         Ok(evals) => println!("{}: {} eval(s)", def.id(), evals.len()),
///         Err(e) => eprintln!("{}: {e}", def.id()),
///     }
/// }
/// ```
pub fn expand(def: &'static EvalDefinition) -> Result<Vec<&'static EvalDefinition>, Error> {
    let Some(cases) = cases(def) else {
        return Ok(vec![def]);
    };
    let cases = cases?;
    (0..cases.len())
        .map(|i| Ok(&*Box::leak(Box::new(cases.make(i)?))))
        .collect()
}

/// A reproducible sample of `count` of `cases` (all of them when there are fewer), in file
/// order: the same seed draws the same cases from the same file.
pub fn sample<T>(cases: Vec<T>, count: usize, seed: u64) -> Vec<T> {
    if count >= cases.len() {
        return cases;
    }
    // splitmix64 and a partial Fisher-Yates shuffle of the indices, written here so a seed
    // draws the same cases in every version of niceeval (a general-purpose generator crate
    // does not promise a stable stream across its releases).
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut indices: Vec<usize> = (0..cases.len()).collect();
    for i in 0..count {
        let j = i + (next() % (indices.len() - i) as u64) as usize;
        indices.swap(i, j);
    }
    let mut chosen = indices[..count].to_vec();
    chosen.sort_unstable();
    let mut keep = vec![false; cases.len()];
    for i in chosen {
        keep[i] = true;
    }
    cases
        .into_iter()
        .zip(keep)
        .filter_map(|(case, keep)| keep.then_some(case))
        .collect()
}

/// The case named `name` of the dataset eval `def`, for the test the macro generated for it
/// under plain `cargo test` (defined for the rest of the process: a test runs one case).
pub(crate) fn case_named(
    def: &'static EvalDefinition,
    name: &str,
) -> Result<&'static EvalDefinition, Error> {
    let cases = match cases(def) {
        Some(cases) => cases?,
        None => return Err(Error::Case(format!("{} is not a dataset eval", def.id()))),
    };
    let i = cases.position(name).ok_or_else(|| {
        Error::Case(format!(
            "case `{name}` is no longer in {} (the file changed after this test binary was built; `cargo test` rebuilds it)",
            def.dataset.map_or("the dataset", |d| d.path)
        ))
    })?;
    Ok(Box::leak(Box::new(cases.make(i)?)))
}

/// The record of `case` as the function's case type; a field that does not fit is an error
/// naming its path, the case and the file's line (`path` is the dataset file).
#[doc(hidden)]
pub fn from_record<T: DeserializeOwned>(case: &Case, path: &str) -> Result<T, Error> {
    let record: serde_json::Value = serde_json::from_str(case.record.get()).map_err(|e| {
        Error::Case(format!(
            "{path}:{}: {} is not JSON: {e}",
            case.line, case.name
        ))
    })?;
    serde_path_to_error::deserialize(&record).map_err(|e| {
        let field = e.path().to_string();
        let at = format!("{path}:{}: ", case.line);
        let case = case.name.as_str();
        Error::Case(if field == "." {
            format!(
                "{at}{case} does not fit the eval's case type: {}",
                e.inner()
            )
        } else {
            format!(
                "{at}{case} does not fit the eval's case type at `{field}`: {}",
                e.inner()
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Capital {
        question: String,
        answer: String,
        #[serde(default)]
        tags: Vec<String>,
    }

    fn case(record: serde_json::Value) -> Case {
        Case {
            id: "paris".into(),
            name: "paris".into(),
            line: 3,
            record: serde_json::value::to_raw_value(&record).expect("JSON"),
            matrix: None,
        }
    }

    #[test]
    fn a_record_that_does_not_fit_names_the_field() {
        let err = from_record::<Capital>(
            &case(serde_json::json!({"question": "Capital?", "answer": 7})),
            "evals/capitals.jsonl",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("evals/capitals.jsonl:3: paris does not fit the eval's case type at `answer`: invalid type: integer `7`, expected a string"),
            "{err}"
        );
        let err = from_record::<Capital>(
            &case(serde_json::json!({"question": "Capital?", "answer": "Paris", "tags": ["a", 1]})),
            "c.jsonl",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("at `tags[1]`"), "{err}");
        let err = from_record::<Capital>(&case(serde_json::json!({"question": "Capital?"})), "c")
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing field `answer`"), "{err}");
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        let cases: Vec<u32> = (1..=100).collect();
        let a = crate::run::dataset::sample(cases.clone(), 10, 7);
        assert_eq!(a.len(), 10);
        assert_eq!(a, crate::run::dataset::sample(cases.clone(), 10, 7));
        assert_ne!(a, crate::run::dataset::sample(cases, 10, 8));
        assert!(a.windows(2).all(|w| w[0] < w[1]));
    }
}
