use super::*;
use crate::base::assertion::{AssertionResult, Checkable};

/// `(contains-xml?, output, required elements, verdict)`: promptfoo 0.123.1's verdicts (its
/// handler run on each). The inputs are promptfoo's test/assertions/xml.test.ts (`validateXml`:
/// "should validate well-formed XML edge cases", "... non-well-formed XML the lenient parser
/// accepts", "should reject DTD internal subsets ...", "... external DOCTYPE ...", "should
/// reject malformed external DOCTYPE declarations", the required-element tests; `containsXml`:
/// all of its tests), then probes of declarations, namespaces, entities, names JavaScript
/// objects already answer to (`toString`), `#text` and attribute keys, and loose fragments.
const VERDICTS: &[(bool, &str, &[&str], bool)] = &[
    (false, "<root><child>Content</child></root>", &[], true),
    (false, "<root><child>Content</child></root", &[], false),
    (false, "<root/>", &[], true),
    (false, "  <root/>\n", &[], true),
    (false, "\u{feff}<root/>", &[], true),
    (false, "\n<!-- before --><root/>", &[], true),
    (false, "<!-- before --><root/><!-- after -->", &[], true),
    (false, "<\u{10000}>astral name</\u{10000}>", &[], true),
    (false, "<!DOCTYPE root><root/>", &[], true),
    (false, "<!DOCTYPE \u{10000}><\u{10000}/>", &[], true),
    (false, "<a></b>", &[], false),
    (false, "<a><b></a></b>", &[], false),
    (false, "<a>text</a><b>more</b>", &[], false),
    (false, "<a attr=unquoted>x</a>", &[], false),
    (false, "<a/><b/>", &[], false),
    (false, "<a/>trailing", &[], false),
    (false, "<root><!-- bad -- comment --></root>", &[], false),
    (false, "<root attr=\"1\" attr=\"2\"/>", &[], false),
    (false, "<root>&undefined;</root>", &[], false),
    (false, "<!DOCTYPE root><root>&undefined;</root>", &[], false),
    (false, "<root>\u{1}</root>", &[], false),
    (false, "", &[], false),
    (false, "\"<a/>\"", &[], false),
    (false, "```xml\n<a/>\n```", &[], false),
    (
        false,
        "<!DOCTYPE root [<!ENTITY writer \"Donald\">]><root>&writer;</root>",
        &[],
        false,
    ),
    (
        false,
        "<!DOCTYPE root [<!ELEMENT root (child>]><root/>",
        &[],
        false,
    ),
    (
        false,
        "<!DOCTYPE root SYSTEM \"weird[name].dtd\"><root/>",
        &[],
        true,
    ),
    (
        false,
        "<!DOCTYPE root PUBLIC \"-//x//EN\" \"weird[bracket].dtd\"><root/>",
        &[],
        true,
    ),
    (
        false,
        "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Strict//EN\" \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd\"><html xmlns=\"http://www.w3.org/1999/xhtml\"><body>&nbsp;</body></html>",
        &[],
        true,
    ),
    (
        false,
        "<?xml version=\"1.0\" standalone=\"no\"?><!DOCTYPE root SYSTEM \"entities.dtd\"><root>&external;</root>",
        &[],
        true,
    ),
    (
        false,
        "<?xml version=\"1.0\" standalone=\"yes\"?><!DOCTYPE root SYSTEM \"entities.dtd\"><root>&external;</root>",
        &[],
        false,
    ),
    (false, "<!DOCTYPE><root/>", &[], false),
    (false, "<!DOCTYPEroot><root/>", &[], false),
    (false, "<!DOCTYPE 123><root/>", &[], false),
    (false, "<!DOCTYPE root junk><root/>", &[], false),
    (false, "<!DOCTYPE root SYSTEM><root/>", &[], false),
    (
        false,
        "<!DOCTYPE root SYSTEM \"sys.dtd\" junk><root/>",
        &[],
        false,
    ),
    (
        false,
        "<!DOCTYPE root SYSTEM \"sys.dtd#fragment\"><root/>",
        &[],
        false,
    ),
    (
        false,
        "<!DOCTYPE root PUBLIC \"-//x//EN\"><root/>",
        &[],
        false,
    ),
    (
        false,
        "<!DOCTYPE root PUBLIC \"-//x//EN\" \"sys.dtd#fragment\"><root/>",
        &[],
        false,
    ),
    (
        false,
        "<!DOCTYPE root PUBLIC \"-//x//[invalid]//EN\" \"sys.dtd\"><root/>",
        &[],
        false,
    ),
    (
        false,
        "<!DOCTYPE root PUBLIC \"-//x//\tinvalid//EN\" \"sys.dtd\"><root/>",
        &[],
        false,
    ),
    (
        false,
        "<root><child id=\"1\">Content</child></root>",
        &[],
        true,
    ),
    (
        false,
        "<root xmlns:ns=\"http://example.com\"><ns:child>Content</ns:child></root>",
        &[],
        true,
    ),
    (false, "  <?xml version=\"1.0\"?><a/>", &[], false),
    (false, "<?xml version=\"1.0\"?>\n<a/>", &[], true),
    (false, "<?xml version=\"1.1\"?><a/>", &[], true),
    (false, "<?xml version=\"2.0\"?><a/>", &[], false),
    (false, "<a xmlns:x=\"\"/>", &[], false),
    (false, "<x:a/>", &[], false),
    (false, "<a x:b=\"1\"/>", &[], false),
    (false, "<a>&lt;&#65;&#x42;</a>", &[], true),
    (false, "<a>&#0;</a>", &[], false),
    (false, "<a b=\"<\"/>", &[], false),
    (false, "<a>]]></a>", &[], false),
    (false, "<a><?pi?></a>", &[], true),
    (false, "<?xml?><a/>", &[], false),
    (false, "<a/>\n<!-- c -->\n<?pi x?>\n", &[], true),
    (false, "<a>\u{a0}</a>", &[], true),
    (false, "<a xml:lang=\"en\"/>", &[], true),
    (false, "<a xmlns=\"urn:x\"><b/></a>", &[], true),
    (false, "<A></a>", &[], false),
    (false, "<a\n/>", &[], true),
    (false, "<a></a >", &[], true),
    (false, "< a/>", &[], false),
    (false, "<a/ >", &[], false),
    (false, "<1a/>", &[], false),
    (false, "<a:b:c/>", &[], false),
    (false, "<a b:c=\"1\" xmlns:b=\"u\"/>", &[], true),
    (false, "<constructor/>", &[], false),
    (false, "<a><toString/></a>", &[], true),
    (false, "<!DOCTYPE a><!DOCTYPE a><a/>", &[], false),
    (false, "<a/><!DOCTYPE a>", &[], false),
    (false, "<!DOCTYPE a PUBLIC 'x' 'y'><a/>", &[], true),
    (false, "<!DOCTYPE  a  SYSTEM  \"s\"  ><a/>", &[], true),
    (false, "<!DOCTYPE a SYSTEM 's'><a>&ext;</a>", &[], true),
    (
        false,
        "<!DOCTYPE a SYSTEM \"s\"><a b=\"&ext;\"/>",
        &[],
        true,
    ),
    (
        false,
        "<!DOCTYPE a SYSTEM \"s\"><a>&amp;&ext;</a>",
        &[],
        true,
    ),
    (false, "<!DOCTYPE a SYSTEM \"s\"><a>&#xZZ;</a>", &[], false),
    (
        false,
        "<analysis><classification>T-shirt</classification><color>Red</color></analysis>",
        &["analysis.classification", "analysis.color"],
        true,
    ),
    (
        false,
        "<analysis><classification>T-shirt</classification></analysis>",
        &["analysis.classification", "analysis.color"],
        false,
    ),
    (
        false,
        "<root><parent><child><grandchild>Content</grandchild></child></parent></root>",
        &["root.parent.child.grandchild"],
        true,
    ),
    (
        false,
        "<root><parent><child></child></parent></root>",
        &["root.parent.child.grandchild"],
        false,
    ),
    (
        false,
        "<root><emptyChild></emptyChild><nonEmptyChild>Content</nonEmptyChild></root>",
        &["root.emptyChild", "root.nonEmptyChild"],
        true,
    ),
    (
        false,
        "<root><child>Content1</child><child>Content2</child></root>",
        &["root.child"],
        true,
    ),
    (
        false,
        "<root><item><name>First</name></item><item><name>Second</name></item></root>",
        &["root.item.0.name", "root.item.1.name"],
        true,
    ),
    (
        false,
        "<root><item><name>First</name></item><item><name>Second</name></item></root>",
        &["root.item.name"],
        false,
    ),
    (
        false,
        "<root><item><name>First</name></item><item><name>Second</name></item></root>",
        &["root.item.2"],
        false,
    ),
    (
        false,
        "<root><item><name>First</name></item><item><name>Second</name></item></root>",
        &["root.item.01"],
        false,
    ),
    (
        false,
        "<root><child><![CDATA[<p>This is CDATA content</p>]]></child></root>",
        &["root.child"],
        true,
    ),
    (
        false,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><?xml-stylesheet type=\"text/xsl\" href=\"style.xsl\"?><root><child>Content</child></root>",
        &["root.child"],
        true,
    ),
    (
        false,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><root/>",
        &["?xml"],
        true,
    ),
    (
        false,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><root/>",
        &["?xml.@_version"],
        true,
    ),
    (
        false,
        "<root><!-- This is a comment --><child>Content</child></root>",
        &["root.child"],
        true,
    ),
    (
        false,
        "<root id=\"7\"><child>x</child></root>",
        &["root.@_id"],
        true,
    ),
    (false, "<root id=\"7\">text</root>", &["root.#text"], true),
    (false, "<root>text</root>", &["root.#text"], false),
    (false, "<root><a/>text</root>", &["root.#text"], true),
    (false, "<root> <a/> </root>", &["root.#text"], false),
    (
        false,
        "<root><![CDATA[]]><a/></root>",
        &["root.#text"],
        false,
    ),
    (
        false,
        "<root><![CDATA[ ]]><a/></root>",
        &["root.#text"],
        true,
    ),
    (false, "<root>x</root>", &["root.constructor"], false),
    (false, "<root><a/></root>", &["root.constructor"], true),
    (false, "<root><a/></root>", &["root.toString"], true),
    (false, "<root><a/></root>", &["root.__proto__"], true),
    (
        false,
        "<root><a/></root>",
        &["root.__proto__.constructor"],
        true,
    ),
    (false, "<root><a/></root>", &["root.hasOwnProperty"], true),
    (false, "<root><a/></root>", &["root.a.length"], false),
    (false, "<root><a/><a/></root>", &["root.a.length"], false),
    (
        false,
        "<root><toString/></root>",
        &["root.__toString"],
        true,
    ),
    (false, "<root><a/></root>", &[""], false),
    (false, "<root><a/></root>", &["root."], false),
    (false, "<root><a/></root>", &["root..a"], false),
    (false, "<root b/>", &["root.@_b"], false),
    (false, "<root><a/></root>", &[], true),
    (
        false,
        "<x:root xmlns:x=\"u\"><x:a/></x:root>",
        &["x:root.x:a"],
        true,
    ),
    (false, "<root><a>0</a></root>", &["root.a"], true),
    (
        true,
        "Some text <root><child>Content</child></root> more text",
        &[],
        true,
    ),
    (true, "This is just plain text", &[], false),
    (
        true,
        "Text <root><child>Content</child></root> more",
        &["root.child"],
        true,
    ),
    (
        true,
        "Text <root><item><name>First</name></item><item><name>Second</name></item></root> more",
        &["root.item.1.name"],
        true,
    ),
    (
        true,
        "Text <root><child>Content</child></root> more",
        &["root.missing"],
        false,
    ),
    (
        true,
        "<root1>Content</root1> text <root2><child>More</child></root2>",
        &["root2.child"],
        true,
    ),
    (
        true,
        "<xml1>content1</xml1> more text <xml2>content2</xml2>",
        &["xml1", "xml2"],
        true,
    ),
    (
        true,
        "Text <unclosed><root><child>Content</child></root>",
        &["root.child"],
        true,
    ),
    (
        true,
        "Text <\u{e9}l\u{e9}ment>Content</\u{e9}l\u{e9}ment> more",
        &["\u{e9}l\u{e9}ment"],
        true,
    ),
    (
        true,
        "<root><!-- </root> --><child>Content</child></root>",
        &["root.child"],
        true,
    ),
    (
        true,
        "<root><![CDATA[</root>]]><child>Content</child></root>",
        &["root.child"],
        true,
    ),
    (
        true,
        "Text <wrapper><root><child>Content</child></root></wrapper>",
        &["root.child"],
        false,
    ),
    (true, "Here: <a b=\"x>y\">t</a>", &["a.@_b"], true),
    (true, "<r><a b=\"></r>", &["r"], false),
    (true, "<r>Tom & Jerry</r>", &["r"], true),
    (true, "<r><constructor/></r>", &["r"], false),
    (true, "<r><b/><c/></r>", &["b"], false),
    (true, "<r><b/><c/></r>", &["b", "c"], false),
    (true, "x <b/> y <c/> z", &["b", "c"], true),
    (true, "x <b>1</b><c>2</c> z", &["c"], true),
    (true, "<p><b/></p><q><c/></q>", &["p", "q"], true),
    (true, "<r><!DOCTYPE x></r>", &["r"], true),
    (true, "<r>a < b</r>", &["r"], true),
    (true, "<r><x/ ></r>", &["r.x/"], true),
    (true, "<r><a/></r>", &[], true),
    (true, "<r></s>", &[], false),
    (true, "<r><s></r>", &[], false),
    (true, "</r><r/>", &[], true),
    (true, "<r/>", &["r"], true),
    (true, "<r attr=unquoted>x</r>", &["r.@_attr"], true),
    (true, "<?xml version=\"1.0\"?><r/>", &["?xml"], false),
    (true, "<r>&unknown;</r>", &["r"], true),
];

fn verdict(anywhere: bool, text: &str, required: &[&str]) -> Result<(), String> {
    let required: Vec<String> = required.iter().map(|s| s.to_string()).collect();
    if anywhere {
        xml_in_text(text, &required)
    } else {
        xml_document(text, &required)
    }
    .map_err(|e| e.to_string())
}

#[test]
fn promptfoos_verdicts() {
    let mut wrong = Vec::new();
    for (anywhere, text, required, pass) in VERDICTS {
        let got = verdict(*anywhere, text, required);
        if got.is_ok() != *pass {
            wrong.push(format!(
                "{anywhere} {text:?} {required:?}: expected {pass}, got {got:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// promptfoo's "should not parse every nested candidate ..." (1,000 nested `<a>`), its
/// 150-deep variant (past fast-xml-parser's 100 open elements, so not read at all), and the
/// malformed streams that must not take quadratic time.
#[test]
fn deep_and_malformed_streams() {
    let deep = format!("{}{}", "<a>".repeat(1000), "</a>".repeat(1000));
    assert!(verdict(true, &deep, &["a.missing"]).is_err());
    let deeper = format!("{}{}", "<a>".repeat(150), "</a>".repeat(150));
    assert!(verdict(true, &deeper, &["a.a"]).is_err());
    let fine = format!("{}{}", "<a>".repeat(50), "</a>".repeat(50));
    assert!(verdict(true, &fine, &["a.a"]).is_ok());
    assert_eq!(
        verdict(true, &"<a".repeat(5000), &[]),
        Err("No XML content found in the output".into())
    );
    assert_eq!(
        verdict(true, &"<!--".repeat(10000), &[]),
        Err("No XML content found in the output".into())
    );
}

#[test]
fn reasons() {
    assert_eq!(
        verdict(
            false,
            "<analysis><classification>T-shirt</classification></analysis>",
            &["analysis.classification", "analysis.color"]
        ),
        Err("XML is missing required elements: analysis.color".into())
    );
    assert_eq!(
        verdict(
            false,
            "<!DOCTYPE root [<!ENTITY w \"D\">]><root>&w;</root>",
            &[]
        ),
        Err("DTD internal subsets are not supported by is-xml validation".into())
    );
    assert_eq!(
        verdict(false, "<!DOCTYPE root junk><root/>", &[]),
        Err("XML parsing failed: Malformed DOCTYPE declaration".into())
    );
    let item = Xml {
        anywhere: false,
        required: vec!["root.child".into()],
    };
    let r = AssertionResult::evaluate(&item, &"<root><child/></root>".subject());
    assert!(r.passed && r.score == 1.0);
    assert_eq!(item.describe(), "is-xml(root.child)");
}

/// promptfoo's `handleIsXml` value rules.
#[test]
fn required_elements_from_the_value() {
    use serde_json::json;
    let read = |v: Value| required_elements(Some(&v));
    assert_eq!(
        read(json!("a.b, c")),
        Ok(Some(vec!["a.b".into(), "c".into()]))
    );
    assert_eq!(read(json!("")), Ok(Some(vec!["".into()])));
    assert_eq!(
        read(json!(["x", 1])),
        Ok(Some(vec!["x".into(), "1".into()]))
    );
    assert_eq!(read(json!([])), Ok(None));
    assert_eq!(read(json!({})), Ok(None));
    assert_eq!(read(json!(5)), Ok(None));
    assert_eq!(
        read(json!({"requiredElements": ["a"]})),
        Ok(Some(vec!["a".into()]))
    );
    assert!(read(json!({"other": 1})).is_err());
    assert!(read(json!({"requiredElements": "a"})).is_err());
    assert_eq!(required_elements(None), Ok(None));
}
