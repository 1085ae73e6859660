//! Parsing and validating the options of `#[eval(..)]`.
//!
//! Every problem is collected, so one compile shows them all, each at the offending token and
//! each saying how to write the option correctly. The options are split at top-level commas
//! before they are parsed, so a syntax error in one option does not hide the errors of the
//! others.

mod values;

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::{Expr, Ident, LitStr, Path, Token};

use values::{apply_value, flag};

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
    ("cases", "cases = \"evals/cases.jsonl\""),
    ("min_case_pass_rate", "min_case_pass_rate = 0.9"),
    ("workspace", "workspace = \"fixtures/app\""),
    ("crate", "crate = my_niceeval"),
];

/// How the eval gets its agent.
pub enum AgentOption {
    /// `agent = support_bot`: a function called with no arguments.
    Function(Path),
    /// `agent = fixer("cheater")`, `agent = Codex::new().model("o4")`: an expression whose
    /// value is the agent, evaluated afresh for every run.
    Expression(Expr),
}

impl ToTokens for AgentOption {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        match self {
            AgentOption::Function(path) => path.to_tokens(tokens),
            AgentOption::Expression(expr) => expr.to_tokens(tokens),
        }
    }
}

/// The validated options.
#[derive(Default)]
pub struct Options {
    /// `agent = path` (a `fn() -> impl Agent`) or `agent = expression` (an `Agent`).
    pub agent: Option<AgentOption>,
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
    /// `cases = "file"`: the dataset, read now to name one test per case.
    pub cases: Option<Cases>,
    /// `cases` was written (even when its value is invalid): the function takes a case.
    pub cases_written: bool,
    /// `min_case_pass_rate = x` (with `cases`), within `0.0..=1.0`.
    pub min_case_pass_rate: Option<f64>,
    /// `workspace = "dir"`: the template directory, checked to exist now.
    pub workspace: Option<LitStr>,
}

/// A dataset read at compile time.
pub struct Cases {
    /// The path as written (relative to the crate's manifest directory).
    pub path: LitStr,
    /// The cases' names, in file order.
    pub names: Vec<String>,
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
        options.cases_written |= key == "cases";
        if let Err(e) = apply(&mut options, &key, &option) {
            push(errors, e);
        }
    }
    if options.min_case_pass_rate.is_some() && !options.cases_written {
        push(
            errors,
            syn::Error::new(
                proc_macro2::Span::call_site(),
                "`min_case_pass_rate` is the share of a dataset's cases that must pass: it needs `cases = \"evals/cases.jsonl\"` (for the share of runs of one eval, use `min_pass_rate`)",
            ),
        );
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

/// The least Jaro-Winkler similarity (case-insensitive) at which a known option is
/// suggested; the runtime uses the same rule for `niceeval.toml` keys and assertion types.
const MIN_SIMILARITY: f64 = 0.8;

/// The known name most similar to `key` (the first of equals), if it is close enough to be a
/// typo: `run` → `runs`, `judge` → `judge_model`, but nothing for `retries`.
fn closest<'a>(key: &str, names: &[&'a str]) -> Option<&'a str> {
    let key = key.to_lowercase();
    let mut best: Option<(f64, &'a str)> = None;
    for name in names {
        let similarity = strsim::jaro_winkler(&key, name);
        if similarity >= MIN_SIMILARITY && best.is_none_or(|(b, _)| similarity > b) {
            best = Some((similarity, name));
        }
    }
    best.map(|(_, name)| name)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use quote::ToTokens;
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

    pub(super) fn one_error(args: TokenStream) -> String {
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
    fn an_agent_is_a_function_or_an_expression_giving_one() {
        let function = parse_ok(quote!(agent = bots::support));
        assert!(matches!(function.agent, Some(AgentOption::Function(_))));
        for expression in [
            quote!(agent = fixer("cheater")),
            quote!(agent = bot()),
            quote!(agent = Codex::new().model("o4")),
            quote!(agent = make::<A>(1, 2)),
        ] {
            let options = parse_ok(expression.clone());
            assert!(
                matches!(options.agent, Some(AgentOption::Expression(_))),
                "{expression}"
            );
        }
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
    fn suggestions_reach_names_a_few_edits_cannot() {
        // A missing suffix is many edits but an obvious intent.
        let message = one_error(quote!(judge = "openai/gpt-4o-mini"));
        assert!(message.contains("did you mean `judge_model`?"), "{message}");
        let message = one_error(quote!(desc = "x"));
        assert!(message.contains("did you mean `description`?"), "{message}");
        let message = one_error(quote!(tiemout = "1s"));
        assert!(message.contains("did you mean `timeout`?"), "{message}");
        let message = one_error(quote!(retries = 3));
        assert!(!message.contains("did you mean"), "{message}");
    }

    #[test]
    fn cases_read_the_dataset_at_compile_time() {
        // The unit tests run in the crate's directory: Cargo.toml is there, a dataset is not.
        let message = one_error(quote!(cases = "no/such/cases.jsonl"));
        assert!(
            message.starts_with(
                "cannot read the dataset \"no/such/cases.jsonl\" (relative to the crate's directory"
            ),
            "{message}"
        );
        let message = one_error(quote!(cases = "Cargo.toml"));
        assert!(message.contains("unknown dataset format"), "{message}");
    }

    #[test]
    fn min_case_pass_rate_needs_cases_and_a_fraction() {
        let message = one_error(quote!(min_case_pass_rate = 0.9));
        assert!(message.contains("it needs `cases = "), "{message}");
        let all = errors(quote!(cases = "Cargo.toml", min_case_pass_rate = 90));
        assert!(
            all.iter()
                .any(|m| m.contains("for 90% write `min_case_pass_rate = 0.9`")),
            "{all:?}"
        );
    }
}
