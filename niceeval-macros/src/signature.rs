//! Checking that `#[eval]` sits on an `async fn NAME(t: &mut Eval)`.
//!
//! Every problem is collected, each at the offending token with the fix in its message. What
//! only the type checker knows (is the parameter really `Eval`, is the return type `()` or a
//! `Result`, is the future `Send`) is left to it: the expansion points those errors at the
//! user's tokens instead.

use syn::{Attribute, FnArg, GenericParam, ItemFn, Signature, Type};

use crate::options::push;

/// The usual shape, for messages.
fn shape(sig: &Signature) -> String {
    format!("`async fn {}(t: &mut Eval)`", sig.ident)
}

/// Checks the signature and attributes of `function`, adding every problem to `errors`. A
/// dataset eval (`cases`) takes the case as a second parameter.
pub fn check(function: &ItemFn, cases: bool, errors: &mut Option<syn::Error>) {
    let sig = &function.sig;
    if let Some(constness) = &sig.constness {
        push(
            errors,
            syn::Error::new(
                constness.span,
                format!("an eval cannot be `const`: write {}", shape(sig)),
            ),
        );
    }
    if sig.asyncness.is_none() {
        push(
            errors,
            syn::Error::new(
                sig.fn_token.span,
                format!(
                    "#[eval] functions must be async: write `async fn {}(..)`",
                    sig.ident
                ),
            ),
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        push(
            errors,
            syn::Error::new(
                unsafety.span,
                format!("an eval cannot be `unsafe`: write {}", shape(sig)),
            ),
        );
    }
    if let Some(abi) = &sig.abi {
        push(
            errors,
            syn::Error::new_spanned(
                abi,
                format!("an eval cannot declare an ABI: write {}", shape(sig)),
            ),
        );
    }
    check_generics(sig, errors);
    if let Some(variadic) = &sig.variadic {
        push(
            errors,
            syn::Error::new_spanned(
                variadic,
                format!("an eval cannot be variadic: write {}", shape(sig)),
            ),
        );
    }
    check_parameters(sig, cases, errors);
    for attr in &function.attrs {
        if let Some(message) = conflicting_attribute(attr) {
            push(errors, syn::Error::new_spanned(attr, message));
        }
    }
}

/// Lifetime parameters are harmless; type and const parameters cannot be chosen by the runner.
fn check_generics(sig: &Signature, errors: &mut Option<syn::Error>) {
    for param in &sig.generics.params {
        let what = match param {
            GenericParam::Lifetime(_) => continue,
            GenericParam::Type(_) => "type",
            GenericParam::Const(_) => "const",
        };
        push(
            errors,
            syn::Error::new_spanned(
                param,
                format!(
                    "#[eval] functions cannot be generic: the runner calls `{}` with the eval handle only, so it cannot choose this {what} parameter; remove it",
                    sig.ident
                ),
            ),
        );
    }
}

fn check_parameters(sig: &Signature, cases: bool, errors: &mut Option<syn::Error>) {
    let mut typed = 0;
    let allowed = if cases { 2 } else { 1 };
    for param in &sig.inputs {
        match param {
            FnArg::Receiver(receiver) => push(
                errors,
                syn::Error::new_spanned(
                    receiver,
                    format!(
                        "#[eval] functions cannot take `self`: an eval is a free function {}; move it out of the `impl` block",
                        shape(sig)
                    ),
                ),
            ),
            FnArg::Typed(param) => {
                typed += 1;
                if typed > allowed {
                    push(
                        errors,
                        syn::Error::new_spanned(
                            param,
                            if cases {
                                "a dataset eval takes the eval handle and the case, `(t: &mut Eval, case: MyCase)`; remove this one"
                            } else {
                                "#[eval] functions take exactly one parameter, the eval handle `t: &mut Eval`; remove this one (set up other inputs inside the body, or run one eval per record of a file with `cases = \"evals/cases.jsonl\"` and a `case: MyCase` parameter)"
                            },
                        ),
                    );
                } else if typed == 2 {
                    // The case: any `DeserializeOwned + Send` type, checked by the type checker.
                } else if let Some(message) = handle_type_problem(&param.ty) {
                    push(errors, syn::Error::new_spanned(&param.ty, message));
                }
            }
        }
    }
    if cases && typed == 1 {
        push(
            errors,
            syn::Error::new(
                sig.paren_token.span.join(),
                format!(
                    "a dataset eval takes the case as its second parameter: write `async fn {}(t: &mut Eval, case: MyCase)` with `#[derive(serde::Deserialize)] struct MyCase {{ .. }}`",
                    sig.ident
                ),
            ),
        );
    }
    if sig.inputs.is_empty() {
        push(
            errors,
            syn::Error::new(
                sig.paren_token.span.join(),
                format!(
                    "#[eval] functions take the eval handle as their parameter: write {}",
                    shape(sig)
                ),
            ),
        );
    }
}

/// What is wrong with the handle's type, as far as syntax can tell. Whether the referent is
/// really `niceeval::Eval` is left to the type checker (aliases and renamed imports are fine).
fn handle_type_problem(ty: &Type) -> Option<&'static str> {
    match ty {
        Type::Reference(r) if r.mutability.is_some() => None,
        Type::Reference(_) => Some(
            "the eval handle must be borrowed mutably: write `t: &mut Eval` (sending and recording change it)",
        ),
        Type::Group(group) => handle_type_problem(&group.elem),
        Type::Paren(paren) => handle_type_problem(&paren.elem),
        _ => Some(
            "the eval handle is borrowed, not owned: write `t: &mut Eval` (the runner keeps the handle to read what was recorded)",
        ),
    }
}

/// Whether `attr` is a test attribute (`#[test]`, `#[tokio::test]`, ..) or a second `#[eval]`.
pub fn is_test_attribute(attr: &Attribute) -> bool {
    let last = attr.path().segments.last().map(|s| s.ident.to_string());
    matches!(last.as_deref(), Some("test" | "eval"))
}

fn conflicting_attribute(attr: &Attribute) -> Option<String> {
    if !is_test_attribute(attr) {
        return None;
    }
    let path = attr
        .path()
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::");
    Some(if path.ends_with("eval") {
        format!("`#[{path}]` is given twice; remove this one")
    } else {
        format!(
            "#[eval] already makes this function a test and runs it on its own async runtime; remove `#[{path}]`"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn errors(function: ItemFn) -> Vec<String> {
        let mut errors = None;
        check(&function, false, &mut errors);
        errors
            .map(|e| e.into_iter().map(|e| e.to_string()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn valid_signatures() {
        let valid: Vec<ItemFn> = vec![
            parse_quote!(
                async fn a(t: &mut Eval) {}
            ),
            parse_quote!(
                async fn b(_: &mut niceeval::Eval) -> niceeval::Result {
                    Ok(())
                }
            ),
            parse_quote!(
                async fn c<'a>(mut t: &'a mut Eval) {}
            ),
            parse_quote!(
                async fn d(t: (&mut Eval)) {}
            ),
            parse_quote!(
                #[ignore]
                #[doc = "x"]
                pub async fn e(t: &mut Eval) {}
            ),
        ];
        for function in valid {
            assert_eq!(
                errors(function.clone()),
                Vec::<String>::new(),
                "{}",
                function.sig.ident
            );
        }
    }

    #[test]
    fn each_qualifier_is_reported() {
        let all = errors(parse_quote!(
            const unsafe extern "C" fn f(t: &mut Eval) {}
        ));
        assert_eq!(all.len(), 4, "{all:?}");
        assert!(all[0].contains("cannot be `const`"));
        assert!(all[1].contains("must be async"));
        assert!(all[2].contains("cannot be `unsafe`"));
        assert!(all[3].contains("cannot declare an ABI"));
    }

    #[test]
    fn parameters() {
        let all = errors(parse_quote!(
            async fn f(&self, t: &mut Eval, u: u32) {}
        ));
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(all[0].contains("cannot take `self`"));
        assert!(all[1].contains("exactly one parameter"));
        let all = errors(parse_quote!(
            async fn f(t: Box<Eval>) {}
        ));
        assert!(all[0].contains("borrowed, not owned"), "{all:?}");
    }

    #[test]
    fn test_attributes() {
        let all = errors(parse_quote!(
            #[tokio::test(flavor = "multi_thread")]
            #[niceeval::eval]
            #[test_case]
            async fn f(t: &mut Eval) {}
        ));
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(all[0].contains("remove `#[tokio::test]`"));
        assert!(all[1].contains("`#[niceeval::eval]` is given twice"));
    }
}
