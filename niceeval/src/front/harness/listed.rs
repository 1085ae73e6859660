//! What the suite runner lists, selects and runs: a definition of the process, a case of a
//! dataset eval ([`Cases`]) or a case of [`Deferred`] data evals, each case named from its
//! source and made only when its turn to run comes (see
//! [`crate::run::data_eval::Deferred`]). A listed case costs its index; its definition, record
//! and texts exist while it runs.

use std::sync::Arc;

use crate::run::data_eval::{Deferred, Place};
use crate::run::dataset::Cases;
use crate::run::definition::{Def, EvalDefinition};
use crate::run::error::Error;
use crate::run::report::{EvalIds, IdList};

/// One eval of a run: a definition, case `.1` of a dataset eval, or case `.1` of deferred
/// data evals.
#[derive(Clone)]
pub(crate) enum Listed {
    Defined(&'static EvalDefinition),
    Case(Arc<Cases>, usize),
    /// The deferred evals behind a thin pointer: a listed case is 24 bytes, not 32 (a
    /// million of them are listed at once).
    Deferred(Arc<Arc<dyn Deferred>>, usize),
}

impl Listed {
    /// Every case of `deferred`, in order.
    pub(crate) fn cases(deferred: Arc<dyn Deferred>) -> impl Iterator<Item = Listed> {
        let deferred = Arc::new(deferred);
        (0..deferred.len()).map(move |index| Listed::Deferred(deferred.clone(), index))
    }

    /// `module::name`, as [`EvalDefinition::id`].
    pub(crate) fn id(&self) -> String {
        match self {
            Listed::Defined(def) => def.id(),
            Listed::Case(cases, index) => cases.id(*index),
            Listed::Deferred(cases, index) => deferred_id(&***cases, *index),
        }
    }

    /// The name filters match, as [`EvalDefinition::test_name`].
    pub(crate) fn test_name(&self) -> String {
        match self {
            Listed::Defined(def) => def.test_name(),
            Listed::Case(cases, index) => cases.test_name(*index),
            Listed::Deferred(cases, index) => match cases.module().split_once("::") {
                Some((_, module)) => format!("{module}::{}", cases.name(*index)),
                None => cases.name(*index).into_owned(),
            },
        }
    }

    /// `#[eval(tags = [..])]` (a dataset's case has its dataset's; a deferred case has none).
    pub(crate) fn tags(&self) -> &'static [&'static str] {
        match self {
            Listed::Defined(def) => def.tags,
            Listed::Case(cases, _) => cases.def().tags,
            Listed::Deferred(..) => &[],
        }
    }

    /// `#[ignore]` (a dataset's case when its dataset is; a deferred case never is).
    pub(crate) fn ignored(&self) -> bool {
        match self {
            Listed::Defined(def) => def.ignored,
            Listed::Case(cases, _) => cases.def().ignored,
            Listed::Deferred(..) => false,
        }
    }

    /// The directory `niceeval.toml` is looked up from.
    pub(crate) fn manifest_dir(&self) -> &str {
        match self {
            Listed::Defined(def) => def.manifest_dir,
            Listed::Case(cases, _) => cases.def().manifest_dir,
            Listed::Deferred(cases, _) => cases.dir(),
        }
    }

    /// The definition the engine runs: a case is made now (a dataset's record read from its
    /// file), and its definition is dropped with the report of its run.
    pub(crate) fn definition(&self) -> Result<Def, Error> {
        match self {
            Listed::Defined(def) => Ok(Def::Static(def)),
            Listed::Case(cases, index) => Ok(Def::Made(Arc::new(cases.make(*index)?))),
            Listed::Deferred(cases, index) => {
                Ok(Def::Made(Arc::new(cases.make(*index)?.definition())))
            }
        }
    }

    /// A definition that only names the eval (no body, no data): the report of a case that
    /// could not be made, or of one not run, is built on it.
    pub(crate) fn named(&self) -> Def {
        match self {
            Listed::Defined(def) => Def::Static(def),
            Listed::Case(cases, index) => Def::Made(Arc::new(cases.named(*index))),
            Listed::Deferred(cases, index) => {
                let place = Place::new(
                    cases.name(*index),
                    cases.module(),
                    String::new(),
                    0,
                    cases.dir(),
                );
                Def::Made(Arc::new(crate::run::data_eval::Made::unmade(place)))
            }
        }
    }
}

/// Case `index`'s id of deferred data evals: `module::name`.
fn deferred_id(cases: &dyn Deferred, index: usize) -> String {
    format!("{}::{}", cases.module(), cases.name(index))
}

/// The ids of `listed`, in order, as the suite's start gives them to the reporters:
/// consecutive cases of one dataset or suite file are one entry of [`EvalIds`], each id made
/// when a reporter reads it.
pub(crate) fn eval_ids(listed: &[Listed]) -> EvalIds {
    let mut ids = EvalIds::default();
    // Each list's entry, made once (few: a run's datasets and suite files).
    let mut lists: Vec<(*const (), Arc<dyn IdList>)> = Vec::new();
    let mut list_of = |key: *const (), make: &dyn Fn() -> Arc<dyn IdList>| match lists
        .iter()
        .find(|(k, _)| std::ptr::addr_eq(*k, key))
    {
        Some((_, list)) => list.clone(),
        None => {
            let list = make();
            lists.push((key, list.clone()));
            list
        }
    };
    for item in listed {
        match item {
            Listed::Defined(def) => ids.push(def.id()),
            Listed::Case(cases, index) => {
                let key = Arc::as_ptr(cases).cast::<()>();
                let list = list_of(key, &|| Arc::new(CaseIds(cases.clone())));
                ids.push_listed(&list, *index);
            }
            Listed::Deferred(cases, index) => {
                let key = Arc::as_ptr(cases).cast::<()>();
                let list = list_of(key, &|| Arc::new(DeferredIds(cases.clone())));
                ids.push_listed(&list, *index);
            }
        }
    }
    ids
}

/// A dataset's cases as a list of ids.
struct CaseIds(Arc<Cases>);

impl IdList for CaseIds {
    fn id(&self, index: usize) -> String {
        self.0.id(index)
    }
}

/// Deferred data evals as a list of ids.
struct DeferredIds(Arc<Arc<dyn Deferred>>);

impl IdList for DeferredIds {
    fn id(&self, index: usize) -> String {
        deferred_id(&**self.0, index)
    }
}

#[cfg(test)]
mod tests {
    /// A run lists every case it selects at once: a million of them.
    #[test]
    fn a_listed_case_takes_24_bytes() {
        assert_eq!(std::mem::size_of::<super::Listed>(), 24);
    }
}
