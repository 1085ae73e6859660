//! Parsing and validating the options of `#[eval(..)]`.
//!
//! Every problem is collected, so one compile shows them all, each at the offending token and
//! each saying how to write the option correctly. The options are split at top-level commas
//! before they are parsed, so a syntax error in one option does not hide the errors of the
//! others.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::{Expr, ExprArray, ExprLit, Ident, Lit, LitStr, Path, Token};

/// Every option with how it is written, in the order the docs list them.
pub const KNOWN: &[(&str, &str)] = &[
    ("agent", "agent = my_agent"),
    ("runs", "runs = 5"),
    ("min_pass_rate", "min_pass_rate = 0.8"),
    ("timeout", "timeout = \"30s\""),
    ("tags", "tags = [\"smoke\"]"),
    ("description", "description = \"what this eval checks\""),
    ("judge_model", "judge_model = \"openai/gpt-4o-mini\""),
    ("strict", "strict"),
    ("snapshot", "snapshot"),
    ("crate", "crate = my_niceeval"),
];

/// The validated options.
#[derive(Default)]
pub struct Options {
    /// `agent = path`: a `fn() -> impl Agent`.
    pub agent: Option<Path>,
    /// `runs = N`, at least 1.
    pub runs: Option<u32>,
    /// `min_pass_rate = p`, within `0.0..=1.0`.
    pub min_pass_rate: Option<f64>,
    /// `timeout = ".."`, in milliseconds, at least 1.
    pub timeout_ms: Option<u64>,
    /// `tags = [..]`, non-empty and distinct.
    pub tags: Vec<LitStr>,
    /// `description = ".."`.
    pub description: Option<LitStr>,
    /// `judge_model = "provider/model"`.
    pub judge_model: Option<LitStr>,
    /// `strict`.
    pub strict: bool,
    /// `snapshot`.
    pub snapshot: bool,
    /// `crate = path`: where niceeval is found when it is renamed.
    pub krate: Option<Path>,
}

/// One option as written, before validation.
struct RawOption {
    key: Ident,
    value: Option<Expr>,
}

impl Parse for RawOption {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let key = Ident::parse_any(input)?;
        if input.peek(syn::token::Paren) {
            let name = key.unraw();
            return Err(input.error(format!(
                "write `{name} = ..`, not `{name}(..)`: #[eval] options are `name = value` pairs"
            )));
        }
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            if input.is_empty() {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "option `{}` has `=` but no value: write `{}`",
                        key.unraw(),
                        example(&key.unraw().to_string()).unwrap_or("name = value")
                    ),
                ));
            }
            Some(input.parse::<Expr>()?)
        } else {
            None
        };
        if !input.is_empty() {
            return Err(input.error(
                "unexpected token: separate #[eval] options with commas, e.g. `#[eval(runs = 3, strict)]`",
            ));
        }
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

/// Parses and validates the attribute's arguments, adding every problem to `errors`. The
/// options returned hold what was valid.
pub fn parse(args: TokenStream, errors: &mut Option<syn::Error>) -> Options {
    let mut options = Options::default();
    let mut seen: Vec<String> = Vec::new();
    for chunk in split_options(args) {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(e) => {
                push(errors, e);
                continue;
            }
        };
        let option = match RawOption::parse.parse2(chunk) {
            Ok(option) => option,
            Err(e) => {
                push(errors, e);
                continue;
            }
        };
        let key = option.key.unraw().to_string();
        if seen.contains(&key) {
            push(
                errors,
                syn::Error::new(
                    option.key.span(),
                    format!("option `{key}` is given twice; keep one"),
                ),
            );
            continue;
        }
        seen.push(key.clone());
        if let Err(e) = apply(&mut options, &key, &option) {
            push(errors, e);
        }
    }
    options
}

/// Splits the arguments at top-level commas. `<..>` is tracked so a turbofish such as
/// `agent = make::<A, B>` stays one option. An empty option (`a,, b`) is an error at its comma.
fn split_options(args: TokenStream) -> Vec<syn::Result<TokenStream>> {
    let mut chunks = Vec::new();
    let mut current = TokenStream::new();
    let mut angle_depth = 0usize;
    for tree in args {
        if let TokenTree::Punct(punct) = &tree {
            match punct.as_char() {
                '<' => angle_depth += 1,
                '>' => angle_depth = angle_depth.saturating_sub(1),
                ',' if angle_depth == 0 => {
                    if current.is_empty() {
                        chunks.push(Err(syn::Error::new(
                            punct.span(),
                            "expected an option before this comma",
                        )));
                    } else {
                        chunks.push(Ok(std::mem::take(&mut current)));
                    }
                    continue;
                }
                _ => {}
            }
        }
        current.extend([tree]);
    }
    if !current.is_empty() {
        chunks.push(Ok(current));
    }
    chunks
}

/// How `key` is written, if it is an option.
fn example(key: &str) -> Option<&'static str> {
    KNOWN.iter().find(|(k, _)| *k == key).map(|(_, e)| *e)
}

fn apply(options: &mut Options, key: &str, option: &RawOption) -> syn::Result<()> {
    let span = option.key.span();
    let Some(example) = example(key) else {
        return Err(syn::Error::new(span, unknown_option_message(key)));
    };
    match key {
        "strict" | "snapshot" => {
            let on = flag(key, option.value.as_ref())?;
            if key == "strict" {
                options.strict = on;
            } else {
                options.snapshot = on;
            }
            Ok(())
        }
        _ => {
            let value = option.value.as_ref().ok_or_else(|| {
                syn::Error::new(
                    span,
                    format!("option `{key}` needs a value: write `{example}`"),
                )
            })?;
            apply_value(options, key, value)
        }
    }
}

fn unknown_option_message(key: &str) -> String {
    let names: Vec<&str> = KNOWN.iter().map(|(k, _)| *k).collect();
    let mut message = format!("unknown #[eval] option `{key}`");
    if let Some(near) = closest(key, &names) {
        message.push_str(&format!("; did you mean `{near}`?"));
    }
    message.push_str(&format!(
        "\nvalid options: {}",
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    message
}

/// The known name closest to `key` by edit distance, if it is close enough to be a typo.
fn closest<'a>(key: &str, names: &[&'a str]) -> Option<&'a str> {
    let key = key.to_ascii_lowercase();
    names
        .iter()
        .map(|name| (edit_distance(&key, name), *name))
        .filter(|(d, name)| *d <= (name.len() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name)
}

/// Levenshtein distance over chars; option names are short, the table is tiny.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

fn flag(key: &str, value: Option<&Expr>) -> syn::Result<bool> {
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

fn apply_value(options: &mut Options, key: &str, value: &Expr) -> syn::Result<()> {
    match key {
        "agent" => options.agent = Some(agent_path(value)?),
        "crate" => options.krate = Some(crate_path(value)?),
        "runs" => options.runs = Some(runs(value)?),
        "min_pass_rate" => options.min_pass_rate = Some(min_pass_rate(value)?),
        "timeout" => options.timeout_ms = Some(timeout(value)?),
        "tags" => options.tags = tags(value)?,
        "description" => {
            options.description = Some(str_lit(
                value,
                "`description` takes a string: write `description = \"what this eval checks\"`",
            )?)
        }
        "judge_model" => options.judge_model = Some(judge_model(value)?),
        // `apply` only passes the names of `KNOWN` that take a value.
        _ => {
            return Err(syn::Error::new_spanned(
                value,
                format!("option `{key}` takes no value"),
            ))
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
        Expr::Call(call) if call.args.is_empty() && key == "agent" => Err(syn::Error::new_spanned(
            value,
            format!(
                "`agent` takes the function itself, not a call: write `agent = {}`",
                call.func.to_token_stream().to_string().replace(' ', "")
            ),
        )),
        _ => Err(syn::Error::new_spanned(
            value,
            format!("`{key}` takes {what}, e.g. `{example}`"),
        )),
    }
}

fn agent_path(value: &Expr) -> syn::Result<Path> {
    path_value(
        value,
        "agent",
        "the path of a function `fn() -> impl Agent`",
        "agent = support_bot",
    )
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
            ))
        }
        _ => {
            return Err(syn::Error::new_spanned(
                value,
                "`runs` takes a whole number of runs, e.g. `runs = 5`",
            ))
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

fn min_pass_rate(value: &Expr) -> syn::Result<f64> {
    let hint = "`min_pass_rate` takes the fraction of runs that must pass, a number from 0.0 to 1.0, e.g. `min_pass_rate = 0.8`";
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
                    "`min_pass_rate` takes a number, not a string: write `min_pass_rate = {}` without quotes",
                    s.value().trim()
                ),
            ))
        }
        _ => return Err(syn::Error::new_spanned(value, hint)),
    };
    if !(0.0..=1.0).contains(&rate) {
        let mut message = format!(
            "`min_pass_rate` is the fraction of runs that must pass, from 0.0 to 1.0, not {written}"
        );
        if whole && rate > 1.0 && rate <= 100.0 {
            message.push_str(&format!(
                "; for {rate}% write `min_pass_rate = {}`",
                rate / 100.0
            ));
        }
        return Err(syn::Error::new(span, message));
    }
    Ok(rate)
}

fn timeout(value: &Expr) -> syn::Result<u64> {
    let lit =
        match value {
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
            _ => return Err(syn::Error::new_spanned(
                value,
                "`timeout` takes a duration string, e.g. `timeout = \"30s\"` (units: ms, s, m, h)",
            )),
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
            ))
        }
        _ => {
            return Err(syn::Error::new_spanned(
                value,
                "`tags` takes a list of strings, e.g. `tags = [\"smoke\", \"refunds\"]`",
            ))
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
        Some((provider, name)) if !provider.trim().is_empty() && !name.trim().is_empty() => {
            Ok(lit)
        }
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

/// Parses `"500ms"`, `"30s"`, `"2m"`, `"1h"`, `"1m30s"`, `"1.5s"` into milliseconds: the grammar
/// of `niceeval::config::parse_duration` (kept in step with it), checked at compile time.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let hint = "write e.g. \"500ms\", \"30s\", \"2m\" or \"1m30s\" (units: ms, s, m, h)";
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("the duration is empty; {hint}"));
    }
    let mut total: f64 = 0.0;
    let mut rest = text;
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
    if total > u64::MAX as f64 {
        return Err(format!("{text:?} is too long"));
    }
    Ok(total.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn parse_ok(args: TokenStream) -> Options {
        let mut errors = None;
        let options = parse(args, &mut errors);
        if let Some(e) = errors {
            panic!("unexpected error: {e}");
        }
        options
    }

    fn errors(args: TokenStream) -> Vec<String> {
        let mut errors = None;
        parse(args, &mut errors);
        errors
            .map(|e| e.into_iter().map(|e| e.to_string()).collect())
            .unwrap_or_default()
    }

    fn one_error(args: TokenStream) -> String {
        let all = errors(args);
        assert_eq!(all.len(), 1, "expected one error, got {all:?}");
        all.into_iter().next().unwrap_or_default()
    }

    #[test]
    fn every_option_parses() {
        let options = parse_ok(quote!(
            agent = crate::bots::support,
            runs = 5,
            min_pass_rate = 0.8,
            timeout = "1m30s",
            tags = ["smoke", "refunds"],
            description = "refunds are issued",
            judge_model = "openai/gpt-4o-mini",
            strict,
            snapshot = true,
            crate = ::ne,
        ));
        assert_eq!(
            options.agent.map(|p| p.to_token_stream().to_string()),
            Some("crate :: bots :: support".to_string())
        );
        assert_eq!(options.runs, Some(5));
        assert_eq!(options.min_pass_rate, Some(0.8));
        assert_eq!(options.timeout_ms, Some(90_000));
        let tags: Vec<String> = options.tags.iter().map(LitStr::value).collect();
        assert_eq!(tags, ["smoke", "refunds"]);
        assert_eq!(
            options.description.map(|d| d.value()),
            Some("refunds are issued".to_string())
        );
        assert_eq!(
            options.judge_model.map(|d| d.value()),
            Some("openai/gpt-4o-mini".to_string())
        );
        assert!(options.strict);
        assert!(options.snapshot);
        assert!(options.krate.is_some());
    }

    #[test]
    fn empty_and_trailing_comma() {
        assert!(errors(quote!()).is_empty());
        let options = parse_ok(quote!(runs = 2,));
        assert_eq!(options.runs, Some(2));
    }

    #[test]
    fn flags_accept_booleans() {
        let options = parse_ok(quote!(strict = false, snapshot));
        assert!(!options.strict);
        assert!(options.snapshot);
        assert!(one_error(quote!(strict = 3)).contains("`strict` is a flag"));
    }

    #[test]
    fn turbofish_agent_is_one_option() {
        let options = parse_ok(quote!(agent = make::<A, B>, runs = 2));
        assert!(options.agent.is_some());
        assert_eq!(options.runs, Some(2));
    }

    #[test]
    fn all_errors_are_collected() {
        let all = errors(quote!(
            runs = 0,
            bogus,
            timeout = 30,
            runs = 2,
            tags = [1, 2]
        ));
        assert_eq!(all.len(), 6, "{all:?}");
        assert!(all[0].contains("at least 1"));
        assert!(all[1].contains("unknown #[eval] option `bogus`"));
        assert!(all[2].contains("timeout = \"30s\""));
        assert!(all[3].contains("given twice"));
        assert!(all[4].contains("each tag is a string: write `\"1\"`"));
        assert!(all[5].contains("each tag is a string: write `\"2\"`"));
    }

    #[test]
    fn a_syntax_error_does_not_hide_the_others() {
        let all = errors(quote!(runs = , strict = 3));
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(all[0].contains("no value"));
        assert!(all[1].contains("flag"));
        let all = errors(quote!(runs 3, timeout(1)));
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(all[0].contains("separate #[eval] options with commas"));
        assert!(all[1].contains("write `timeout = ..`"));
        assert!(one_error(quote!(runs = 1,, strict)).contains("expected an option"));
    }

    #[test]
    fn unknown_options_suggest_the_closest() {
        let message = one_error(quote!(run = 3));
        assert!(message.contains("did you mean `runs`?"), "{message}");
        assert!(
            message.contains("`agent`, `runs`, `min_pass_rate`"),
            "{message}"
        );
        let message = one_error(quote!(Tags = ["a"]));
        assert!(message.contains("did you mean `tags`?"), "{message}");
        let message = one_error(quote!(frobnicate));
        assert!(!message.contains("did you mean"), "{message}");
    }

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
            (quote!(agent = bot()), "not a call: write `agent = bot`"),
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
        assert!(parse_duration("99999999999999999999999h").is_err());
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("runs", "runs"), 0);
        assert_eq!(edit_distance("run", "runs"), 1);
        assert_eq!(edit_distance("timout", "timeout"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
