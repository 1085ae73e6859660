use super::*;
use crate::base::assertion::{AssertionResult, Checkable};

/// `(output, contains-html, is-html)`: the verdicts promptfoo 0.123.1 gives (its handlers run
/// on each output). The first 32 outputs are promptfoo's own from test/assertions/html.test.ts
/// ("should detect various HTML tags", "should not detect false positives", "should handle
/// edge cases with minimal HTML indicators"); the rest probe `is-html`'s tree rules (implied
/// `<body>`, foster-parented text, ignored table tags, custom elements, white space).
const VERDICTS: &[(&str, bool, bool)] = &[
    ("<div>Hello World</div>", true, true),
    ("Just plain text without any HTML", false, false),
    ("<p>paragraph</p>", true, true),
    ("<a href=\"link\">text</a>", true, true),
    ("<img src=\"image.jpg\" />", true, true),
    ("<h1>heading</h1>", true, true),
    (
        "<div class=\"container\"><span>nested</span></div>",
        true,
        true,
    ),
    (
        "<!DOCTYPE html><html><head><title>Test</title></head><body>Content</body></html>",
        true,
        true,
    ),
    (
        "Some text with <strong>emphasis</strong> in it",
        true,
        false,
    ),
    ("<input type=\"text\" value=\"test\" />", true, true),
    ("<br />", true, true),
    ("<table><tr><td>cell</td></tr></table>", true, true),
    ("<div>Text with &amp; entity</div>", true, true),
    ("<p>Multiple &nbsp; HTML &lt; entities &gt;</p>", true, true),
    (
        "<custom-element attr=\"value\">Web component</custom-element>",
        true,
        true,
    ),
    (
        "<div data-id=\"123\" class=\"test\">Modern HTML</div>",
        true,
        true,
    ),
    ("Just plain text", false, false),
    ("2 < 3 and 4 > 1", false, false),
    ("email@example.com", false, false),
    ("Math: a < b > c", false, false),
    ("< div >", false, false),
    ("Generic <example> text", false, false),
    ("if (a<b) { return c>d; }", false, false),
    ("The price is <$50", false, false),
    ("Email me at <john@example.com>", false, false),
    ("<div>&nbsp;</div>", true, true),
    ("<!-- comment --><span>text</span>", true, true),
    ("<br/><hr/>", true, true),
    ("Text with <b>bold</b> and <i>italic</i>", true, false),
    ("<custom>", false, false),
    ("&amp;", false, false),
    ("<!-- comment -->", false, false),
    ("", false, false),
    ("   ", false, false),
    ("<?xml version=\"1.0\"?><root/>", true, false),
    ("<html></html>", true, true),
    ("<html>hello</html>", true, false),
    ("<body>hello</body>", true, true),
    ("<head></head>", true, true),
    ("<foo>bar</foo>", true, false),
    ("<foo></foo>", true, false),
    ("Hello <b>world</b>", true, false),
    ("<p>Hello</p> world", true, false),
    ("<td>hi</td>", true, false),
    ("<table>hello</table>", true, false),
    ("<table><tr><td>x</td></tr></table>", true, true),
    ("<title>x</title>", true, true),
    ("<template><p>x</p></template>", true, true),
    ("<svg><circle/></svg>", true, true),
    ("<!-- <body> --><p>x</p>", true, true),
    ("<x-y></x-y>", true, true),
    ("<IMAGE src=a>", false, true),
    ("<DIV>x</DIV>", true, true),
    ("<body>text</body>", true, true),
    ("text <body>more</body>", true, false),
    ("<html><body>x</body></html>", true, true),
    ("<script>alert(1)</script>", true, true),
    ("<p>a</p>\n\n<p>b</p>", true, true),
    ("  <p>x</p>  ", true, true),
    ("<!DOCTYPE html>", true, false),
    ("<html>", true, true),
    ("<head><title>t</title></head>text", true, false),
    ("<body>", true, true),
    ("<Body>x</Body>", true, true),
    ("<div\u{a0}class=\"x\">y</div>", true, false),
    ("<DOCTYPE html>", false, false),
    ("<div>\u{a0}</div>\u{a0}", true, true),
    ("<frameset></frameset>", true, false),
    ("<noscript><p>x</p></noscript>", true, true),
    ("<select><option>a</option></select>", true, true),
    ("<math><mi>x</mi></math>", true, true),
    ("<p>ok</p><foo>bar</foo>", true, true),
    ("<li>a</li>b", true, false),
    ("<b>x</b>", true, true),
    ("</p>abc", false, false),
    ("<html><head></head><body></body></html>", true, true),
    ("<h7>x</h7>", true, false),
    ("<div\u{feff}class='x'>", true, false),
    ("<br>\u{212a}", true, false),
    ("&#x27;<br>", true, false),
];

#[test]
fn promptfoos_verdicts() {
    let mut wrong = Vec::new();
    for (text, contains, is) in VERDICTS {
        if contains_html(text) != *contains {
            wrong.push(format!("contains-html {text:?}: expected {contains}"));
        }
        if html_document(text).is_ok() != *is {
            wrong.push(format!(
                "is-html {text:?}: expected {is} ({:?})",
                html_document(text)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// promptfoo's "should handle inverse assertion correctly" and "... when HTML is present", and
/// the reasons `is-html` gives.
#[test]
fn verdicts_and_reasons() {
    let r = AssertionResult::evaluate(&ContainsHtml, &"<div>Hello World</div>".subject());
    assert!(r.passed && r.score == 1.0);
    let r = AssertionResult::evaluate(&ContainsHtml, &"Just plain text".subject());
    assert!(!r.passed && r.score == 0.0);
    assert_eq!(html_document("  "), Err("the output is empty"));
    assert_eq!(
        html_document("<?XML version=\"1.0\"?><a/>"),
        Err("the output looks like XML, not HTML")
    );
    assert!(
        html_document("Hello <b>world</b>")
            .unwrap_err()
            .contains("wrapped")
    );
    assert!(
        html_document("<foo>bar</foo>")
            .unwrap_err()
            .contains("recognised")
    );
    let r = AssertionResult::evaluate(&IsHtml, &Subject::Missing);
    assert!(!r.passed);
}

#[test]
fn a_long_text_is_not_html() {
    let long = format!("<div>{}</div>", "x".repeat(MAX_INPUT));
    assert!(!contains_html(&long));
    assert!(html_document(&long).is_err());
}
