//! The HTML viewer's page read without a browser: the data it embeds (base64 of gzip JSON in
//! `<script type="application/x-niceeval-gz">` elements), for tests that check what a page
//! holds.

use std::io::Read;

use base64::Engine as _;

/// The JSON inside the element with `id` (`rows-data`, `suite-data`, `c0`, …); `None` when the
/// page has no such element.
pub fn data(page: &str, id: &str) -> Option<serde_json::Value> {
    let start = page.find(&format!(" id=\"{id}\""))?;
    let body = &page[start..];
    let body = &body[body.find('>')? + 1..];
    let body = &body[..body.find("</script>")?];
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(body)
        .expect("base64");
    let mut text = String::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_string(&mut text)
        .expect("gzip");
    Some(serde_json::from_str(&text).expect("JSON"))
}

/// The ids of the evals in the page's list, in the order they finished.
pub fn ids(page: &str) -> Vec<String> {
    data(page, "rows-data")
        .expect("the page's rows")
        .as_array()
        .expect("an array")
        .iter()
        .map(|row| row[0].as_str().expect("an id").to_string())
        .collect()
}
