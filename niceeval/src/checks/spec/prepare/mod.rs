//! Turning an [`AssertSpec`] into an assertion: validation (every load-time error) and the
//! prepared form cached on the spec, instantiated per evaluation with the [`SpecContext`].

mod builtin;
mod run_facts;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{AssertSpec, ItemProblem, SpecContext};
use crate::base::assertion::Transform;
use crate::base::assertion::{
    Assertion, Chain, CheckContext, Configured, Grade, Settings, Subject, passes,
};
use crate::base::grader::{GraderInput, GraderMessage};
use crate::checks::expect::type_names as types;
use crate::checks::expect::{self, BoxedAssertion, IntoBoxed};
use builtin::{applies_not_itself, builtin, config_with_extra};

/// A validated spec, ready to instantiate.
pub(crate) struct Prepared {
    /// For context-free types, the whole assertion with its settings, built once.
    built: Option<Arc<dyn Assertion + Send + Sync>>,
    base: Base,
    negate: bool,
    threshold: Option<f64>,
    weight: Option<f64>,
    metric: Option<String>,
    transform: Option<Transform>,
    name: Option<String>,
}

pub(super) enum Base {
    /// A matcher that needs nothing from the context, built once.
    Static(Arc<dyn Assertion + Send + Sync>),
    Cost(f64),
    Latency(f64),
    #[cfg(feature = "inline-code")]
    Code {
        python: bool,
        code: String,
        config: Option<Value>,
    },
    Script {
        command: Vec<String>,
        config: Option<Value>,
        /// Where the command runs (`cwd`), relative to the base directory.
        cwd: Option<PathBuf>,
    },
    Custom {
        name: String,
        config: Option<Value>,
    },
    Set(Vec<Prepared>),
    /// A type that reads the provider's response or the run's trace, or asks a service; it
    /// reaches its own verdict, `not-` included.
    Facts(run_facts::Fact),
}

/// Validates and prepares one spec.
pub(crate) fn prepare(spec: &AssertSpec) -> Result<Prepared, ItemProblem> {
    let normalized = types::normalize(&spec.kind);
    if normalized.is_empty() {
        return Err(ItemProblem::invalid("the `type` is empty"));
    }
    let (mut negate, name) = match normalized.strip_prefix("not-") {
        Some(rest) if types::builtin(rest).is_some() || types::builtin(&normalized).is_none() => {
            (true, rest.to_string())
        }
        _ => (false, normalized.clone()),
    };
    let transform = match &spec.transform {
        None => None,
        Some(t) => Some(parse_transform(t)?),
    };
    if let Some(w) = spec.weight
        && (!w.is_finite() || w < 0.0)
    {
        return Err(ItemProblem::invalid(format!(
            "`weight` must be a number ≥ 0, got {w}"
        )));
    }
    if let Some(t) = spec.threshold
        && !t.is_finite()
    {
        return Err(ItemProblem::invalid(format!(
            "`threshold` must be a number, got {t}"
        )));
    }
    let mut threshold = spec.threshold;
    let base = match types::builtin(&name) {
        Some(b) => {
            let (base, uses_threshold) = builtin(b, spec)?;
            if applies_not_itself(b) {
                negate = false;
            }
            if !uses_threshold {
                threshold = None;
            }
            base
        }
        None => {
            let custom = name.strip_prefix("custom:").unwrap_or(&name).to_string();
            if custom.is_empty() {
                return Err(ItemProblem::invalid("`custom:` needs a name"));
            }
            if !custom
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
            {
                return Err(ItemProblem::invalid(unknown_type(&spec.kind, &[])));
            }
            Base::Custom {
                name: custom_name(&spec.kind),
                config: config_with_extra(spec),
            }
        }
    };
    let mut prepared = Prepared {
        built: None,
        base,
        negate,
        threshold,
        weight: spec.weight,
        metric: spec.metric.clone(),
        transform,
        name: spec.name.clone(),
    };
    if let Base::Static(a) = &prepared.base {
        let whole = prepared.wrap(Shared(a.clone()).boxed());
        prepared.built = Some(Arc::from(whole));
    }
    Ok(prepared)
}

/// The custom assertion's file name as written (case kept, `not-`/`custom:` removed).
fn custom_name(kind: &str) -> String {
    let kind = kind.trim();
    let kind = if kind.len() > 4 && kind[..4].eq_ignore_ascii_case("not-") {
        &kind[4..]
    } else {
        kind
    };
    kind.strip_prefix("custom:").unwrap_or(kind).to_string()
}

/// Why `kind` names no assertion type, with the closest name (built-in, alias, or one of
/// `custom`, the custom assertions found) when one is close enough to be a typo.
fn unknown_type(kind: &str, custom: &[&str]) -> String {
    let normalized = types::normalize(kind);
    let (prefix, bare) = match normalized.strip_prefix("not-") {
        Some(rest) => ("not-", rest),
        None => ("", normalized.as_str()),
    };
    let names = types::canonical_names();
    let mut candidates: Vec<&str> = types::accepted_names().collect();
    candidates.extend(custom.iter().copied());
    let suggestion = crate::base::suggest::closest(bare, candidates)
        .map(|near| format!("; did you mean `{prefix}{near}`?"))
        .unwrap_or_else(|| ".".to_string());
    format!(
        "unknown assertion type `{kind}`{suggestion} Valid types: {} (each also with a `not-` prefix), or the name of a custom assertion in {}/",
        names.join(", "),
        expect::CUSTOM_ASSERTIONS_DIR
    )
}

fn parse_transform(t: &str) -> Result<Transform, ItemProblem> {
    let t = t.trim();
    let expr = t
        .strip_prefix("json_path:")
        .or_else(|| t.strip_prefix("jsonpath:"))
        .map(str::trim)
        .or_else(|| t.starts_with('$').then_some(t));
    let Some(expr) = expr else {
        return Err(ItemProblem::invalid(format!(
            "unsupported transform {}: niceeval supports JSONPath transforms, written `json_path:$.field` or `$.field` (JavaScript transform expressions are not run)",
            crate::base::excerpt::quote(t)
        )));
    };
    let transform = expect::json_path(expr);
    match transform.parse_error() {
        Some(e) => Err(ItemProblem::Transform {
            expr: expr.to_string(),
            source: e.clone(),
        }),
        None => Ok(transform),
    }
}

/// An assertion that checks a fixed measurement instead of the output.
struct Measured<A> {
    inner: A,
    value: Option<f64>,
    what: &'static str,
}

impl<A: Assertion> Assertion for Measured<A> {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn settings(&self) -> Settings {
        self.inner.settings()
    }
    /// Scores 1 within the limit and 0 over it, as promptfoo's `cost` and `latency` do (the
    /// Rust matchers score `limit / actual` over it).
    fn evaluate(&self, _output: &Subject<'_>) -> Grade {
        match self.value {
            Some(v) => {
                let grade = self
                    .inner
                    .evaluate(&Subject::Json(std::borrow::Cow::Owned(Value::from(v))));
                if grade.error.is_some() {
                    return grade;
                }
                let within = grade.verdict.unwrap_or(grade.score >= 1.0);
                Grade::from_bool(within, grade.reason).with_verdict(within)
            }
            None => Grade::error(format!(
                "no {} in the context: set SpecContext::{} (Runsight reads run metrics; promptfoo needs a provider that reports them)",
                self.what,
                if self.what == "cost" {
                    "cost_usd"
                } else {
                    "latency_ms"
                }
            )),
        }
    }
}

/// An assertion shared between evaluations of a cached spec.
struct Shared(Arc<dyn Assertion + Send + Sync>);

impl Assertion for Shared {
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn settings(&self) -> Settings {
        self.0.settings()
    }
    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        self.0.evaluate(value)
    }
    fn evaluate_in(&self, value: &Subject<'_>, context: &CheckContext) -> Grade {
        self.0.evaluate_in(value, context)
    }
}

/// A `weight: 0` assertion: promptfoo records its score but always passes it.
struct ForcePass<A>(A);

impl<A: Assertion> Assertion for ForcePass<A> {
    fn describe(&self) -> String {
        self.0.describe()
    }
    /// The inner settings without a threshold, so the verdict decides.
    fn settings(&self) -> Settings {
        let mut settings = self.0.settings();
        settings.threshold = None;
        settings.make_gate();
        settings
    }
    /// The inner score, passed; an execution error stays an error (a broken assertion is
    /// reported, never silently passed).
    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        self.evaluate_in(value, &CheckContext::default())
    }
    fn evaluate_in(&self, value: &Subject<'_>, context: &CheckContext) -> Grade {
        let grade = self.0.evaluate_in(value, context);
        if grade.error.is_some() {
            return grade;
        }
        let settings = self.0.settings();
        let passed = match (grade.verdict, settings.threshold) {
            (Some(own), None) => own,
            _ => passes(settings.severity, settings.threshold, grade.score),
        };
        let reason = if passed {
            grade.reason
        } else {
            format!("weight 0, so passed anyway: {}", grade.reason)
        };
        Grade::score(grade.score, reason)
            .with_children(grade.children)
            .with_verdict(true)
    }
}

/// An assertion shown under another name.
struct Named<A> {
    inner: A,
    name: String,
}

impl<A: Assertion> Assertion for Named<A> {
    fn describe(&self) -> String {
        self.name.clone()
    }
    fn settings(&self) -> Settings {
        self.inner.settings()
    }
    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        self.inner.evaluate(value)
    }
    fn evaluate_in(&self, value: &Subject<'_>, context: &CheckContext) -> Grade {
        self.inner.evaluate_in(value, context)
    }
}

fn grader_payload(context: &SpecContext, config: &Option<Value>) -> GraderInput {
    let mut input = GraderInput::default();
    input.input = if context.input_messages.is_empty() {
        context
            .input
            .iter()
            .map(|t| GraderMessage::new("user", t.clone()))
            .collect()
    } else {
        context.input_messages.clone()
    };
    input.input_files = context.input_files.clone();
    input.metadata = context.metadata.clone();
    input.trace = context.trace_summary.as_ref().map(|t| {
        serde_json::json!({
            "event_count": t.event_count,
            "tool_calls": t.tool_calls,
            "error_count": t.error_count,
            "llm_call_count": t.llm_call_count,
            "messages": context.messages,
        })
    });
    input.expected_output = context
        .expected_output
        .iter()
        .map(|t| GraderMessage::new("assistant", t.clone()))
        .collect();
    input.messages = context.messages.clone();
    input.criteria = context.criteria.clone();
    input.trace_summary = context.trace_summary.clone();
    input.token_usage = context.token_usage;
    input.cost_usd = context.cost_usd;
    input.duration_ms = context.latency_ms;
    input.workspace_path = context
        .workspace_path
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned());
    input.config = config.clone();
    input.vars = context.vars.clone();
    input
}

impl Prepared {
    /// An `assert-set`, whose members' metrics count towards the list's named scores.
    pub(crate) fn is_set(&self) -> bool {
        matches!(self.base, Base::Set(_))
    }

    /// Checks that a custom assertion (here or in a set) exists, from `base_dir`.
    pub(crate) fn check_custom(&self, base_dir: Option<&Path>) -> Result<(), ItemProblem> {
        match &self.base {
            Base::Custom { name, .. } => {
                let start = match base_dir {
                    Some(dir) => dir.to_path_buf(),
                    None => std::env::current_dir().map_err(ItemProblem::CurrentDir)?,
                };
                let found = expect::CustomAssertions::discover(&start);
                let kind = if self.negate {
                    format!("not-{name}")
                } else {
                    name.clone()
                };
                if found.entries.contains_key(name) {
                    Ok(())
                } else if found.dir.is_none() {
                    Err(ItemProblem::invalid(format!(
                        "{} (no {}/ folder was found from {})",
                        unknown_type(&kind, &[]),
                        expect::CUSTOM_ASSERTIONS_DIR,
                        start.display()
                    )))
                } else {
                    Err(ItemProblem::invalid(format!(
                        "{}; {}",
                        unknown_type(
                            &kind,
                            &found.entries.keys().map(String::as_str).collect::<Vec<_>>()
                        ),
                        crate::checks::expect::custom_missing_message(name, &start, &found)
                    )))
                }
            }
            Base::Set(members) => members.iter().try_for_each(|m| m.check_custom(base_dir)),
            _ => Ok(()),
        }
    }

    /// Builds the assertion for one evaluation.
    pub(crate) fn instantiate(&self, context: &SpecContext) -> BoxedAssertion {
        if let Some(built) = &self.built {
            return Shared(built.clone()).boxed();
        }
        let base: BoxedAssertion = match &self.base {
            Base::Static(a) => Shared(a.clone()).boxed(),
            Base::Cost(limit) => Measured {
                inner: expect::cost(*limit),
                value: context.cost_usd,
                what: "cost",
            }
            .boxed(),
            Base::Latency(limit) => Measured {
                inner: expect::latency(*limit),
                value: context.latency_ms,
                what: "latency",
            }
            .boxed(),
            #[cfg(feature = "inline-code")]
            Base::Code {
                python,
                code,
                config,
            } => {
                let mut a = if *python {
                    expect::python(code.clone())
                } else {
                    expect::javascript(code.clone())
                };
                // promptfoo's code assertions reach their own verdict from the threshold and
                // `not-` (see `wrap`).
                a = a
                    .rules(expect::CodeRules {
                        threshold: self.threshold,
                        inverse: self.negate,
                    })
                    .vars(serde_json::to_value(&context.vars).unwrap_or(Value::Null))
                    .config(config.clone().unwrap_or_else(|| serde_json::json!({})));
                if let Some(prompt) = &context.prompt {
                    a = a.prompt(prompt.clone());
                }
                if let Some(dir) = &context.base_dir {
                    a = a.base_dir(dir.clone());
                }
                if let Some(t) = context.timeout {
                    a = a.timeout(t);
                }
                a.boxed()
            }
            Base::Script {
                command,
                config,
                cwd,
            } => {
                let mut s =
                    expect::script(command.clone()).payload(grader_payload(context, config));
                let base = context.base_dir.clone();
                match (base, cwd) {
                    (Some(dir), Some(cwd)) => s = s.cwd(dir.join(cwd)),
                    (Some(dir), None) => s = s.cwd(dir),
                    (None, Some(cwd)) => s = s.cwd(cwd.clone()),
                    (None, None) => {}
                }
                s = s.timeout(context.timeout.unwrap_or(expect::DEFAULT_GRADER_TIMEOUT));
                s.boxed()
            }
            Base::Custom { name, config } => {
                let mut c = expect::custom(name.clone()).payload(grader_payload(context, config));
                if let Some(dir) = &context.base_dir {
                    c = c.from_dir(dir.clone());
                }
                c = c.timeout(context.timeout.unwrap_or(Duration::from_secs(60)));
                c.boxed()
            }
            Base::Set(members) => {
                expect::all_of(members.iter().map(|m| m.instantiate(context))).boxed()
            }
            Base::Facts(fact) => fact.instantiate(context, self.transform.is_some()),
        };
        self.wrap(base)
    }

    /// Applies threshold, `not-`, transform, weight (0 force-passes), metric and name to a base
    /// assertion. A code assertion applies its threshold and `not-` itself, as promptfoo does
    /// (`not-` keeps the returned score).
    fn wrap(&self, base: BoxedAssertion) -> BoxedAssertion {
        #[cfg(feature = "inline-code")]
        let own_verdict = matches!(self.base, Base::Code { .. } | Base::Facts(_));
        #[cfg(not(feature = "inline-code"))]
        let own_verdict = matches!(self.base, Base::Facts(_));
        let mut a: BoxedAssertion = match self.threshold {
            Some(t) if !own_verdict => base
                .configure(|s| {
                    s.at_least(t);
                    s.make_gate();
                })
                .boxed(),
            _ => base.gate().boxed(),
        };
        if self.negate && !own_verdict {
            a = expect::not(a).boxed();
        }
        let mut outer = Configured::new(a);
        if let Some(t) = &self.transform {
            outer = outer.transform(t.clone());
        }
        if let Some(w) = self.weight {
            outer = outer.weight(w);
        }
        if let Some(m) = &self.metric {
            outer = outer.metric(m.clone());
        }
        // promptfoo force-passes weight-0 assertions, but not a weight-0 assert-set (its sets
        // are scored outside the code that does).
        let outer = if self.weight == Some(0.0) && !matches!(self.base, Base::Set(_)) {
            ForcePass(outer).boxed()
        } else {
            outer.boxed()
        };
        match &self.name {
            Some(name) => Named {
                inner: outer,
                name: name.clone(),
            }
            .boxed(),
            None => outer,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_names_keep_case() {
        assert_eq!(custom_name("not-Min_Words"), "Min_Words");
        assert_eq!(custom_name("custom:tone_check"), "tone_check");
    }
}
