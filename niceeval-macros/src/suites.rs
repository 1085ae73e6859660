//! `niceeval_suites::main!(suites = [..])`: the suite files are checked when the crate compiles (a
//! path that is not a string literal, or a file that cannot be read, is an error at the path)
//! and `main` runs their cases beside the registered evals. `main!` forwards `$crate` and its
//! arguments here; only a well-formed call expands to `main`, so a bad one is one error.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::quote;

/// What `suites = [..]` takes, for the errors.
const FORM: &str = "`suites` is a list of paths to suite files, relative to the crate's directory: \
                    `niceeval_suites::main!(suites = [\"evals/promptfooconfig.yaml\"])`, optionally \
                    followed by `, reporters = [..]`";

/// Expands `$crate; suites-and-reporters` (what `main!` forwards).
pub(crate) fn expand(input: TokenStream) -> TokenStream {
    match parse(input) {
        Ok(tokens) => tokens,
        // With an empty `main`, so the error is the only one.
        Err(e) => {
            let mut tokens = e.to_compile_error();
            tokens.extend(quote!(
                fn main() {}
            ));
            tokens
        }
    }
}

fn error(span: Span, message: impl std::fmt::Display) -> syn::Error {
    syn::Error::new(span, message)
}

fn parse(input: TokenStream) -> syn::Result<TokenStream> {
    let mut tokens = input.into_iter().peekable();
    // `$crate ;`
    let krate = match tokens.next() {
        Some(TokenTree::Ident(ident)) => ident,
        _ => {
            return Err(error(
                Span::call_site(),
                "expected `$crate;` from `niceeval_suites::main!`",
            ));
        }
    };
    match tokens.next() {
        Some(TokenTree::Punct(p)) if p.as_char() == ';' => {}
        _ => {
            return Err(error(
                krate.span(),
                "expected `$crate;` from `niceeval_suites::main!`",
            ));
        }
    }
    // `[ "a.yaml", "b.yaml" ]`
    let list = match tokens.next() {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket => g,
        Some(other) => return Err(error(other.span(), FORM)),
        None => return Err(error(Span::call_site(), FORM)),
    };
    let mut suites = Vec::new();
    let mut items = list.stream().into_iter().peekable();
    while let Some(item) = items.next() {
        let lit = match syn::parse2::<syn::LitStr>(item.clone().into()) {
            Ok(lit) => lit,
            Err(_) => return Err(error(item.span(), FORM)),
        };
        suites.push(lit);
        match items.next() {
            None => {}
            Some(TokenTree::Punct(p)) if p.as_char() == ',' => {}
            Some(other) => return Err(error(other.span(), FORM)),
        }
    }
    if suites.is_empty() {
        return Err(error(list.span(), format!("no suite file given: {FORM}")));
    }
    // `, reporters = [..]`, then an optional `,`.
    let mut reporters = TokenStream::new();
    if let Some(comma) = tokens.next() {
        if !matches!(&comma, TokenTree::Punct(p) if p.as_char() == ',') {
            return Err(error(comma.span(), FORM));
        }
        if let Some(name) = tokens.next() {
            if !matches!(&name, TokenTree::Ident(i) if i == "reporters") {
                return Err(error(
                    name.span(),
                    format!("after `suites = [..]` comes `reporters = [..]`; {FORM}"),
                ));
            }
            let eq = tokens.next();
            let group = tokens.next();
            match (eq, group) {
                (Some(TokenTree::Punct(p)), Some(TokenTree::Group(g)))
                    if p.as_char() == '=' && g.delimiter() == Delimiter::Bracket =>
                {
                    reporters = g.stream();
                }
                _ => {
                    return Err(error(
                        name.span(),
                        "`reporters` is a list of reporters: `reporters = [MyReporter::new()]`",
                    ));
                }
            }
            match tokens.next() {
                None => {}
                Some(TokenTree::Punct(p)) if p.as_char() == ',' && tokens.peek().is_none() => {}
                Some(other) => return Err(error(other.span(), FORM)),
            }
        }
    }
    // Each file is read now: a path that is not there is an error at it.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_string());
    for suite in &suites {
        let written = suite.value();
        let file = std::path::Path::new(&manifest_dir).join(&written);
        if let Err(e) = std::fs::read(&file) {
            return Err(error(
                suite.span(),
                format!(
                    "cannot read the suite file {written:?} (relative to the crate's directory, where Cargo.toml is): {e}"
                ),
            ));
        }
    }
    use syn::parse::Parser as _;
    let reporters = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated
        .parse2(reporters)?;
    let reporters = reporters.iter();
    Ok(quote! {
        // Each file is part of the crate: editing it rebuilds the target.
        #(const _: &[u8] = ::core::include_bytes!(::core::concat!(
            ::core::env!("CARGO_MANIFEST_DIR"), "/", #suites
        ));)*
        fn main() {
            let reporters: ::std::vec::Vec<::std::boxed::Box<dyn #krate::__private::Reporter>> =
                ::std::vec![#(::std::boxed::Box::new(#reporters)),*];
            ::std::process::exit(#krate::__private::main_with_suites(
                &[#(#suites),*],
                ::core::env!("CARGO_MANIFEST_DIR"),
                ::core::env!("CARGO_CRATE_NAME"),
                reporters,
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(input: TokenStream) -> String {
        match parse(input) {
            Ok(tokens) => panic!("expanded: {tokens}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn malformed_lists_name_the_form() {
        for input in [
            quote!(niceeval; "evals/promptfooconfig.yaml"),
            quote!(niceeval; [path]),
            quote!(niceeval; ["a.yaml" "b.yaml"]),
            quote!(niceeval; ["a.yaml"], extra),
        ] {
            let m = message(input);
            assert!(m.contains("`suites` is a list of paths"), "{m}");
        }
        assert!(message(quote!(niceeval; [])).starts_with("no suite file given"));
        assert!(
            message(quote!(niceeval; ["Cargo.toml"], reporters = 3))
                .starts_with("`reporters` is a list")
        );
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        // The unit tests run in the crate's directory: Cargo.toml is there.
        let m = message(quote!(niceeval; ["no/such/promptfooconfig.yaml"]));
        assert!(
            m.starts_with(
                "cannot read the suite file \"no/such/promptfooconfig.yaml\" (relative to the crate's directory"
            ),
            "{m}"
        );
        let tokens =
            parse(quote!(niceeval; ["Cargo.toml"], reporters = [A::<u8, u16>::new(1, 2), B],))
                .expect("expands")
                .to_string();
        assert!(tokens.contains("fn main"), "{tokens}");
        assert!(
            tokens.contains("Box :: new (A :: < u8 , u16 > :: new (1 , 2))"),
            "{tokens}"
        );
    }
}
