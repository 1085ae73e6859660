//! promptfoo's `contains-html` and `is-html` as assertions as data know them. `contains-html`
//! scores signs of HTML anywhere in the text (tags, entities, a doctype, comments, attributes,
//! common element names) and needs two points; `is-html` parses the whole trimmed text as an
//! HTML document (html5ever, the same HTML5 tree construction as promptfoo's parse5) and wants
//! a recognised element and no loose text outside an element unless the text wrote its own
//! `<body>`. Written from promptfoo 0.123.1's rules and tests, not its code.

mod tree;

use std::sync::LazyLock;

use regex::Regex;

use crate::base::assertion::{Assertion, Grade, Subject};
use crate::checks::expect::js_text::{
    SPACE as JS_SPACE, either_case as ascii_either_case, is_space as is_js_space,
};

/// The longest text (in UTF-16 units, JavaScript's `length`) either check reads: longer text
/// does not contain HTML and is not HTML.
const MAX_INPUT: usize = 10 * 1024 * 1024;

/// The text's length as JavaScript counts it, or more than [`MAX_INPUT`] once it is over.
fn over_limit(text: &str) -> bool {
    text.len() > MAX_INPUT && text.encode_utf16().count() > MAX_INPUT
}

/// One sign of HTML and the points it is worth.
struct Sign {
    pattern: Regex,
    points: u32,
}

/// The signs `contains-html` scores, besides the opening/closing tag pair.
static SIGNS: LazyLock<[Sign; 6]> = LazyLock::new(|| {
    let sign = |pattern: String, points| Sign {
        pattern: Regex::new(&pattern).expect("fixed pattern"),
        points,
    };
    let elements = [
        "html", "head", "body", "div", "span", "p", "a", "img", "h[1-6]", "ul", "ol", "li",
        "table", "tr", "td", "th", "form", "input", "button", "script", "style", "link", "meta",
        "br", "hr",
    ]
    .iter()
    .map(|name| {
        if *name == "h[1-6]" {
            "[hH][1-6]".to_string()
        } else {
            ascii_either_case(name)
        }
    })
    .collect::<Vec<_>>()
    .join("|");
    [
        sign(format!(r"<[a-zA-Z][a-zA-Z0-9-]*(?:{JS_SPACE}[^>]*)?/>"), 1),
        sign(r"&(?:[a-zA-Z]+|#[0-9]+|#x[0-9a-fA-F]+);".to_string(), 1),
        sign(
            format!(
                "<!{}{JS_SPACE}+{}",
                ascii_either_case("doctype"),
                ascii_either_case("html")
            ),
            2,
        ),
        sign(r"<!--[^-]*(?:-[^-]+)*-->".to_string(), 1),
        sign(
            format!(r#"{JS_SPACE}[a-zA-Z-]+={JS_SPACE}*["'][^"']*["']"#),
            1,
        ),
        sign(format!(r"<(?:{elements})(?:[^a-zA-Z0-9_]|$)"), 2),
    ]
});

static OPENING_TAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"<[a-zA-Z][a-zA-Z0-9-]*(?:{JS_SPACE}[^>]*)?>")).expect("fixed pattern")
});
static CLOSING_TAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"</[a-zA-Z][a-zA-Z0-9-]*{JS_SPACE}*>")).expect("fixed pattern")
});

/// Whether `text` contains HTML by promptfoo's count: an opening and a closing tag are worth 2
/// (either alone 1), a doctype or a common element's opening tag 2, a self-closing tag, an
/// entity, a comment or an attribute 1 each; 2 points make HTML.
pub(crate) fn contains_html(text: &str) -> bool {
    if over_limit(text) {
        return false;
    }
    let opening = OPENING_TAG.is_match(text);
    let closing = CLOSING_TAG.is_match(text);
    let mut points = match (opening, closing) {
        (true, true) => 2,
        (false, false) => 0,
        _ => 1,
    };
    for sign in SIGNS.iter() {
        if points >= 2 {
            break;
        }
        if sign.pattern.is_match(text) {
            points += sign.points;
        }
    }
    points >= 2
}

/// Why `text` is not an HTML document, or `Ok` when it is (promptfoo's `is-html` rules).
pub(crate) fn html_document(text: &str) -> Result<(), &'static str> {
    let trimmed = text.trim_matches(is_js_space);
    if trimmed.is_empty() {
        return Err("the output is empty");
    }
    if over_limit(trimmed) {
        return Err("the output is longer than 10 MiB");
    }
    if trimmed
        .get(..5)
        .is_some_and(|start| start.eq_ignore_ascii_case("<?xml"))
    {
        return Err("the output looks like XML, not HTML");
    }
    let lower = trimmed.to_lowercase();
    let document = tree::parse(trimmed);
    let written = |name: &str| {
        lower.match_indices(&format!("<{name}")).any(|(at, m)| {
            lower[at + m.len()..]
                .chars()
                .next()
                .is_some_and(|c| c == '>' || c == '/' || is_js_space(c))
        })
    };
    let body = tree::first_element(&document, |e| e.name() == "body");
    let body_written = body
        .as_ref()
        .is_some_and(|b| b.written_by_its_tag() && written("body"));
    if !body_written && body.as_ref().is_some_and(|b| b.has_loose_text(is_js_space)) {
        return Err("text outside any element: the output must be wrapped in HTML tags");
    }
    let recognised = tree::first_element(&document, |e| {
        let name = e.name().to_lowercase();
        match name.as_str() {
            "html" | "head" | "body" => e.written_by_its_tag() && written(&name),
            _ => KNOWN_ELEMENTS.contains(&name.as_str()) || name.contains('-'),
        }
    });
    if recognised.is_none() {
        return Err("the output has no recognised HTML element");
    }
    Ok(())
}

/// The element names `is-html` recognises (promptfoo's list); any name with a `-` (a custom
/// element) counts too.
const KNOWN_ELEMENTS: &[&str] = &[
    "html",
    "head",
    "title",
    "base",
    "link",
    "meta",
    "style",
    "body",
    "article",
    "section",
    "nav",
    "aside",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "footer",
    "address",
    "p",
    "hr",
    "pre",
    "blockquote",
    "ol",
    "ul",
    "li",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "main",
    "div",
    "a",
    "em",
    "strong",
    "small",
    "s",
    "cite",
    "q",
    "dfn",
    "abbr",
    "ruby",
    "rt",
    "rp",
    "data",
    "time",
    "code",
    "var",
    "samp",
    "kbd",
    "sub",
    "sup",
    "i",
    "b",
    "u",
    "mark",
    "bdi",
    "bdo",
    "span",
    "br",
    "wbr",
    "img",
    "iframe",
    "embed",
    "object",
    "param",
    "picture",
    "source",
    "video",
    "audio",
    "track",
    "map",
    "area",
    "svg",
    "math",
    "script",
    "noscript",
    "canvas",
    "ins",
    "del",
    "table",
    "caption",
    "colgroup",
    "col",
    "tbody",
    "thead",
    "tfoot",
    "tr",
    "td",
    "th",
    "form",
    "label",
    "input",
    "button",
    "select",
    "datalist",
    "optgroup",
    "option",
    "textarea",
    "output",
    "progress",
    "meter",
    "fieldset",
    "legend",
    "details",
    "summary",
    "dialog",
    "menu",
    "slot",
    "template",
];

/// The `contains-html` item.
#[derive(Debug, Clone)]
pub(crate) struct ContainsHtml;

impl Assertion for ContainsHtml {
    fn describe(&self) -> String {
        "contains-html".to_string()
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let Some(text) = value.text() else {
            return Grade::fail("there is no value (None) to read");
        };
        if contains_html(&text) {
            Grade::pass(format!("{} contains HTML", value.preview()))
        } else {
            Grade::fail(format!("expected HTML in {}", value.preview()))
        }
    }
}

/// The `is-html` item.
#[derive(Debug, Clone)]
pub(crate) struct IsHtml;

impl Assertion for IsHtml {
    fn describe(&self) -> String {
        "is-html".to_string()
    }

    fn evaluate(&self, value: &Subject<'_>) -> Grade {
        let Some(text) = value.text() else {
            return Grade::fail("there is no value (None) to read");
        };
        match html_document(&text) {
            Ok(()) => Grade::pass(format!("{} is HTML", value.preview())),
            Err(why) => Grade::fail(format!("{why}: {}", value.preview())),
        }
    }
}

#[cfg(test)]
mod tests;
