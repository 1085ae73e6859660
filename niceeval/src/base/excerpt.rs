//! How values appear inside assertion reasons: quoted on one line, long ones elided in the
//! middle so both ends stay visible, and the neighbourhood of a position in a long text (where a
//! pattern matched, where two texts start to differ).
//!
//! Everything here is linear in the size of the value and returns a bounded string, so a reason
//! stays short however large the checked value is. Lengths are counted in Unicode scalar values
//! (`char`s), and no function splits one.
//!
//! No function here splits a secret either: the secrets of the whole value (`redact::current`:
//! the environment's, the variables given to agents, `[report] redact`) are found before it is
//! cut, a cut that would fall inside one moves to its edge so the whole secret is on one side,
//! and every secret an excerpt shows is masked (`sk-a…[redacted]`). Masking the finished
//! reason later could not find a fragment a cut had left.

use std::ops::Range;

/// Longest excerpt, in characters, before the middle is elided.
pub const DEFAULT_WIDTH: usize = 160;

/// Characters shown on each side of a position by [`around`].
pub const CONTEXT: usize = 40;

/// Quotes `text` as a Rust-style string literal (escapes, one line), eliding the middle of long
/// text.
///
/// Control characters, combining marks and other invisible characters are escaped
/// (`"cafe\u{301}"`), which shows why two texts that look alike do not match.
pub fn quote(text: &str) -> String {
    quote_width(text, DEFAULT_WIDTH)
}

/// [`quote`] with a chosen width.
pub fn quote_width(text: &str, width: usize) -> String {
    format!("{:?}", elide(text, width))
}

/// Quotes the part `range` (byte offsets on character boundaries, clamped to the text) of
/// `text`, as [`quote_width`] quotes a whole text: where a secret of `text` straddles an end
/// of the range, the whole secret is taken in and masked, so no fragment of it shows.
pub fn quote_part(text: &str, range: Range<usize>, width: usize) -> String {
    let secrets = secrets(text);
    let end = range.end.min(text.len());
    let start = range.start.min(end);
    let (start, end) = (before_secret(start, &secrets), after_secret(end, &secrets));
    format!("{:?}", elide_with(text, start..end, width, &secrets))
}

/// The last `chars` characters of `text`, quoted and elided to `width` after a `…`; the
/// whole text quoted when it is not much longer. A secret the cut would split is taken in
/// whole, and masked.
pub fn quote_tail(text: &str, chars: usize, width: usize) -> String {
    let count = text.chars().count();
    if count <= chars + 20 {
        return quote_width(text, width);
    }
    let secrets = secrets(text);
    let start = before_secret(byte_at_char(text, count - chars), &secrets);
    format!(
        "…{:?}",
        elide_with(text, start..text.len(), width, &secrets)
    )
}

/// Shortens `text` to about `width` characters by replacing its middle with a marker that says
/// how much was left out. Counts Unicode scalar values, never splits one. A text whose middle
/// is no longer than the marker that would replace it is shown whole. Secrets are masked,
/// and never split by the cut (see the module docs).
pub fn elide(text: &str, width: usize) -> String {
    let secrets = secrets(text);
    if secrets.is_empty() {
        return elide_plain(text, width);
    }
    elide_with(text, 0..text.len(), width, &secrets)
}

/// Where the secrets of `text` are (see the module docs).
fn secrets(text: &str) -> Vec<Range<usize>> {
    crate::base::redact::current().find(text)
}

/// A cut at byte `at` moved back to the start of a secret it would split.
fn before_secret(at: usize, secrets: &[Range<usize>]) -> usize {
    secrets
        .iter()
        .find(|s| s.start < at && at < s.end)
        .map_or(at, |s| s.start)
}

/// A cut at byte `at` moved on to the end of a secret it would split.
fn after_secret(at: usize, secrets: &[Range<usize>]) -> usize {
    secrets
        .iter()
        .find(|s| s.start < at && at < s.end)
        .map_or(at, |s| s.end)
}

/// `text[range]` with every secret that overlaps it masked (the whole secret's mask, where
/// the range would have split one).
fn masked(text: &str, range: Range<usize>, secrets: &[Range<usize>]) -> String {
    let mut out = String::with_capacity(range.len());
    let mut at = range.start;
    for secret in secrets
        .iter()
        .filter(|s| s.start < range.end && s.end > range.start)
    {
        let from = secret.start.max(at);
        out.push_str(&text[at..from]);
        out.push_str(&crate::base::redact::mask(&text[secret.clone()]));
        at = secret.end.min(range.end);
    }
    if at < range.end {
        out.push_str(&text[at..range.end]);
    }
    out
}

/// [`elide`] of `text[range]` (a range that splits no secret), masking `secrets` and never
/// cutting inside one.
fn elide_with(text: &str, range: Range<usize>, width: usize, secrets: &[Range<usize>]) -> String {
    let part = &text[range.clone()];
    let count = part.chars().count();
    if !worth_eliding(count, width) {
        return masked(text, range, secrets);
    }
    let head_end = after_secret(range.start + byte_at_char(part, width.div_ceil(2)), secrets);
    let tail_start = before_secret(range.start + byte_from_end(part, width / 2), secrets);
    if head_end >= tail_start {
        return masked(text, range, secrets);
    }
    format!(
        "{}… {} chars elided …{}",
        masked(text, range.start..head_end, secrets),
        text[head_end..tail_start].chars().count(),
        masked(text, tail_start..range.end, secrets)
    )
}

/// The byte offset where the last `n` characters of `text` start.
fn byte_from_end(text: &str, n: usize) -> usize {
    if n == 0 {
        text.len()
    } else {
        text.char_indices().rev().nth(n - 1).map_or(0, |(i, _)| i)
    }
}

/// [`elide`] of a text that holds no secret.
fn elide_plain(text: &str, width: usize) -> String {
    if text.is_ascii() {
        // Fast path: bytes are characters.
        if !worth_eliding(text.len(), width) {
            return text.to_string();
        }
        let head = width.div_ceil(2);
        let tail = width / 2;
        let omitted = text.len() - head - tail;
        return format!(
            "{}… {omitted} chars elided …{}",
            &text[..head],
            &text[text.len() - tail..]
        );
    }
    let count = text.chars().count();
    if !worth_eliding(count, width) {
        return text.to_string();
    }
    let head = width.div_ceil(2);
    let tail = width / 2;
    let head_end = byte_at_char(text, head);
    let tail_start = byte_from_end(text, tail);
    format!(
        "{}… {} chars elided …{}",
        &text[..head_end],
        count - head - tail,
        &text[tail_start..]
    )
}

/// Whether a text of `count` characters shown in `width` loses more than the marker
/// (`… N chars elided …`) that would stand for the loss.
fn worth_eliding(count: usize, width: usize) -> bool {
    if count <= width {
        return false;
    }
    let omitted = count - width.div_ceil(2) - width / 2;
    // "… " + digits + " chars elided …"
    let marker = 2 + omitted.to_string().len() + 15;
    omitted > marker
}

/// Compact one-line JSON of `value`, elided like [`elide`].
pub fn json(value: &serde_json::Value) -> String {
    elide(&value.to_string(), DEFAULT_WIDTH)
}

/// Quotes the part of `text` around the byte range `range`: the range itself plus [`CONTEXT`]
/// characters on each side, with `…` where the text was cut. A range longer than
/// [`DEFAULT_WIDTH`] characters is elided in its middle. `range` must lie on character
/// boundaries (as the ranges of `str::find` and `Regex::find` do); it is clamped to the text.
/// A secret a cut would split is taken in whole, and masked.
pub fn around(text: &str, range: Range<usize>) -> String {
    let secrets = secrets(text);
    let end = range.end.min(text.len());
    let start = range.start.min(end);
    let before = &text[..start];
    let from = before
        .char_indices()
        .rev()
        .nth(CONTEXT - 1)
        .map_or(0, |(i, _)| i);
    let to = text[end..]
        .char_indices()
        .nth(CONTEXT)
        .map_or(text.len(), |(i, _)| end + i);
    let (from, to) = (before_secret(from, &secrets), after_secret(to, &secrets));
    let mut shown = String::new();
    if from > 0 {
        shown.push('…');
    }
    // The range's own middle is elided; the secrets it splits go to the side they start on.
    let middle = &text[start..end];
    let count = middle.chars().count();
    if worth_eliding(count, DEFAULT_WIDTH) {
        let head_end = after_secret(
            start + byte_at_char(middle, DEFAULT_WIDTH.div_ceil(2)),
            &secrets,
        );
        let tail_start = before_secret(start + byte_from_end(middle, DEFAULT_WIDTH / 2), &secrets);
        if head_end < tail_start {
            shown.push_str(&masked(text, from..head_end, &secrets));
            shown.push_str(&format!(
                "… {} chars elided …",
                text[head_end..tail_start].chars().count()
            ));
            shown.push_str(&masked(text, tail_start..to, &secrets));
        } else {
            shown.push_str(&masked(text, from..to, &secrets));
        }
    } else {
        shown.push_str(&masked(text, from..to, &secrets));
    }
    if to < text.len() {
        shown.push('…');
    }
    format!("{shown:?}")
}

/// Where two texts start to differ: the byte offset of the first differing character (the
/// same in both, as their prefixes are equal), or `None` when they are equal. When one text is
/// a prefix of the other, it is the shorter one's length.
pub fn first_difference(a: &str, b: &str) -> Option<usize> {
    if a == b {
        return None;
    }
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    // Back up to the start of the character the bytes differ in.
    let mut at = common;
    while !a.is_char_boundary(at) || !b.is_char_boundary(at) {
        at -= 1;
    }
    Some(at)
}

/// The number of characters before byte `byte` of `text` (a character boundary).
pub fn char_index(text: &str, byte: usize) -> usize {
    text[..byte.min(text.len())].chars().count()
}

/// The byte offset of character number `n` of `text` (its length when `n` is past the end).
fn byte_at_char(text: &str, n: usize) -> usize {
    text.char_indices().nth(n).map_or(text.len(), |(i, _)| i)
}

/// Default for the longest text stored per value in reports, results files and transcripts
/// (`[report] max_text` in `niceeval.toml`): 64 KiB.
pub const DEFAULT_MAX_TEXT: usize = 64 * 1024;

/// `text` kept to about `max` bytes for storage: when it is longer, its middle is replaced by
/// a marker stating how much was left out of how much, e.g. `…[elided 9.9 MiB of 10.0 MiB]…`,
/// so both ends stay readable. Text that fits is borrowed as it is. The kept head and tail
/// together are at most `max` bytes (the marker comes on top); a UTF-8 character is never
/// split.
///
/// This is what reports, results files and transcripts store of each message, tool input or
/// output, thinking text and assertion reason (see `[report] max_text`); assertions always see
/// the whole value while the eval runs.
pub fn cap(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut head = max / 2;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - (max - max / 2);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    std::borrow::Cow::Owned(format!(
        "{}{}{}",
        &text[..head],
        elision(tail - head, text.len()),
        &text[tail..]
    ))
}

/// The marker [`cap`] puts where it left text out.
fn elision(omitted: usize, total: usize) -> String {
    format!(
        "…[elided {} of {}]…",
        format_size(omitted as u64),
        format_size(total as u64)
    )
}

/// A number of bytes for people: `512 bytes`, `64.0 KiB`, `9.9 MiB`, `1.2 GiB`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Caps a JSON value (a tool input or output, an input request) for storage, in place, to
/// about `max` bytes of compact JSON; returns whether it changed. A value that fits is kept
/// as it is. Else, when the structure itself (keys, numbers, punctuation) is small, the
/// longest strings inside it are [`cap`]ped to a common length chosen so the whole fits,
/// which keeps the structure when a field or two are what is large. Otherwise the value
/// becomes a string: the head and tail of its compact JSON around a marker stating the full
/// size.
pub fn cap_json(value: &mut serde_json::Value, max: usize) -> bool {
    /// Below this common length the strings say nothing: the value becomes text instead.
    const SHORTEST_KEPT: usize = 64;
    let total = json_len(value);
    if total <= max {
        return false;
    }
    if let serde_json::Value::String(text) = value {
        return match cap(text, max) {
            std::borrow::Cow::Owned(kept) => {
                *text = kept;
                true
            }
            std::borrow::Cow::Borrowed(_) => false,
        };
    }
    let mut lengths = Vec::new();
    let mut strings_json = 0;
    visit_strings(value, &mut |text| {
        lengths.push(text.len());
        strings_json += json_len_str(text);
    });
    let structure = total.saturating_sub(strings_json);
    let level = (structure < max / 2)
        .then(|| fill_level(&mut lengths, max - structure))
        .filter(|level| *level >= SHORTEST_KEPT);
    if let Some(level) = level {
        cap_strings(value, level);
        // Escapes and markers may add a little; far more means the strings were not the bulk.
        if json_len(value) <= max + max / 4 {
            return true;
        }
    }
    let mut ends = HeadTail::new(max / 2, max - max / 2);
    // Writing to memory cannot fail, and a Value always serializes.
    let _ = serde_json::to_writer(&mut ends, &*value);
    *value = serde_json::Value::String(ends.finish(total));
    true
}

/// The largest length `level` such that the strings, each cut to at most `level` bytes, take
/// at most `budget` bytes together.
fn fill_level(lengths: &mut [usize], budget: usize) -> usize {
    lengths.sort_unstable();
    let mut kept_whole = 0;
    for (i, &len) in lengths.iter().enumerate() {
        let longer = lengths.len() - i;
        if kept_whole + longer * len > budget {
            return (budget - kept_whole) / longer;
        }
        kept_whole += len;
    }
    lengths.last().copied().unwrap_or(budget)
}

/// Calls `f` with every string value inside `value` (not object keys).
fn visit_strings(value: &serde_json::Value, f: &mut impl FnMut(&str)) {
    use serde_json::Value;
    match value {
        Value::String(text) => f(text),
        Value::Array(items) => items.iter().for_each(|v| visit_strings(v, f)),
        Value::Object(fields) => fields.values().for_each(|v| visit_strings(v, f)),
        _ => {}
    }
}

/// Caps every string inside `value` that is longer than `max` bytes.
fn cap_strings(value: &mut serde_json::Value, max: usize) {
    use serde_json::Value;
    match value {
        Value::String(text) => {
            if let std::borrow::Cow::Owned(kept) = cap(text, max) {
                *text = kept;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| cap_strings(v, max)),
        Value::Object(fields) => fields.values_mut().for_each(|v| cap_strings(v, max)),
        _ => {}
    }
}

/// The length of `text` as a JSON string (quotes and escapes included).
fn json_len_str(text: &str) -> usize {
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, text);
    count.0
}

/// Counts the bytes written through it.
struct Count(usize);

impl std::io::Write for Count {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The length of `value`'s compact JSON, without building it.
fn json_len(value: &serde_json::Value) -> usize {
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Keeps the first and last bytes of what is written through it, in bounded memory.
struct HeadTail {
    head: Vec<u8>,
    head_max: usize,
    tail: std::collections::VecDeque<u8>,
    tail_max: usize,
}

impl HeadTail {
    fn new(head_max: usize, tail_max: usize) -> Self {
        HeadTail {
            head: Vec::with_capacity(head_max),
            head_max,
            tail: std::collections::VecDeque::with_capacity(tail_max),
            tail_max,
        }
    }

    /// The head, a marker saying how much of `total` bytes was left out, and the tail, cut to
    /// whole UTF-8 characters.
    fn finish(self, total: usize) -> String {
        let head = match std::str::from_utf8(&self.head) {
            Ok(head) => head,
            // Only the last character can be cut; valid_up_to ends before it.
            Err(e) => std::str::from_utf8(&self.head[..e.valid_up_to()]).unwrap_or_default(),
        };
        let tail: Vec<u8> = self.tail.into_iter().collect();
        // Skip continuation bytes of a character whose start fell out of the window.
        let start = tail
            .iter()
            .position(|b| b & 0b1100_0000 != 0b1000_0000)
            .unwrap_or(tail.len());
        let tail = std::str::from_utf8(&tail[start..]).unwrap_or_default();
        let omitted = total.saturating_sub(head.len() + tail.len());
        format!("{head}{}{tail}", elision(omitted, total))
    }
}

impl std::io::Write for HeadTail {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let room = self.head_max - self.head.len();
        let (to_head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        let rest = &rest[rest.len().saturating_sub(self.tail_max)..];
        self.tail.extend(rest);
        let excess = self.tail.len().saturating_sub(self.tail_max);
        self.tail.drain(..excess);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `12345` → `12,345`.
pub(crate) fn format_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// USD with cents, and enough decimals below $1 to show four significant digits:
/// `$12.35`, `$0.50`, `$0.0123`, `$0.00004567`.
pub(crate) fn format_usd(usd: f64) -> String {
    if !usd.is_finite() {
        return format!("${usd}");
    }
    let magnitude = usd.abs();
    let decimals = if magnitude >= 1.0 || magnitude == 0.0 {
        2
    } else {
        (2.0f64.max(-magnitude.log10().floor() + 3.0) as usize).min(12)
    };
    let mut text = format!("{usd:.decimals$}");
    if decimals > 2 {
        let keep = text.find('.').map_or(text.len(), |dot| dot + 3);
        while text.len() > keep && text.ends_with('0') {
            text.pop();
        }
    }
    format!("${text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A secret the process knows (as a variable given to an agent), and every fragment of it
    /// longer than the four characters a mask shows.
    const SECRET: &str = "sk-spot-VERYSECRET-000111222";

    fn know_the_secret() {
        crate::base::redact::note_env("NICEEVAL_TEST_EXCERPT_SPOT_API_KEY", SECRET);
    }

    /// No excerpt may show a fragment of [`SECRET`] of 5 characters or more (a mask keeps the
    /// first 4): none of its 5-character windows, which every longer fragment holds.
    fn assert_no_fragment(shown: &str, what: &str) {
        for start in 0..=SECRET.len() - 5 {
            let fragment = &SECRET[start..start + 5];
            assert!(
                !shown.contains(fragment),
                "{what}: {fragment:?} of the secret shows in {shown}"
            );
        }
    }

    #[test]
    fn no_excerpt_shows_a_fragment_of_a_secret_wherever_its_cuts_fall() {
        know_the_secret();
        // The secret at every offset, so that each cut (the head and tail of an elision, the
        // context on both sides of a match, a matched part, a tail) falls before it, inside
        // it at every character, and after it.
        for before in 0..220 {
            for after in [0, 1, 39, 40, 41, 80, 150] {
                let text = format!(
                    "{}key {SECRET} then the word ERROR{}",
                    "a".repeat(before),
                    "b".repeat(after)
                );
                let what = format!("{before} before, {after} after");
                for width in [10, 20, 60, 80, DEFAULT_WIDTH] {
                    assert_no_fragment(&elide(&text, width), &what);
                    assert_no_fragment(&quote_width(&text, width), &what);
                    assert_no_fragment(&quote_tail(&text, width, 80), &what);
                }
                assert_no_fragment(&quote(&text), &what);
                let error = text.find("ERROR").unwrap();
                assert_no_fragment(&around(&text, error..error + 5), &what);
                let key = text.find("key").unwrap();
                assert_no_fragment(&around(&text, key..key + 3), &what);
                // A match inside the secret (`excludes("VERYSECRET")`, a regex).
                let inside = text.find("VERYSECRET").unwrap();
                assert_no_fragment(&around(&text, inside..inside + 10), &what);
                assert_no_fragment(&quote_part(&text, inside..inside + 10, 60), &what);
                // A long range, elided in its middle, with the secret at each of its cuts.
                assert_no_fragment(&around(&text, 0..text.len()), &what);
                assert_no_fragment(&around(&text, key..text.len()), &what);
                // Where two texts differ (`equals`, `similarity`).
                let other = text.replace("ERROR", "WARNING");
                let at = first_difference(&text, &other).unwrap();
                assert_no_fragment(&around(&text, at..at), &what);
                assert_no_fragment(&json(&serde_json::json!({ "reply": text })), &what);
                assert_no_fragment(&json(&serde_json::json!([text, 1])), &what);
            }
        }
        // What is shown of the secret is its mask.
        let text = format!("{}key {SECRET} then the word ERROR", "a".repeat(100));
        let error = text.find("ERROR").unwrap();
        let shown = around(&text, error..error + 5);
        assert_eq!(
            shown,
            format!(
                "\"…sk-s{} then the word ERROR\"",
                crate::base::redact::MARKER
            )
        );
        // A text without secrets is cut exactly as before.
        assert_eq!(
            elide(&"x".repeat(100), 20),
            format!("{}… 80 chars elided …{}", "x".repeat(10), "x".repeat(10))
        );
    }

    #[test]
    fn cap_never_splits_a_character_and_keeps_at_most_max_bytes_around_the_marker() {
        // One-, two-, three- and four-byte characters: every cut position falls somewhere.
        let text = "aé✓𝄞".repeat(50);
        for max in 0..text.len() {
            let kept = cap(&text, max);
            let (head, rest) = kept.split_once("…[elided ").expect("a marker");
            let (sizes, tail) = rest.split_once("]…").expect("the marker ends");
            assert!(head.len() + tail.len() <= max, "{max}: {kept}");
            assert!(
                text.starts_with(head) && text.ends_with(tail),
                "{max}: {kept}"
            );
            let omitted = text.len() - head.len() - tail.len();
            assert_eq!(sizes, format!("{omitted} bytes of {} bytes", text.len()));
        }
        assert_eq!(cap(&text, text.len()), text.as_str());
    }

    #[test]
    fn cap_json_shares_the_room_among_the_longest_strings() {
        let long = "x".repeat(10_000);
        let mut value = serde_json::json!({
            "short": "keep me",
            "a": long,
            "list": [long, 1, true],
        });
        assert!(cap_json(&mut value, 2_000));
        assert_eq!(value["short"], "keep me");
        assert_eq!(value["list"][1], 1);
        let a = value["a"].as_str().unwrap();
        let b = value["list"][0].as_str().unwrap();
        assert!(
            a.contains("…[elided ") && b.contains("…[elided "),
            "{value}"
        );
        // Two strings share the room: each keeps about half of it.
        let head = a.split("…[").next().unwrap().len();
        assert!((450..500).contains(&head), "{a}");
        assert!(
            value.to_string().len() <= 2_000 + 2 * 40,
            "{}",
            value.to_string().len()
        );
    }

    #[test]
    fn cap_json_turns_a_value_of_many_small_strings_into_text() {
        let mut value = serde_json::json!(vec!["abc"; 10_000]);
        assert!(cap_json(&mut value, 1_000));
        let text = value.as_str().expect("became text");
        assert!(text.starts_with(r#"["abc","abc""#), "{text}");
        assert!(text.ends_with(r#""abc","abc"]"#), "{text}");
        assert!(text.contains("…[elided 57.6 KiB of 58.6 KiB]…"), "{text}");
        assert!(text.len() <= 1_000 + 40);
    }

    #[test]
    fn cap_json_tail_starts_on_a_character() {
        // The head and tail windows of the JSON text fall inside multi-byte characters.
        for max in 100..140 {
            let mut value = serde_json::json!(vec!["é✓𝄞"; 1_000]);
            assert!(cap_json(&mut value, max));
            let text = value.as_str().expect("text");
            assert!(text.starts_with(r#"["é✓𝄞","#), "{max}: {text}");
            assert!(
                text.ends_with(r#"","é✓𝄞"]"#) || text.ends_with("]"),
                "{max}: {text}"
            );
        }
    }

    #[test]
    fn elide_keeps_both_ends_and_counts_chars() {
        let text = "é".repeat(30);
        let shown = elide(&text, 10);
        assert!(shown.starts_with("ééééé…"));
        assert!(shown.ends_with("…ééééé"));
        assert!(shown.contains("20 chars elided"));
    }

    #[test]
    fn elide_edge_widths() {
        assert_eq!(elide("", 0), "");
        // A marker longer than what it replaces is never shown: the text is whole.
        assert_eq!(elide("abc", 0), "abc");
        assert_eq!(elide("abc", 1), "abc");
        assert_eq!(elide("abc", 3), "abc");
        assert_eq!(elide("😀😀😀😀", 2), "😀😀😀😀");
        let nineteen = "x".repeat(19); // 18 hidden at width 1: the marker is 19 long
        assert_eq!(elide(&nineteen, 1), nineteen);
        let twenty_one = "x".repeat(21); // 20 hidden: the marker is 19 long
        assert_eq!(elide(&twenty_one, 1), "x… 20 chars elided …");
        assert_eq!(elide(&"😀".repeat(30), 2), "😀… 28 chars elided …😀");
    }

    #[test]
    fn quote_escapes_and_shows_invisible_characters() {
        assert_eq!(quote("a\nb"), "\"a\\nb\"");
        assert_eq!(quote("cafe\u{301}"), "\"cafe\\u{301}\"");
        assert_eq!(quote(""), "\"\"");
        // A literal backslash sequence stays as it was written.
        assert_eq!(quote("\\u{2026}"), "\"\\\\u{2026}\"");
    }

    #[test]
    fn huge_text_is_bounded() {
        let text = "x".repeat(5_000_000);
        assert!(quote(&text).len() < 250);
        let text = "日".repeat(2_000_000);
        assert!(quote(&text).chars().count() < 200);
        assert!(json(&serde_json::Value::String(text)).chars().count() < 200);
    }

    #[test]
    fn around_marks_cut_ends_and_elides_long_matches() {
        let text = format!("{}MATCH{}", "a".repeat(10), "b".repeat(10));
        assert_eq!(
            around(&text, 10..15),
            format!("{text:?}"),
            "short text: whole"
        );
        let long_match = "m".repeat(1_000);
        let text = format!("start {long_match} end");
        let shown = around(&text, 6..1_006);
        assert!(shown.starts_with("\"start mmm"), "{shown}");
        assert!(shown.ends_with("mmm end\""), "{shown}");
        assert!(shown.contains("840 chars elided"), "{shown}");
        // Multi-byte context, empty range, range past the end.
        let text = "日本語".repeat(100);
        let shown = around(&text, 150..150);
        assert_eq!(shown.chars().count(), 2 + 2 + 2 * CONTEXT, "{shown}");
        assert_eq!(around("abc", 10..20), "\"abc\"");
        assert_eq!(around("", 0..0), "\"\"");
    }

    #[test]
    fn around_a_match_in_a_huge_text_is_bounded() {
        let text = format!("{}needle{}", "h".repeat(3_000_000), "t".repeat(3_000_000));
        let at = text.find("needle").unwrap();
        let shown = around(&text, at..at + 6);
        assert!(shown.contains("needle"));
        assert!(shown.chars().count() < 100, "{shown}");
    }

    #[test]
    fn first_difference_lands_on_a_character_boundary() {
        // 'é' (C3 A9) and 'è' (C3 A8) share their first byte.
        assert_eq!(first_difference("café", "cafè"), Some(3));
        assert_eq!(first_difference("", "x"), Some(0));
        assert_eq!(first_difference("😀a", "😃a"), Some(0));
        assert_eq!(char_index("😀😃x", 8), 2);
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples that were this file's doc tests while its items were public.

    #[test]
    fn example_1() {
        use crate::base::excerpt::quote;

        assert_eq!(quote("hi \"you\""), r#""hi \"you\"""#);
        assert_eq!(quote("line\nbreak"), r#""line\nbreak""#);
        let long = "a".repeat(500);
        let shown = quote(&long);
        assert!(shown.len() < 200);
        assert!(shown.contains("… 340 chars elided …"));
    }

    #[test]
    fn example_2() {
        let text = "ab".to_string() + &"-".repeat(30) + "ij";
        assert_eq!(
            crate::base::excerpt::quote_width(&text, 4),
            r#""ab… 30 chars elided …ij""#
        );
    }

    #[test]
    fn example_3() {
        use crate::base::excerpt::elide;

        assert_eq!(elide("short", 10), "short");
        let digits = "0123456789".repeat(4);
        assert_eq!(elide(&digits, 10), "01234… 30 chars elided …56789");
        let japanese = "日本語のテキストです".repeat(3);
        assert_eq!(elide(&japanese, 4), "日本… 26 chars elided …です");
    }

    #[test]
    fn example_4() {
        use crate::base::excerpt::json;

        assert_eq!(json(&serde_json::json!({"a": [1, 2]})), r#"{"a":[1,2]}"#);
        assert!(json(&serde_json::json!("x".repeat(1000))).contains("chars elided"));
    }

    #[test]
    fn example_5() {
        use crate::base::excerpt::around;

        let text = format!(
            "{}Your refund is on its way.{}",
            "x".repeat(100),
            "y".repeat(100)
        );
        let at = text.find("refund").unwrap();
        assert_eq!(
            around(&text, at..at + "refund".len()),
            format!(
                r#""…{}Your refund is on its way.{}…""#,
                "x".repeat(35),
                "y".repeat(25)
            )
        );
        assert_eq!(around("short text", 0..5), r#""short text""#);
    }

    #[test]
    fn example_6() {
        use crate::base::excerpt::first_difference;

        assert_eq!(first_difference("same", "same"), None);
        assert_eq!(first_difference("kitten", "sitting"), Some(0));
        assert_eq!(first_difference("héllo", "hélp"), Some(4));
        assert_eq!(first_difference("abc", "abcdef"), Some(3));
    }

    #[test]
    fn example_7() {
        assert_eq!(crate::base::excerpt::char_index("日本語", 6), 2);
    }

    #[test]
    fn example_8() {
        use crate::base::excerpt::cap;

        assert_eq!(cap("short", 64), "short");
        let long = format!("BEGIN{}END", "é".repeat(600_000));
        let kept = cap(&long, 1024);
        assert!(kept.starts_with("BEGIN") && kept.ends_with("END"));
        assert!(kept.contains("…[elided 1.1 MiB of 1.1 MiB]…"), "{kept}");
        assert!(kept.len() < 1100);
    }

    #[test]
    fn example_9() {
        use crate::base::excerpt::format_size;

        assert_eq!(format_size(512), "512 bytes");
        assert_eq!(format_size(65_536), "64.0 KiB");
        assert_eq!(format_size(10 * 1024 * 1024), "10.0 MiB");
    }

    #[test]
    fn example_10() {
        use crate::base::excerpt::cap_json;
        use serde_json::json;

        let mut small = json!({"id": 7});
        assert!(!cap_json(&mut small, 1024));

        let mut one_big_field = json!({"id": 7, "body": "x".repeat(100_000)});
        assert!(cap_json(&mut one_big_field, 1024));
        assert_eq!(one_big_field["id"], 7);
        assert!(one_big_field["body"].as_str().unwrap().contains("[elided"));
        assert!(one_big_field.to_string().len() < 1024 + 64);

        let mut many_numbers = json!((0..100_000).collect::<Vec<u32>>());
        assert!(cap_json(&mut many_numbers, 1024));
        let kept = many_numbers.as_str().unwrap();
        assert!(
            kept.starts_with("[0,1,2,") && kept.ends_with(",99999]"),
            "{kept}"
        );
    }
}
