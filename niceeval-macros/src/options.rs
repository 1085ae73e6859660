//! Parsing and validating the options of `#[eval(..)]`. Every problem is collected, so one
//! compile shows them all, each at the offending token.

use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Expr, ExprArray, ExprLit, Ident, Lit, LitStr, Path, Token};

/// The option names, in the order the docs list them.
pub const KNOWN: &[&str] = &[
    "agent",
    "runs",
    "min_pass_rate",
    "timeout",
    "tags",
    "description",
    "judge_model",
    "strict",
    "snapshot",
    "crate",
];

/// The validated options.
#[derive(Default)]
pub struct Options {
    pub agent: Option<Path>,
    pub runs: Option<u32>,
    pub min_pass_rate: Option<f64>,
    pub timeout_ms: Option<u64>,
    pub tags: Vec<LitStr>,
    pub description: Option<LitStr>,
    pub judge_model: Option<LitStr>,
    pub strict: bool,
    pub snapshot: bool,
    pub krate: Option<Path>,
}

struct RawOption {
    key: Ident,
    value: Option<Expr>,
}

impl Parse for RawOption {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let key = Ident::parse_any(input)?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            Some(input.parse::<Expr>()?)
        } else {
            None
        };
        Ok(RawOption { key, value })
    }
}

/// Adds `error` to the collected errors.
pub fn push(errors: &mut Option<syn::Error>, error: syn::Error) {
    match errors {
        Some(all) => all.combine(error),
        None => *errors = Some(error),
    }
}

pub fn parse(args: proc_macro2::TokenStream) -> Result<Options, syn::Error> {
    let raw = syn::parse::Parser::parse2(
        syn::punctuated::Punctuated::<RawOption, Token![,]>::parse_terminated,
        args,
    )?;
    let mut options = Options::default();
    let mut errors = None;
    let mut seen: Vec<String> = Vec::new();
    for option in raw {
        let key = option.key.to_string();
        if seen.contains(&key) {
            push(
                &mut errors,
                syn::Error::new(option.key.span(), format!("option `{key}` is given twice")),
            );
            continue;
        }
        seen.push(key.clone());
        if let Err(e) = apply(&mut options, &key, &option) {
            push(&mut errors, e);
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(options),
    }
}

fn apply(options: &mut Options, key: &str, option: &RawOption) -> syn::Result<()> {
    let span = option.key.span();
    match key {
        "strict" | "snapshot" => {
            let on = match &option.value {
                None => true,
                Some(Expr::Lit(ExprLit {
                    lit: Lit::Bool(b), ..
                })) => b.value,
                Some(other) => {
                    return Err(syn::Error::new(
                        other.span(),
                        format!("`{key}` is a flag: write `{key}` (or `{key} = true`)"),
                    ))
                }
            };
            if key == "strict" {
                options.strict = on;
            } else {
                options.snapshot = on;
            }
            Ok(())
        }
        _ if !KNOWN.contains(&key) => Err(syn::Error::new(
            span,
            format!(
                "unknown #[eval] option `{key}`; expected one of: {}",
                KNOWN.join(", ")
            ),
        )),
        _ => {
            let value = option.value.as_ref().ok_or_else(|| {
                syn::Error::new(span, format!("option `{key}` needs a value: `{key} = ..`"))
            })?;
            apply_value(options, key, value)
        }
    }
}

fn apply_value(options: &mut Options, key: &str, value: &Expr) -> syn::Result<()> {
    match key {
        "agent" | "crate" => {
            let path = match value {
                Expr::Path(p) if p.qself.is_none() => p.path.clone(),
                other => {
                    let hint = if key == "agent" {
                        "`agent` takes the path of a `fn() -> impl Agent`, e.g. `agent = support_bot`"
                    } else {
                        "`crate` takes the path niceeval is known by, e.g. `crate = ::my_niceeval`"
                    };
                    return Err(syn::Error::new(other.span(), hint));
                }
            };
            if key == "agent" {
                options.agent = Some(path);
            } else {
                options.krate = Some(path);
            }
        }
        "runs" => {
            let lit = int_lit(
                value,
                "`runs` takes a whole number of runs, e.g. `runs = 5`",
            )?;
            let runs: u32 = lit.base10_parse()?;
            if runs == 0 {
                return Err(syn::Error::new(lit.span(), "`runs` must be at least 1"));
            }
            options.runs = Some(runs);
        }
        "min_pass_rate" => {
            let (rate, span) = match value {
                Expr::Lit(ExprLit {
                    lit: Lit::Float(f), ..
                }) => (f.base10_parse::<f64>()?, f.span()),
                Expr::Lit(ExprLit {
                    lit: Lit::Int(i), ..
                }) => (i.base10_parse::<f64>()?, i.span()),
                other => return Err(syn::Error::new(
                    other.span(),
                    "`min_pass_rate` takes a number between 0 and 1, e.g. `min_pass_rate = 0.8`",
                )),
            };
            if !(0.0..=1.0).contains(&rate) {
                return Err(syn::Error::new(
                    span,
                    "`min_pass_rate` must be between 0 and 1",
                ));
            }
            options.min_pass_rate = Some(rate);
        }
        "timeout" => {
            let lit = str_lit(
                value,
                "`timeout` takes a duration string, e.g. `timeout = \"30s\"`",
            )?;
            let duration = parse_duration(&lit.value())
                .map_err(|message| syn::Error::new(lit.span(), message))?;
            options.timeout_ms = Some(duration);
        }
        "tags" => {
            let Expr::Array(ExprArray { elems, .. }) = value else {
                return Err(syn::Error::new(
                    value.span(),
                    "`tags` takes a list of strings, e.g. `tags = [\"smoke\", \"refunds\"]`",
                ));
            };
            for elem in elems {
                options
                    .tags
                    .push(str_lit(elem, "each tag must be a string literal")?);
            }
        }
        "description" => {
            options.description = Some(str_lit(
                value,
                "`description` takes a string, e.g. `description = \"refunds are issued\"`",
            )?);
        }
        "judge_model" => {
            let lit = str_lit(
                value,
                "`judge_model` takes a string, e.g. `judge_model = \"openai/gpt-4o-mini\"`",
            )?;
            let model = lit.value();
            match model.split_once('/') {
                Some((provider, name)) if !provider.is_empty() && !name.is_empty() => {}
                _ => {
                    return Err(syn::Error::new(
                        lit.span(),
                        format!("judge model {model:?} must be `provider/model`, e.g. \"openai/gpt-4o-mini\""),
                    ))
                }
            }
            options.judge_model = Some(lit);
        }
        _ => unreachable!("option names are checked before values"),
    }
    Ok(())
}

fn int_lit<'a>(value: &'a Expr, message: &str) -> syn::Result<&'a syn::LitInt> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => Ok(i),
        other => Err(syn::Error::new(other.span(), message)),
    }
}

fn str_lit(value: &Expr, message: &str) -> syn::Result<LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s.clone()),
        other => Err(syn::Error::new(other.span(), message)),
    }
}

/// Parses `"500ms"`, `"30s"`, `"2m"`, `"1h"`, `"1m30s"` into milliseconds (the same grammar as
/// `niceeval::config::parse_duration`).
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let hint = "write a duration such as \"500ms\", \"30s\", \"2m\" or \"1m30s\"";
    let mut total: f64 = 0.0;
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(format!("empty timeout; {hint}"));
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..digits]
            .parse()
            .map_err(|_| format!("{text:?} is not a duration; {hint}"))?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "ms" => 1.0,
            "s" => 1000.0,
            "m" => 60_000.0,
            "h" => 3_600_000.0,
            "" => return Err(format!("{text:?} has no unit; {hint}")),
            unit => return Err(format!("{text:?} has an unknown unit {unit:?}; {hint}")),
        };
        rest = &rest[unit_len..];
        total += number * factor;
    }
    if total < 1.0 {
        return Err(format!(
            "{text:?} is shorter than 1ms; a timeout must be positive"
        ));
    }
    Ok(total.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1m30s"), Ok(90_000));
        assert_eq!(parse_duration("250ms"), Ok(250));
        assert_eq!(parse_duration("1.5s"), Ok(1500));
        assert!(parse_duration("30").is_err());
        assert!(parse_duration("3 days").is_err());
        assert!(parse_duration("0s").is_err());
    }
}
