//! Dataset evals (`#[eval(cases = "..")]`): expanding one into an eval per case, read from its
//! file when asked (so a suite runs the file as it is now, without a rebuild), and turning a
//! case's record into the function's case type with the path of a field that does not fit.
//!
//! A case's eval is a definition of its own, `<function>::<case>`, sharing the dataset eval's
//! options; it lives for the rest of the process (cases are read once per process and test
//! binary, and kept). The file format and naming rules are `niceeval_dataset`'s, shared with
//! the macro that names one test per case at compile time.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use serde::de::DeserializeOwned;

use crate::run::definition::{Case, EvalDefinition};
use crate::run::error::Error;

/// The evals `def` stands for: itself, or — for a dataset eval — one per case of its file, in
/// file order. A dataset that cannot be read is an error naming the file (and line); the
/// caller reports it as that eval's failure while the others run. Reads the file once per
/// process.
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
    let Some(dataset) = def.dataset.filter(|_| def.case.is_none()) else {
        return Ok(vec![def]);
    };
    type Expanded = Result<Vec<&'static EvalDefinition>, Arc<niceeval_dataset::DatasetError>>;
    static EXPANDED: OnceLock<Mutex<HashMap<usize, Expanded>>> = OnceLock::new();
    let mut cache = EXPANDED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let key = def as *const EvalDefinition as usize;
    let expanded = cache.entry(key).or_insert_with(|| {
        let path = Path::new(def.manifest_dir).join(dataset.path);
        let cases = niceeval_dataset::read(&path).map_err(Arc::new)?;
        Ok(cases
            .into_iter()
            .map(|case| case_definition(def, case))
            .collect())
    });
    expanded.clone().map_err(|source| Error::Dataset {
        eval: def.id(),
        source,
    })
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

/// The definition of one case of the dataset eval `parent`.
fn case_definition(
    parent: &'static EvalDefinition,
    case: niceeval_dataset::Case,
) -> &'static EvalDefinition {
    let name: &'static str = Box::leak(format!("{}::{}", parent.name, case.name).into_boxed_str());
    let case: &'static Case = Box::leak(Box::new(Case {
        id: case.id,
        name: case.name,
        line: case.line,
        record: case.record,
        matrix: None,
    }));
    Box::leak(Box::new(EvalDefinition {
        name,
        case: Some(case),
        data: parent.data.clone(),
        owned: None,
        ..*parent
    }))
}

/// The case named `name` of the dataset eval `def`, for the test the macro generated for it
/// under plain `cargo test`.
pub(crate) fn case_named(
    def: &'static EvalDefinition,
    name: &str,
) -> Result<&'static EvalDefinition, Error> {
    let cases = expand(def)?;
    cases
        .into_iter()
        .find(|d| d.case.is_some_and(|c| c.name == name))
        .ok_or_else(|| {
            Error::Case(format!(
                "case `{name}` is no longer in {} (the file changed after this test binary was built; `cargo test` rebuilds it)",
                def.dataset.map_or("the dataset", |d| d.path)
            ))
        })
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
