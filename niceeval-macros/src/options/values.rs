//! Validating the value of each `#[eval(..)]` option: its type, its range, and a message that
//! shows how to write it when it is wrong.

use std::time::Duration;

use niceeval_duration::DurationError;
use quote::ToTokens;
use syn::{Expr, ExprArray, ExprLit, Lit, LitStr, Path};

use super::{Options, push};

pub(super) fn flag(key: &str, value: Option<&Expr>) -> syn::Result<bool> {
    match value {
        None => Ok(true),
        Some(Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        })) => Ok(b.value),
        Some(other) => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` is a flag: write `{key}` (or `{key} = true` / `{key} = false`)"),
        )),
    }
}

pub(super) fn apply_value(options: &mut Options, key: &str, value: &Expr) -> syn::Result<()> {
    match key {
        "agent" => options.agent = Some(agent(value)?),
        "crate" => options.krate = Some(crate_path(value)?),
        "runs" => options.runs = Some(runs(value)?),
        "min_pass_rate" => options.min_pass_rate = Some(rate(value, "min_pass_rate", "runs")?),
        "min_case_pass_rate" => {
            options.min_case_pass_rate = Some(rate(value, "min_case_pass_rate", "cases")?)
        }
        "timeout" => options.timeout_ms = Some(timeout(value)?),
        "tags" => options.tags = tags(value)?,
        "description" => {
            options.description = Some(str_lit(
                value,
                "`description` takes a string: write `description = \"what this eval checks\"`",
            )?)
        }
        "judge_model" => options.judge_model = Some(judge_model(value)?),
        "cases" => options.cases = Some(cases(value)?),
        "workspace" => options.workspace = Some(workspace(value)?),
        // `apply` only passes the names of `KNOWN` that take a value.
        _ => {
            return Err(syn::Error::new_spanned(
                value,
                format!("option `{key}` takes no value"),
            ));
        }
    }
    Ok(())
}

/// A path given as a path, or the hint to unquote it when given as a string.
fn path_value(value: &Expr, key: &str, what: &str, example: &str) -> syn::Result<Path> {
    match value {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => Ok(p.path.clone()),
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) if s.parse::<Path>().is_ok() => Err(syn::Error::new_spanned(
            value,
            format!(
                "`{key}` takes a path, not a string: write `{key} = {}` without quotes",
                s.value()
            ),
        )),
        _ => Err(syn::Error::new_spanned(
            value,
            format!("`{key}` takes {what}, e.g. `{example}`"),
        )),
    }
}

/// `agent = support_bot` (a function, called for each run) or any expression that is not a
/// literal, such as `agent = fixer("cheater")`: its value is the agent.
fn agent(value: &Expr) -> syn::Result<super::AgentOption> {
    match value {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => {
            Ok(super::AgentOption::Function(p.path.clone()))
        }
        Expr::Lit(_) => path_value(
            value,
            "agent",
            "the path of a function `fn() -> impl Agent` or an expression giving an agent",
            "agent = support_bot` or `agent = fixer(\"cheater\")",
        )
        .map(super::AgentOption::Function),
        other => Ok(super::AgentOption::Expression(other.clone())),
    }
}

fn crate_path(value: &Expr) -> syn::Result<Path> {
    path_value(
        value,
        "crate",
        "the path niceeval is known by in this crate",
        "crate = ne` after `use niceeval as ne;",
    )
}

fn runs(value: &Expr) -> syn::Result<u32> {
    let lit = match value {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i,
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) if s.value().trim().parse::<u32>().is_ok() => {
            return Err(syn::Error::new_spanned(
                value,
                format!(
                    "`runs` takes a number, not a string: write `runs = {}` without quotes",
                    s.value().trim()
                ),
            ));
        }
        _ => {
            return Err(syn::Error::new_spanned(
                value,
                "`runs` takes a whole number of runs, e.g. `runs = 5`",
            ));
        }
    };
    let runs: u32 = lit.base10_parse().map_err(|_| {
        syn::Error::new(
            lit.span(),
            format!("`runs` must be a whole number from 1 to {}", u32::MAX),
        )
    })?;
    if runs == 0 {
        return Err(syn::Error::new(
            lit.span(),
            "`runs` must be at least 1: it is how many times the eval runs (1 when not given)",
        ));
    }
    Ok(runs)
}

/// A fraction of `what` (runs, cases) that must pass, for the option `key`.
fn rate(value: &Expr, key: &str, what: &str) -> syn::Result<f64> {
    let hint = format!(
        "`{key}` takes the fraction of {what} that must pass, a number from 0.0 to 1.0, e.g. `{key} = 0.8`"
    );
    // The number as written, and whether it was a whole number (`80` may mean 80%).
    let (rate, written, whole, span) = match value {
        Expr::Lit(ExprLit {
            lit: Lit::Float(f), ..
        }) => (f.base10_parse::<f64>()?, f.base10_digits(), false, f.span()),
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => (i.base10_parse::<f64>()?, i.base10_digits(), true, i.span()),
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) if s.value().trim().parse::<f64>().is_ok() => {
            return Err(syn::Error::new_spanned(
                value,
                format!(
                    "`{key}` takes a number, not a string: write `{key} = {}` without quotes",
                    s.value().trim()
                ),
            ));
        }
        _ => return Err(syn::Error::new_spanned(value, hint)),
    };
    if !(0.0..=1.0).contains(&rate) {
        let mut message = format!(
            "`{key}` is the fraction of {what} that must pass, from 0.0 to 1.0, not {written}"
        );
        if whole && rate > 1.0 && rate <= 100.0 {
            message.push_str(&format!("; for {rate}% write `{key} = {}`", rate / 100.0));
        }
        return Err(syn::Error::new(span, message));
    }
    Ok(rate)
}

fn timeout(value: &Expr) -> syn::Result<u64> {
    let lit = match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => s,
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => {
            let text = if i.suffix().is_empty() {
                format!("{}s", i.base10_digits())
            } else {
                i.to_string()
            };
            return Err(syn::Error::new_spanned(
                value,
                format!(
                    "`timeout` takes a duration string with a unit: write `timeout = \"{text}\"`"
                ),
            ));
        }
        _ => {
            return Err(syn::Error::new_spanned(
                value,
                "`timeout` takes a duration string, e.g. `timeout = \"30s\"` (units: ms, s, m, h)",
            ));
        }
    };
    parse_duration(&lit.value())
        .map_err(|message| syn::Error::new(lit.span(), format!("invalid `timeout`: {message}")))
}

fn tags(value: &Expr) -> syn::Result<Vec<LitStr>> {
    let elems = match value {
        Expr::Array(ExprArray { elems, .. }) => elems,
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => {
            return Err(syn::Error::new_spanned(
                value,
                format!(
                    "`tags` takes a list of strings: write `tags = [{:?}]`",
                    s.value()
                ),
            ));
        }
        _ => {
            return Err(syn::Error::new_spanned(
                value,
                "`tags` takes a list of strings, e.g. `tags = [\"smoke\", \"refunds\"]`",
            ));
        }
    };
    let mut errors = None;
    let mut tags: Vec<LitStr> = Vec::new();
    for elem in elems {
        let hint = match elem {
            Expr::Lit(_) | Expr::Path(_) => format!(
                "each tag is a string: write `{:?}`",
                elem.to_token_stream().to_string()
            ),
            _ => "each tag is a string literal, e.g. `\"smoke\"`".to_string(),
        };
        match str_lit(elem, &hint) {
            Err(e) => push(&mut errors, e),
            Ok(tag) if tag.value().trim().is_empty() => push(
                &mut errors,
                syn::Error::new(tag.span(), "a tag cannot be empty"),
            ),
            Ok(tag) if tags.iter().any(|t| t.value() == tag.value()) => push(
                &mut errors,
                syn::Error::new(
                    tag.span(),
                    format!("tag {:?} is given twice; keep one", tag.value()),
                ),
            ),
            Ok(tag) => tags.push(tag),
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(tags),
    }
}

fn judge_model(value: &Expr) -> syn::Result<LitStr> {
    let lit = str_lit(
        value,
        "`judge_model` takes a `provider/model` string, e.g. `judge_model = \"openai/gpt-4o-mini\"`",
    )?;
    let model = lit.value();
    match model.split_once('/') {
        Some((provider, name)) if !provider.trim().is_empty() && !name.trim().is_empty() => Ok(lit),
        _ => Err(syn::Error::new(
            lit.span(),
            format!(
                "judge model {model:?} names no provider: write `provider/model`, e.g. \"openai/gpt-4o-mini\""
            ),
        )),
    }
}

fn str_lit(value: &Expr, message: &str) -> syn::Result<LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s.clone()),
        other => Err(syn::Error::new_spanned(other, message)),
    }
}

/// Parses `"500ms"`, `"30s"`, `"2m"`, `"1h"`, `"1m30s"`, `"1.5s"` into whole milliseconds (rounded
/// to the nearest), checked at compile time: the grammar of `niceeval::config::parse_duration`,
/// shared through `niceeval_duration::parse`. A timeout shorter than 1ms is rejected; a text that
/// is not a duration at all gets a hint listing every unit.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    const HINT: &str = "write e.g. \"500ms\", \"30s\", \"2m\" or \"1m30s\" (units: ms, s, m, h)";
    let shorter = || {
        format!(
            "{:?} is shorter than 1ms; a timeout must be positive",
            text.trim()
        )
    };
    match niceeval_duration::parse(text) {
        Ok(duration) if duration < Duration::from_millis(1) => Err(shorter()),
        Ok(duration) => {
            let millis = (duration.as_nanos() + 500_000) / 1_000_000;
            u64::try_from(millis).map_err(|_| {
                DurationError::TooLong {
                    text: text.trim().to_string(),
                }
                .to_string()
            })
        }
        Err(DurationError::Zero { .. }) => Err(shorter()),
        Err(DurationError::NotADuration { text }) => {
            Err(format!("{text:?} is not a duration; {HINT}"))
        }
        Err(error) => Err(error.to_string()),
    }
}

/// `cases = "file"`: reads the dataset now (relative to the crate's manifest directory) to name
/// one test per case; a missing or malformed file is an error at the path.
fn cases(value: &Expr) -> syn::Result<super::Cases> {
    let path = str_lit(
        value,
        "`cases` takes the dataset's path: write `cases = \"evals/cases.jsonl\"` (relative to the crate's directory)",
    )?;
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_string());
    let file = std::path::Path::new(&manifest_dir).join(path.value());
    // Messages name the path as written: it is relative to the crate's directory.
    let written = path.value();
    let error = |message: String| syn::Error::new(path.span(), message);
    let format = niceeval_dataset::Format::of(std::path::Path::new(&written))
        .map_err(|e| error(e.to_string()))?;
    let text = std::fs::read_to_string(&file).map_err(|e| {
        error(format!(
            "cannot read the dataset {written:?} (relative to the crate's directory, where Cargo.toml is): {e}"
        ))
    })?;
    let cases =
        niceeval_dataset::parse(&text, format, &written).map_err(|e| error(e.to_string()))?;
    Ok(super::Cases {
        path,
        names: cases.into_iter().map(|c| c.name).collect(),
    })
}

/// `workspace = "dir"`: the template of each run's working copy, relative to the crate's
/// manifest directory; a missing directory is an error at the path.
fn workspace(value: &Expr) -> syn::Result<LitStr> {
    let path = str_lit(
        value,
        "`workspace` takes the template directory: write `workspace = \"fixtures/app\"` (relative to the crate's directory)",
    )?;
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_string());
    let dir = std::path::Path::new(&manifest_dir).join(path.value());
    if !dir.is_dir() {
        let what = if dir.exists() {
            "is not a directory"
        } else {
            "does not exist"
        };
        return Err(syn::Error::new(
            path.span(),
            format!(
                "the workspace template {:?} {what} (relative to the crate's directory, where Cargo.toml is)",
                path.value()
            ),
        ));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::tests::one_error;
    use proc_macro2::TokenStream;
    use quote::quote;

    #[test]
    fn wrong_value_types_say_how_to_write_them() {
        let cases: &[(TokenStream, &str)] = &[
            (quote!(runs = "3"), "write `runs = 3` without quotes"),
            (quote!(runs = 2.5), "whole number"),
            (quote!(runs = 99999999999), "from 1 to 4294967295"),
            (quote!(runs), "write `runs = 5`"),
            (quote!(min_pass_rate = 80), "write `min_pass_rate = 0.8`"),
            (quote!(min_pass_rate = 2.0), "from 0.0 to 1.0, not 2.0"),
            (quote!(min_pass_rate = "x"), "a number from 0.0 to 1.0"),
            (quote!(min_pass_rate = "0.5"), "without quotes"),
            (quote!(min_pass_rate = -0.5), "a number from 0.0 to 1.0"),
            (quote!(timeout = "soon"), "\"soon\" is not a duration"),
            (quote!(timeout = "30"), "has no unit"),
            (quote!(timeout = "0s"), "shorter than 1ms"),
            (quote!(timeout = 30), "write `timeout = \"30s\"`"),
            (quote!(timeout = 30ms), "write `timeout = \"30ms\"`"),
            (quote!(tags = "x"), "write `tags = [\"x\"]`"),
            (quote!(tags = [""]), "cannot be empty"),
            (quote!(tags = [smoke]), "write `\"smoke\"`"),
            (quote!(tags = ["a", "a"]), "given twice"),
            (quote!(description = 1), "`description` takes a string"),
            (quote!(judge_model = "gpt4"), "names no provider"),
            (quote!(judge_model = "/gpt4"), "names no provider"),
            (quote!(agent = "bot"), "write `agent = bot` without quotes"),
            (quote!(agent = 1), "`fn() -> impl Agent`"),
            (
                quote!(crate = 1),
                "`crate = ne` after `use niceeval as ne;`",
            ),
            (quote!(crate = "ne"), "write `crate = ne` without quotes"),
        ];
        for (args, expected) in cases {
            let message = one_error(args.clone());
            assert!(
                message.contains(expected),
                "for `{args}`: expected {expected:?} in {message:?}"
            );
        }
        // A fraction above 1 is not read as a percentage; a whole number up to 100 is.
        assert!(!one_error(quote!(min_pass_rate = 2.0)).contains('%'));
        assert!(
            one_error(quote!(min_pass_rate = 2)).contains("for 2% write `min_pass_rate = 0.02`")
        );
    }

    #[test]
    fn durations_follow_the_shared_table() {
        for &(text, millis) in niceeval_duration::TABLE {
            match millis {
                Some(ms) => assert_eq!(parse_duration(text), Ok(ms), "{text:?}"),
                None => assert!(parse_duration(text).is_err(), "{text:?}"),
            }
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1m30s"), Ok(90_000));
        assert_eq!(parse_duration("250ms"), Ok(250));
        assert_eq!(parse_duration("1.5s"), Ok(1500));
        assert_eq!(parse_duration(" 2h "), Ok(7_200_000));
        assert!(parse_duration("30").is_err());
        assert!(parse_duration("3 days").is_err());
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("s").is_err());
        for bad in ["1.2.3s", "-5s", "5 s", "1h30"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
        assert!(parse_duration("99999999999999999999999h").is_err());
    }

    #[test]
    fn timeouts_are_whole_milliseconds_of_at_least_one() {
        assert_eq!(parse_duration("1.4ms"), Ok(1));
        assert_eq!(parse_duration("1.6ms"), Ok(2));
        assert!(
            parse_duration("0.5ms")
                .unwrap_err()
                .contains("shorter than 1ms")
        );
        assert!(
            parse_duration(" 0s ")
                .unwrap_err()
                .starts_with("\"0s\" is shorter than 1ms")
        );
        // Beyond u64::MAX milliseconds, though a `Duration` would hold it.
        assert!(
            parse_duration("18446744073709552s")
                .unwrap_err()
                .contains("too long")
        );
        // The hint of a text that is no duration at all, as the UI tests show it.
        assert_eq!(
            parse_duration("soon").unwrap_err(),
            "\"soon\" is not a duration; write e.g. \"500ms\", \"30s\", \"2m\" or \"1m30s\" (units: ms, s, m, h)"
        );
    }
}
