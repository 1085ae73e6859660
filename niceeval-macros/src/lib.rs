//! Procedural macros of niceeval. Use them through the `niceeval` crate
//! (`use niceeval::prelude::*`), which documents them.
//!
//! `#[eval]` keeps the user's `async fn` intact inside a generated `static` describing the eval,
//! and emits a plain `#[test]` that hands that static to `niceeval::__private::run_test`, plus a
//! registration for the suite runner. All logic lives in the runtime; the macro only validates
//! (`options`, `signature`) and wires (`render`).

mod options;
mod render;
mod signature;
mod suites;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use syn::Item;
use syn::spanned::Spanned;

/// Marks an `async fn NAME(t: &mut Eval)` as an eval: a test that `cargo test` runs and filters
/// by `NAME`.
///
/// The function returns `()` or `niceeval::Result`, and its future must be `Send` (the body runs
/// on a multi-thread runtime). Options, all optional:
///
/// | option | value | meaning |
/// | --- | --- | --- |
/// | `agent = path` | a `fn() -> impl Agent` | the agent under test; otherwise `[agent]` in `niceeval.toml` |
/// | `runs = N` | a whole number ≥ 1 | run the eval `N` times; its result is a pass rate |
/// | `min_pass_rate = p` | `0.0..=1.0` | the pass rate needed with `runs` (default `1.0`) |
/// | `timeout = "30s"` | a duration (`ms`, `s`, `m`, `h`; `"1m30s"`) | per run; overrides `niceeval.toml` |
/// | `tags = ["a", "b"]` | string literals | for filtering and reports |
/// | `description = ".."` | a string | shown in reports |
/// | `judge_model = "provider/model"` | a string | the default model for judge assertions |
/// | `strict` | flag (or `= true`/`false`) | a soft assertion below its threshold fails the eval |
/// | `snapshot` | flag (or `= true`/`false`) | snapshot the report with insta (`cargo insta review`) |
/// | `cases = "evals/cases.jsonl"` | a path from the crate's root (`.jsonl`, `.json`, `.yaml`, `.yml`, `.csv`) | one eval per case: the function takes `(t: &mut Eval, case: T)`, `T: DeserializeOwned` |
/// | `min_case_pass_rate = p` | `0.0..=1.0` | with `cases`: the share of cases that must pass for the dataset to pass |
/// | `workspace = "fixtures/app"` | a directory from the crate's root | a fresh working copy of it per run, with a git baseline outside it (`t.workspace()`) |
/// | `crate = path` | a path | where niceeval is when renamed (`use niceeval as ne;` → `crate = ne`) |
///
/// `#[ignore]`, `#[should_panic]`, `#[cfg(..)]`, doc comments and lint attributes work as on any
/// test. A misuse — a function that is not `async`, a missing or extra parameter, an unknown
/// option, a value of the wrong type, a second test attribute — is a compile error at the
/// offending token that says how to fix it.
///
/// ```
/// use niceeval::prelude::*;
///
/// fn bot() -> impl Agent {
///     agent_fn(|request: Request| async move {
///         request.events.say("Hello!");
///         Ok(())
///     })
/// }
///
/// /// Greets back.
/// #[eval(agent = bot, runs = 3, min_pass_rate = 0.6, timeout = "10s", tags = ["smoke"])]
/// async fn greets(t: &mut Eval) -> niceeval::Result {
///     t.send("Hi").await?;
///     t.check(t.reply(), includes("Hello"));
///     Ok(())
/// }
/// # fn main() {}
/// ```
#[proc_macro_attribute]
pub fn eval(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(args.into(), item.into()).into()
}

/// `niceeval_suites::main!(suites = [..])`, expanded: `main!` forwards `$crate; ARGS` here. Checks
/// that the suite files are string literals naming files that exist, then defines `main`.
#[doc(hidden)]
#[proc_macro]
pub fn __suites_main(input: TokenStream) -> TokenStream {
    suites::expand(input.into()).into()
}

fn expand(args: TokenStream2, item: TokenStream2) -> TokenStream2 {
    let function = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Fn(function)) => function,
        Ok(other) => return with_errors(item, not_a_function(&other)),
        // Not an item rustc would accept either: let rustc report it, plus where #[eval] goes.
        Err(e) => return with_errors(item, e),
    };
    let mut errors = None;
    let options = options::parse(args, &mut errors);
    signature::check(&function, options.cases_written, &mut errors);
    match errors {
        None => render::render(function, options),
        Some(errors) => with_errors(render::fallback(function), errors),
    }
}

/// `tokens` followed by the errors: the item stays visible to the IDE.
fn with_errors(mut tokens: TokenStream2, errors: syn::Error) -> TokenStream2 {
    tokens.extend(errors.to_compile_error());
    tokens
}

fn not_a_function(item: &Item) -> syn::Error {
    let what = match item {
        Item::Struct(_) => "a struct",
        Item::Enum(_) => "an enum",
        Item::Mod(_) => "a module",
        Item::Impl(_) => "an impl block",
        Item::Static(_) | Item::Const(_) => "a constant",
        Item::Trait(_) => "a trait",
        _ => "this item",
    };
    let span = match item {
        Item::Struct(s) => s.struct_token.span,
        Item::Enum(e) => e.enum_token.span,
        Item::Mod(m) => m.mod_token.span,
        Item::Impl(i) => i.impl_token.span,
        Item::Trait(t) => t.trait_token.span,
        other => other.span(),
    };
    syn::Error::new(
        span,
        format!("#[eval] goes on an `async fn NAME(t: &mut Eval)`, not on {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn expand_str(args: TokenStream2, item: TokenStream2) -> String {
        expand(args, item).to_string()
    }

    #[test]
    fn the_docs_list_every_option_the_macro_accepts() {
        // The table in `#[eval]`'s docs (this file) against the options the parser knows.
        let docs = include_str!("lib.rs");
        for (key, _) in options::KNOWN {
            assert!(
                docs.contains(&format!("/// | `{key}")),
                "`#[eval]`'s docs do not list the option `{key}`: add a row to the table"
            );
        }
    }

    #[test]
    fn valid_eval_expands_to_a_test_a_static_and_a_registration() {
        let out = expand_str(
            quote!(runs = 2),
            quote!(
                async fn greets(t: &mut Eval) {}
            ),
        );
        assert!(
            out.contains("# [:: core :: prelude :: v1 :: test] fn greets ()"),
            "{out}"
        );
        assert!(out.contains("static __NICEEVAL_EVAL_greets"), "{out}");
        assert!(out.contains("with_runs (2u32)"), "{out}");
        assert!(out.contains("inventory :: submit !"), "{out}");
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn snapshot_evals_take_the_snapshot_in_the_generated_test() {
        let out = expand_str(
            quote!(snapshot),
            quote!(
                async fn greets(t: &mut Eval) {}
            ),
        );
        assert!(
            out.contains("__private :: run_test_report (& __NICEEVAL_EVAL_greets)"),
            "{out}"
        );
        assert!(
            out.contains(":: niceeval :: __private :: assert_report_snapshot !"),
            "{out}"
        );
        assert!(out.contains("__private :: finish_test"), "{out}");
        let out = expand_str(
            quote!(),
            quote!(
                async fn greets(t: &mut Eval) {}
            ),
        );
        assert!(!out.contains("snapshot"), "{out}");
    }

    #[test]
    fn renamed_crate_replaces_every_niceeval_path() {
        let out = expand_str(
            quote!(crate = ne, agent = bot, snapshot),
            quote!(
                async fn greets(t: &mut Eval) -> niceeval::Result {
                    Ok(())
                }
            ),
        );
        assert!(!out.contains(":: niceeval"), "{out}");
        assert!(out.contains("ne :: __private :: run_test"), "{out}");
    }

    #[test]
    fn raw_identifiers_are_named_without_prefix() {
        let out = expand_str(
            quote!(),
            quote!(
                async fn r#type(t: &mut Eval) {}
            ),
        );
        assert!(out.contains("\"type\""), "{out}");
        assert!(out.contains("__NICEEVAL_EVAL_type"), "{out}");
    }

    #[test]
    fn errors_keep_a_repaired_function() {
        let out = expand_str(
            quote!(bogus),
            quote!(
                #[test]
                fn greets(self, t: &mut Eval) {}
            ),
        );
        assert!(out.contains("compile_error"), "{out}");
        assert!(
            out.contains("async fn greets (self , t : & mut Eval)"),
            "{out}"
        );
        assert!(!out.contains("# [test]"), "{out}");
        assert!(!out.contains("static"), "{out}");
    }

    #[test]
    fn not_a_function_is_reported_and_kept() {
        let out = expand_str(
            quote!(),
            quote!(
                struct S;
            ),
        );
        assert!(out.contains("struct S ;"), "{out}");
        assert!(out.contains("not on a struct"), "{out}");
    }
}
