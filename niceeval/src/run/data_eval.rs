//! Evals defined from data at run time rather than by `#[eval]` functions: the interface a
//! runner of other tools' cases (promptfoo and AgentV suite files, in `niceeval-suites`) builds
//! on. A [`DataEval`] is a typed case: the engine asks it, before each run, for the run's agent,
//! judge and earlier turns ([`DataEval::start`]), builds the handle with them, then runs its body
//! ([`DataEval::run`]) like any eval's — under the timeout, with scoped checks graded after it.
//! [`define`] makes the [`EvalDefinition`] the suite runner takes.
//!
//! ```
//! use std::sync::Arc;
//! use niceeval::data_eval::{self, DataEval, Setup, Start};
//! use niceeval::prelude::*;
//!
//! /// One row of a table of questions: its own echo agent, one check.
//! struct Row {
//!     question: String,
//!     expected: String,
//! }
//!
//! impl DataEval for Row {
//!     type Run = ();
//!
//!     fn start<'a>(&'a self, _setup: &'a Setup) -> data_eval::BoxFuture<'a, niceeval::Result<Start<()>>> {
//!         let echo = agent_fn(|request: Request| async move {
//!             request.events.say(request.input.text.clone());
//!             Ok(())
//!         });
//!         Box::pin(async move { Ok(Start::new(()).with_agent(Arc::new(echo))) })
//!     }
//!
//!     fn run<'a>(&'a self, t: &'a mut Eval, _run: ()) -> data_eval::BoxFuture<'a, niceeval::Result> {
//!         Box::pin(async move {
//!             t.send(self.question.as_str()).await?;
//!             t.check(t.reply(), includes(self.expected.as_str()));
//!             Ok(())
//!         })
//!     }
//! }
//!
//! let def = data_eval::define(
//!     data_eval::Place::new("capital", "table::rows", "rows.csv", 2, env!("CARGO_MANIFEST_DIR")),
//!     Row { question: "Is Paris the capital?".into(), expected: "Paris".into() },
//! );
//! assert_eq!(def.id(), "table::rows::capital");
//! ```

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

use crate::run::definition::{
    Case, Defined, Erased, ErasedStart, EvalDefinition, MatrixCell, Owned,
};
use crate::run::error::Error;
use crate::run::eval::Eval;

pub use crate::run::definition::{BoxFuture, JudgeTarget, Setup, Start};

/// One eval defined from data: the case itself, holding whatever it needs to run.
pub trait DataEval: Send + Sync + 'static {
    /// What [`DataEval::start`] hands to [`DataEval::run`] for one run.
    type Run: Send + 'static;

    /// Before the run's handle exists: the agent the run sends to, the judge its model-graded
    /// checks ask and the earlier turns its conversation starts from. Counted in the run's
    /// timeout; an error here is the run's execution error.
    fn start<'a>(&'a self, setup: &'a Setup) -> BoxFuture<'a, Result<Start<Self::Run>, Error>>;

    /// The body: sends, checks and registers, as an `#[eval]` function's body does.
    fn run<'a>(&'a self, t: &'a mut Eval, run: Self::Run) -> BoxFuture<'a, Result<(), Error>>;
}

/// Where a data eval is defined: its name, the module path it is listed under (its id is
/// `module::name`), the file and line it comes from and the directory `niceeval.toml` and the
/// results belong to.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Place {
    /// The eval's name (the last segment of its id).
    pub name: String,
    /// The module path it is listed under.
    pub module: String,
    /// The file it comes from, as reports show it.
    pub file: String,
    /// The 1-based line it starts on.
    pub line: u32,
    /// The directory `niceeval.toml` is looked up from and the results belong to.
    pub dir: String,
    /// A description for reports.
    pub description: Option<String>,
    /// `runs = N`.
    pub runs: Option<u32>,
    /// A template directory each run gets a working copy of (relative to `dir`).
    pub workspace: Option<String>,
    /// Where the case sits in its file's tests × prompts × providers.
    pub matrix: Option<MatrixCell>,
}

impl Place {
    /// The eval `module::name`, from line `line` of `file`, run with the configuration of `dir`.
    pub fn new(
        name: impl Into<String>,
        module: impl Into<String>,
        file: impl Into<String>,
        line: u32,
        dir: impl Into<String>,
    ) -> Self {
        Place {
            name: name.into(),
            module: module.into(),
            file: file.into(),
            line,
            dir: dir.into(),
            description: None,
            runs: None,
            workspace: None,
            matrix: None,
        }
    }

    /// Described as `description` in reports.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Run `runs` times (`None`: as the configuration says).
    pub fn runs(mut self, runs: Option<u32>) -> Self {
        self.runs = runs;
        self
    }

    /// Each run gets a working copy of `dir` (relative to the place's directory).
    pub fn workspace(mut self, dir: Option<String>) -> Self {
        self.workspace = dir;
        self
    }

    /// Placed at `cell` of its file's matrix.
    pub fn matrix(mut self, cell: MatrixCell) -> Self {
        self.matrix = Some(cell);
        self
    }
}

/// The eval definition of `eval` at `place`, for the suite runner. It is listed, reported and
/// filtered as a case of its file (as a dataset eval's cases are: [`crate::EvalReport::dataset`]
/// is `place.module`), and lives as long as the process, as the definitions `#[eval]` makes do.
pub fn define<D: DataEval>(place: Place, eval: D) -> &'static EvalDefinition {
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let file = leak(place.file);
    let case: &'static Case = Box::leak(Box::new(Case {
        id: place.name.clone(),
        name: place.name.clone(),
        line: usize::try_from(place.line).unwrap_or(usize::MAX),
        record: no_record(),
        matrix: place.matrix,
    }));
    let mut def = EvalDefinition::new(
        leak(place.name),
        leak(place.module),
        file,
        place.line,
        leak(place.dir),
        not_a_function,
    )
    .with_cases(file, not_a_record);
    def.case = Some(case);
    def.runs = place.runs;
    def.description = place.description.map(leak);
    def.workspace = place.workspace.map(leak);
    def.data = Some(Defined(Arc::new(eval)));
    Box::leak(Box::new(def))
}

/// A case of [`Deferred`] evals as its source makes it when its turn to run comes: where it is
/// and the data eval it runs.
pub struct Made {
    place: Place,
    eval: Defined,
}

impl Made {
    /// Case `eval` at `place`.
    pub fn new<D: DataEval>(place: Place, eval: D) -> Self {
        Made {
            place,
            eval: Defined(Arc::new(eval)),
        }
    }

    /// Its definition for the rest of the process, as [`define`] makes one.
    pub fn define(self) -> &'static EvalDefinition {
        Box::leak(Box::new(self.definition()))
    }

    /// Its definition for one run: it owns its name, description and case (the text every
    /// case of a file shares, its module, file and directory, is kept once per process).
    pub(crate) fn definition(self) -> EvalDefinition {
        owned_definition(self.place, Some(self.eval))
    }

    /// A definition that only names an eval at `place`, with nothing to run: the report of a
    /// deferred case that could not be made is built on it.
    pub(crate) fn unmade(place: Place) -> EvalDefinition {
        owned_definition(place, None)
    }
}

/// The definition of `eval` at `place` for one run, owning its name, description and case.
fn owned_definition(place: Place, eval: Option<Defined>) -> EvalDefinition {
    let file = shared(&place.file);
    let mut def = EvalDefinition::new(
        "",
        shared(&place.module),
        file,
        place.line,
        shared(&place.dir),
        not_a_function,
    )
    .with_cases(file, not_a_record);
    def.runs = place.runs;
    def.workspace = place.workspace.as_deref().map(shared);
    def.data = eval;
    def.owned = Some(Box::new(Owned {
        case: Case {
            id: place.name.clone(),
            name: place.name.clone(),
            line: usize::try_from(place.line).unwrap_or(usize::MAX),
            record: no_record(),
            matrix: place.matrix,
        },
        name: place.name,
        description: place.description,
    }));
    def
}

/// Data evals listed by name and made one at a time, each when its turn to run comes, and
/// dropped with its report: a runner of many cases (a suite file of 100,000 tests) keeps only
/// what it needs to make each one again, so a run never holds every case's definition, data
/// and texts at once. The suite runner lists, filters and counts the cases by
/// [`Deferred::name`], and calls [`Deferred::make`] for those it runs, in increasing
/// `index` order.
pub trait Deferred: Send + Sync + 'static {
    /// How many cases.
    fn len(&self) -> usize;

    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The module path every case is listed under: case `index`'s id is
    /// `module::name(index)`, and its [`Place`] names the same.
    fn module(&self) -> &str;

    /// The directory `niceeval.toml` is looked up from and the results belong to (every
    /// case's [`Place::dir`]).
    fn dir(&self) -> &str;

    /// Case `index`'s name (`index` below [`Deferred::len`]).
    fn name(&self, index: usize) -> Cow<'_, str>;

    /// Makes case `index`; an error is that case's failure (the others run).
    fn make(&self, index: usize) -> Result<Made, Error>;
}

/// `text`, kept once for the rest of the process: the module, file and directory every case of
/// a file shares, leaked once however many of its cases are made.
fn shared(text: &str) -> &'static str {
    static SHARED: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut shared = SHARED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    match shared.get(text) {
        Some(kept) => kept,
        None => {
            let kept: &'static str = Box::leak(text.to_string().into_boxed_str());
            shared.insert(kept);
            kept
        }
    }
}

/// A data eval carries its case as itself, not as a record.
fn no_record() -> Box<serde_json::value::RawValue> {
    serde_json::value::RawValue::from_string("null".into())
        .unwrap_or_else(|_| unreachable!("`null` is JSON"))
}

/// The bodies of a data eval's definition, which the engine never calls: it runs the
/// definition's [`DataEval`].
fn not_a_function(_: &mut Eval) -> BoxFuture<'_, Result<(), Error>> {
    Box::pin(async { Err(Error::Case("a data eval runs through its DataEval".into())) })
}

fn not_a_record<'a>(t: &'a mut Eval, _: &'a Case) -> BoxFuture<'a, Result<(), Error>> {
    not_a_function(t)
}

impl<D: DataEval> Erased for D {
    fn start<'a>(&'a self, setup: &'a Setup) -> BoxFuture<'a, Result<ErasedStart, Error>> {
        Box::pin(async move {
            let start = DataEval::start(self, setup).await?;
            Ok(Start {
                agent: start.agent,
                judge: start.judge,
                history: start.history,
                run: Box::new(start.run) as Box<dyn std::any::Any + Send>,
            })
        })
    }

    fn run<'a>(
        &'a self,
        t: &'a mut Eval,
        run: Box<dyn std::any::Any + Send>,
    ) -> BoxFuture<'a, Result<(), Error>> {
        match run.downcast::<D::Run>() {
            Ok(run) => DataEval::run(self, t, *run),
            // Only the engine pairs a start with its run, and always of one eval.
            Err(_) => Box::pin(async {
                Err(Error::Case(
                    "a data eval's run got the state of another eval".into(),
                ))
            }),
        }
    }
}
