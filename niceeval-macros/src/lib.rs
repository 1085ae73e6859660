//! Procedural macros of niceeval. Use them through the `niceeval` crate
//! (`use niceeval::prelude::*`), which documents them.
//!
//! `#[eval]` keeps the user's `async fn` intact inside a generated `static` describing the eval,
//! and emits a plain `#[test]` that hands that static to `niceeval::__private::run_test`, plus a
//! registration for the suite runner. All logic lives in the runtime; the macro only validates
//! and wires.

mod options;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, Type};

use options::{push, Options};

/// Marks an `async fn NAME(t: &mut Eval)` as an eval. See `niceeval::eval`.
#[proc_macro_attribute]
pub fn eval(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(args.into(), item.into()).into()
}

fn expand(args: TokenStream2, item: TokenStream2) -> TokenStream2 {
    let function: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let error =
                syn::Error::new_spanned(&item, "#[eval] goes on an `async fn NAME(t: &mut Eval)`");
            return with_item(item, error);
        }
    };
    let mut errors = None;
    let options = match options::parse(args) {
        Ok(o) => o,
        Err(e) => {
            push(&mut errors, e);
            Options::default()
        }
    };
    check_signature(&function, &mut errors);
    match errors {
        Some(error) => with_item(item, error),
        None => render(function, options),
    }
}

/// On error, keep the original item (so the IDE still sees the function) and add the errors.
fn with_item(item: TokenStream2, error: syn::Error) -> TokenStream2 {
    let error = error.to_compile_error();
    quote!(#item #error)
}

fn check_signature(function: &ItemFn, errors: &mut Option<syn::Error>) {
    let sig = &function.sig;
    if sig.asyncness.is_none() {
        push(
            errors,
            syn::Error::new(
                sig.fn_token.span(),
                "#[eval] functions must be async: write `async fn name(t: &mut Eval)`",
            ),
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        push(
            errors,
            syn::Error::new(sig.generics.span(), "#[eval] functions cannot be generic"),
        );
    }
    if let Some(variadic) = &sig.variadic {
        push(
            errors,
            syn::Error::new(variadic.span(), "#[eval] functions cannot be variadic"),
        );
    }
    let params: Vec<&FnArg> = sig.inputs.iter().collect();
    match params.as_slice() {
        [] => push(
            errors,
            syn::Error::new(
                sig.paren_token.span.join(),
                "#[eval] functions take the eval handle: `(t: &mut Eval)`",
            ),
        ),
        [FnArg::Receiver(receiver)] => push(
            errors,
            syn::Error::new(
                receiver.span(),
                "#[eval] functions cannot take `self`; write `(t: &mut Eval)`",
            ),
        ),
        [FnArg::Typed(param)] => {
            let ok = matches!(&*param.ty, Type::Reference(r) if r.mutability.is_some());
            if !ok {
                push(
                    errors,
                    syn::Error::new(
                        param.ty.span(),
                        "the eval handle must be taken as `&mut Eval`",
                    ),
                );
            }
        }
        [_, extra @ ..] => {
            for param in extra {
                push(
                    errors,
                    syn::Error::new(
                        param.span(),
                        "#[eval] functions take exactly one parameter, `t: &mut Eval`",
                    ),
                );
            }
        }
    }
    for attr in &function.attrs {
        let path = attr.path();
        let last = path.segments.last().map(|s| s.ident.to_string());
        if matches!(last.as_deref(), Some("test" | "eval")) {
            push(
                errors,
                syn::Error::new(
                    attr.span(),
                    "#[eval] already makes this function a test; remove this attribute",
                ),
            );
        }
    }
}

fn render(function: ItemFn, options: Options) -> TokenStream2 {
    let krate = options
        .krate
        .as_ref()
        .map(|p| quote!(#p))
        .unwrap_or_else(|| quote!(::niceeval));
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = function;
    let name = &sig.ident;
    let name_str = name.to_string();
    let static_ident = format_ident!("__NICEEVAL_EVAL_{}", name);
    let cfgs: Vec<_> = attrs.iter().filter(|a| a.path().is_ident("cfg")).collect();
    let ignored = attrs.iter().any(|a| a.path().is_ident("ignore"));
    let test_attrs: Vec<_> = attrs.iter().filter(|a| !a.path().is_ident("cfg")).collect();
    let body_attrs: Vec<_> = attrs
        .iter()
        .filter(|a| a.path().is_ident("allow") || a.path().is_ident("expect"))
        .collect();

    let mut builder = quote!();
    if let Some(agent) = &options.agent {
        let make = quote_spanned! {agent.span()=>
            #krate::__private::make_agent(#agent())
        };
        builder.extend(quote! {
            .with_agent({
                fn __niceeval_agent() -> #krate::__private::Arc<dyn #krate::Agent> { #make }
                __niceeval_agent
            })
        });
    }
    if let Some(runs) = options.runs {
        builder.extend(quote!(.with_runs(#runs)));
    }
    if let Some(rate) = options.min_pass_rate {
        builder.extend(quote!(.with_min_pass_rate(#rate)));
    }
    if let Some(ms) = options.timeout_ms {
        builder.extend(quote!(.with_timeout_ms(#ms)));
    }
    if !options.tags.is_empty() {
        let tags = &options.tags;
        builder.extend(quote!(.with_tags(&[#(#tags),*])));
    }
    if let Some(d) = &options.description {
        builder.extend(quote!(.with_description(#d)));
    }
    if let Some(m) = &options.judge_model {
        builder.extend(quote!(.with_judge_model(#m)));
    }
    if options.strict {
        builder.extend(quote!(.with_strict()));
    }
    if options.snapshot {
        builder.extend(quote!(.with_snapshot()));
    }
    if ignored {
        builder.extend(quote!(.with_ignored()));
    }

    // The call of the user's function, spanned at its signature so a non-Send future or a bad
    // return type is reported on the user's line.
    let call = quote_spanned! {sig.span()=>
        ::std::boxed::Box::pin(async move {
            #krate::__private::IntoBodyResult::into_body_result(#name(t).await)
        })
    };
    let location = quote_spanned! {name.span()=> file!(), line!()};

    // With `snapshot`, the snapshot is taken here, at the user's call site, so insta stores it
    // in the user's crate under the eval's name.
    let test_body = if options.snapshot {
        quote! {
            let report = #krate::__private::run_test_report(&#static_ident);
            #krate::assert_report_snapshot!(report);
            #krate::__private::finish_test(report);
        }
    } else {
        quote!(#krate::__private::run_test(&#static_ident))
    };

    quote! {
        #(#test_attrs)*
        #[::core::prelude::v1::test]
        #(#cfgs)*
        #vis fn #name() {
            #test_body
        }

        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        static #static_ident: #krate::__private::EvalDefinition = {
            #(#body_attrs)*
            #sig #block

            fn __niceeval_body<'a>(
                t: &'a mut #krate::Eval,
            ) -> #krate::__private::BoxFuture<'a, ::core::result::Result<(), #krate::Error>> {
                #call
            }

            #krate::__private::EvalDefinition::new(
                #name_str,
                ::core::module_path!(),
                #location,
                ::core::env!("CARGO_MANIFEST_DIR"),
                __niceeval_body,
            )
            #builder
        };

        #(#cfgs)*
        #krate::__private::inventory::submit! {
            #krate::__private::Registration(&#static_ident)
        }
    }
}
