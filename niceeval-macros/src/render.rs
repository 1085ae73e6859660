//! Rendering a validated eval: the user's function kept intact inside a generated `static`
//! `EvalDefinition`, a plain `#[test]` that hands that static to the runtime, and a registration
//! for the suite runner.
//!
//! The generated code only wires: it names everything by absolute path through the niceeval
//! crate (`crate = path` when renamed), prefixes its own identifiers `__niceeval_` /
//! `__NICEEVAL_`, and spans the glue that the type checker may reject at the user's tokens (the
//! parameter type, the return type, the function name), so those errors land on the user's line.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::{Attribute, FnArg, Ident, ItemFn, ReturnType};

use crate::options::Options;
use crate::signature::is_test_attribute;

/// Where each attribute written on the eval goes.
struct Attributes<'a> {
    /// `#[cfg]`: on every generated item.
    cfg: Vec<&'a Attribute>,
    /// On the generated `#[test]` fn: docs, `#[ignore]`, `#[should_panic]`, lint levels.
    test: Vec<&'a Attribute>,
    /// On the user's function: everything but `cfg` and the test-only attributes.
    function: Vec<&'a Attribute>,
    /// Whether `#[ignore]` is present.
    ignored: bool,
}

fn is(attr: &Attribute, name: &str) -> bool {
    attr.path().is_ident(name)
}

fn sort_attributes(attrs: &[Attribute]) -> Attributes<'_> {
    let mut sorted = Attributes {
        cfg: Vec::new(),
        test: Vec::new(),
        function: Vec::new(),
        ignored: false,
    };
    for attr in attrs {
        if is(attr, "cfg") {
            sorted.cfg.push(attr);
        } else if is(attr, "ignore") || is(attr, "should_panic") {
            sorted.ignored |= is(attr, "ignore");
            sorted.test.push(attr);
        } else if ["doc", "allow", "warn", "deny", "forbid"]
            .iter()
            .any(|name| is(attr, name))
        {
            // Both: docs for hover, lint levels so an `allow` reaches whichever item needs it.
            sorted.test.push(attr);
            sorted.function.push(attr);
        } else {
            // `#[expect]` only where the user's code is, so it is not unfulfilled on the test fn;
            // other attributes transform or describe the user's function.
            sorted.function.push(attr);
        }
    }
    sorted
}

/// The first and last token spans of `tokens`: spanning generated tokens from `start` to `end`
/// makes rustc underline the whole of the user's tokens (as `syn::Error::new_spanned` does).
fn span_range(tokens: impl ToTokens) -> (Span, Span) {
    let mut iter = tokens.into_token_stream().into_iter();
    let start = iter.next().map_or_else(Span::call_site, |t| t.span());
    let end = iter.last().map_or(start, |t| t.span());
    (start, end)
}

/// The path of the niceeval crate, with every token at `span`.
fn krate_at(options: &Options, span: Span) -> TokenStream {
    match &options.krate {
        Some(path) => respan(path.to_token_stream(), span),
        None => quote_spanned!(span=> ::niceeval),
    }
}

fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tree| {
            if let TokenTree::Group(group) = &tree {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                tree = TokenTree::Group(inner);
            } else {
                tree.set_span(span);
            }
            tree
        })
        .collect()
}

/// The expansion of a valid eval.
pub fn render(function: ItemFn, options: Options) -> TokenStream {
    let ItemFn {
        attrs, sig, block, ..
    } = function;
    let attributes = sort_attributes(&attrs);
    let cfg = &attributes.cfg;
    let test_attrs = &attributes.test;
    let function_attrs = &attributes.function;

    let name = &sig.ident;
    let name_str = name.unraw().to_string();
    let static_ident = format_ident!("__NICEEVAL_EVAL_{}", name.unraw());
    let krate = krate_at(&options, Span::call_site());

    // The handle argument, spanned over the user's parameter type: a wrong handle type is
    // reported there ("expected `&mut String`, found `&mut Eval`"). It is a reborrow
    // `&mut *(handle)` whose first token sits at the type's start and whose parentheses sit at
    // its end, so rustc underlines the whole type; the binding inside keeps call-site hygiene.
    let handle = Ident::new("__niceeval_t", Span::call_site());
    let handle_arg = match sig.inputs.first() {
        Some(FnArg::Typed(param)) => {
            let (start, end) = span_range(&param.ty);
            let mut group =
                proc_macro2::Group::new(proc_macro2::Delimiter::Parenthesis, quote!(#handle));
            group.set_span(end);
            quote_spanned!(start=> &mut *#group)
        }
        _ => quote!(#handle),
    };
    // The output witness, spanned over the user's return type: an unsupported return type is
    // reported there. The future itself is spanned at the function name: a future that is not
    // `Send` is reported there, with rustc's note pointing at the value held across `.await`.
    let output = match &sig.output {
        ReturnType::Default => {
            let krate = krate_at(&options, name.span());
            quote_spanned!(name.span()=> #krate::__private::BodyOutput::new())
        }
        ReturnType::Type(_, ty) => {
            let (start, end) = span_range(ty);
            let krate = krate_at(&options, start);
            let tail = quote_spanned!(end=> BodyOutput::new());
            quote_spanned!(start=> #krate::__private::#tail)
        }
    };
    // The call to the runtime's `body` is spanned at the function name too: rustc reports a
    // future that is not `Send` at the call, not at the argument.
    let body_krate = krate_at(&options, name.span());
    let future = quote_spanned! {name.span()=>
        #body_krate::__private::body(#name(#handle_arg), #output)
    };
    // A dataset eval runs as its cases: the plain body is never called (the runtime runs each
    // case through the case body), and the case body deserializes the record first.
    let (future, dataset) = match &options.cases {
        None => (future, None),
        Some(cases) => {
            let path = &cases.path;
            let case = Ident::new("__niceeval_case", Span::call_site());
            let case_ty = match sig.inputs.iter().nth(1) {
                Some(FnArg::Typed(param)) => param.ty.to_token_stream(),
                _ => quote!(_),
            };
            let (ty_start, _) = span_range(&case_ty);
            let record_krate = krate_at(&options, ty_start);
            let from_record = quote_spanned! {ty_start=>
                #record_krate::__private::case_from_record::<#case_ty>(#case, #path)
            };
            let case_future = quote_spanned! {name.span()=>
                #body_krate::__private::body(#name(#handle_arg, #case), #output)
            };
            let case_body = quote! {
                fn __niceeval_case_body<'__niceeval>(
                    #handle: &'__niceeval mut #krate::__private::Eval,
                    #case: &'__niceeval #krate::__private::Case,
                ) -> #krate::__private::BoxFuture<'__niceeval, ::core::result::Result<(), #krate::__private::Error>> {
                    let #case = match #from_record {
                        ::core::result::Result::Ok(case) => case,
                        ::core::result::Result::Err(e) => {
                            return ::std::boxed::Box::pin(async move { ::core::result::Result::Err(e) })
                        }
                    };
                    #case_future
                }
                // Cargo rebuilds the test target when the dataset changes.
                const _: &[u8] = ::core::include_bytes!(::core::concat!(
                    ::core::env!("CARGO_MANIFEST_DIR"), "/", #path
                ));
            };
            let stub = quote!(::std::boxed::Box::pin(async {
                ::core::result::Result::Ok(())
            }));
            (stub, Some((cases, case_body)))
        }
    };

    let mut builder = TokenStream::new();
    if let Some(agent) = &options.agent {
        let (start, _) = span_range(agent);
        let agent_krate = krate_at(&options, start);
        let make = match agent {
            crate::options::AgentOption::Function(path) => quote_spanned! {start=>
                #agent_krate::__private::make_agent(#path())
            },
            crate::options::AgentOption::Expression(expr) => quote_spanned! {start=>
                #agent_krate::__private::make_agent(#expr)
            },
        };
        builder.extend(quote! {
            .with_agent({
                fn __niceeval_agent() -> #krate::__private::Arc<dyn #krate::__private::Agent> { #make }
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
    if let Some(dir) = &options.workspace {
        builder.extend(quote!(.with_workspace(#dir)));
    }
    if attributes.ignored {
        builder.extend(quote!(.with_ignored()));
    }
    if let Some((cases, _)) = &dataset {
        let path = &cases.path;
        builder.extend(quote!(.with_cases(#path, __niceeval_case_body)));
        if let Some(rate) = options.min_case_pass_rate {
            builder.extend(quote!(.with_min_case_pass_rate(#rate)));
        }
    }
    let case_body = dataset.as_ref().map(|(_, body)| body);
    let location = quote_spanned!(name.span()=> ::core::file!(), ::core::line!());

    // With `snapshot`, the snapshot is taken in the generated test, so the snapshot macro expands
    // in the user's crate and insta stores the file there, under the eval's name. (The runtime
    // side, `run_test_report`/`finish_test`/`assert_report_snapshot!`, lands with the suite
    // runner.)
    let test_body = if options.snapshot {
        quote! {
            let __niceeval_report = #krate::__private::run_test_report(&#static_ident);
            #krate::__private::assert_report_snapshot!(__niceeval_report);
            #krate::__private::finish_test(__niceeval_report);
        }
    } else {
        quote!(#krate::__private::run_test(&#static_ident))
    };
    // One test per case, in a module named after the function: `capitals::paris`.
    let tests = match &dataset {
        None => quote! {
            #(#cfg)*
            #(#test_attrs)*
            #[::core::prelude::v1::test]
            fn #name() {
                #test_body
            }
        },
        Some((cases, _)) => {
            let tests = cases.names.iter().map(|case| {
                let ident = syn::parse_str::<Ident>(case)
                    .unwrap_or_else(|_| Ident::new_raw(case, Span::call_site()));
                // With `snapshot`, each case's report is snapshotted here, in the user's crate:
                // `<module>__<function>__<case>.snap`, the name the suite runner uses too.
                let body = if options.snapshot {
                    quote! {
                        let __niceeval_report =
                            #krate::__private::run_case_report(&super::#static_ident, #case);
                        #krate::__private::assert_report_snapshot!(__niceeval_report);
                        #krate::__private::finish_case(&super::#static_ident, __niceeval_report);
                    }
                } else {
                    quote!(#krate::__private::run_case(&super::#static_ident, #case))
                };
                quote! {
                    #(#test_attrs)*
                    #[::core::prelude::v1::test]
                    fn #ident() {
                        #body
                    }
                }
            });
            quote! {
                #(#cfg)*
                #[doc(hidden)]
                mod #name {
                    #(#tests)*
                }
            }
        }
    };

    quote! {
        #tests

        #(#cfg)*
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        static #static_ident: #krate::__private::EvalDefinition = {
            // `async` is required by #[eval] even when the body awaits nothing.
            #[allow(clippy::unused_async)]
            #(#function_attrs)*
            #sig #block

            fn __niceeval_body<'__niceeval>(
                #handle: &'__niceeval mut #krate::__private::Eval,
            ) -> #krate::__private::BoxFuture<'__niceeval, ::core::result::Result<(), #krate::__private::Error>> {
                #future
            }

            #case_body

            #krate::__private::EvalDefinition::new(
                #name_str,
                ::core::module_path!(),
                #location,
                ::core::env!("CARGO_MANIFEST_DIR"),
                __niceeval_body,
            )
            #builder
        };

        #(#cfg)*
        #krate::__private::inventory::submit! {
            #krate::__private::Registration(&#static_ident)
        }
    }
}

/// What is emitted when the eval is invalid: the user's function, repaired just enough to
/// compile on its own (made `async` so its `.await`s stay valid, test attributes removed), so the
/// compile errors are only the macro's and IDE completion inside the body keeps working. A `self`
/// parameter is kept: inside an `impl` it is valid, and outside one rustc reports it anyway.
pub fn fallback(mut function: ItemFn) -> TokenStream {
    function
        .attrs
        .retain(|a| !is_test_attribute(a) && !is(a, "ignore") && !is(a, "should_panic"));
    let sig = &mut function.sig;
    sig.constness = None;
    sig.abi = None;
    sig.variadic = None;
    if sig.asyncness.is_none() {
        sig.asyncness = Some(syn::Token![async](sig.fn_token.span));
    }
    quote! {
        #[allow(dead_code)]
        #function
    }
}
