//! AgentV's `field-accuracy` grader (`graders/field-accuracy.ts` of AgentV 4.42.4): fields of
//! the answer's JSON compared with the expected output's, each by its `path` (`a.b`,
//! `items[0].x`) and its `match`: `exact` (deep equality), `numeric_tolerance` (`tolerance`,
//! absolute or `relative`) or `date` (the same day, written in any of the `formats`). A field
//! with no expected value scores 1; a missing one scores 0 when `required` (true unless
//! given), else does not count. The grader's score is the fields' `weight`ed mean
//! (`aggregation: weighted_average`, the default) or 1 only when every field holds
//! (`all_or_nothing`), passing at 0.8. An answer that is not JSON scores 0.

use serde_json::{Map, Value};

use super::graders::{COMMON, PASS_AT};
use crate::SuiteFileError;
use crate::promptfoo::{Doc, OwnedStep, key, with};
use niceeval::Grade;
use niceeval::scope::{RunView, ScopedCheck};

/// A `field-accuracy` grader's settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FieldAccuracy {
    pub fields: Vec<Field>,
    /// `aggregation: all_or_nothing` (else `weighted_average`).
    pub all_or_nothing: bool,
}

/// One field compared.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    pub path: String,
    pub how: Match,
    /// `required` (true unless given).
    pub required: bool,
    /// `weight` (1 unless given).
    pub weight: f64,
}

/// How a field is compared (`match`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Match {
    Exact,
    /// `tolerance` (0 unless given), `relative` (false unless given).
    Numeric {
        tolerance: f64,
        relative: bool,
    },
    /// `formats` (AgentV's defaults unless given).
    Date {
        formats: Vec<String>,
    },
}

/// AgentV's `DEFAULT_DATE_FORMATS`.
const DEFAULT_DATE_FORMATS: &[&str] = &[
    "YYYY-MM-DDTHH:mm:ssZ",
    "YYYY-MM-DDTHH:mm:ss",
    "YYYY-MM-DD",
    "DD-MMM-YYYY",
    "MM/DD/YYYY",
    "DD/MM/YYYY",
    "MM-DD-YYYY",
    "DD-MM-YYYY",
];

const FIELD_KEYS: &[&str] = &[
    "path",
    "match",
    "required",
    "weight",
    "tolerance",
    "relative",
    "formats",
];

/// Reads a `field-accuracy` grader's own keys (`fields`, `aggregation`).
pub(super) fn parse(
    doc: &Doc<'_>,
    at: &[OwnedStep],
    map: &Map<String, Value>,
    kind: &str,
) -> Result<FieldAccuracy, SuiteFileError> {
    let allowed: Vec<&str> = COMMON
        .iter()
        .chain(&["fields", "aggregation"])
        .copied()
        .collect();
    doc.keys(at, map, &allowed, kind)?;
    let all_or_nothing = match map.get("aggregation") {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) if s == "weighted_average" => false,
        Some(Value::String(s)) if s == "all_or_nothing" => true,
        Some(_) => {
            return Err(doc.err(
                &with(at, key("aggregation")),
                "`aggregation` is `weighted_average` or `all_or_nothing`",
            ));
        }
    };
    let fields_at = with(at, key("fields"));
    let list = match map.get("fields") {
        Some(Value::Array(list)) if !list.is_empty() => list,
        _ => {
            return Err(doc.err(
                at,
                format!("`{kind}` needs `fields` (a list of `{{path, match}}`)"),
            ));
        }
    };
    let mut fields = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let at = with(&fields_at, OwnedStep::Index(i));
        let Value::Object(f) = item else {
            return Err(doc.err(&at, "a field is a mapping with `path` and `match`"));
        };
        doc.keys(&at, f, FIELD_KEYS, "a field")?;
        let path = match f.get("path") {
            Some(Value::String(p)) if !p.is_empty() => p.clone(),
            _ => return Err(doc.err(&at, "a field needs `path` (text)")),
        };
        let number = |k: &str| -> Result<Option<f64>, SuiteFileError> {
            match f.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v.as_f64().filter(|n| *n >= 0.0).map(Some).ok_or_else(|| {
                    doc.err(&with(&at, key(k)), format!("`{k}` is a number, 0 or more"))
                }),
            }
        };
        let flag = |k: &str| -> Result<Option<bool>, SuiteFileError> {
            match f.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Bool(b)) => Ok(Some(*b)),
                Some(_) => Err(doc.err(&with(&at, key(k)), format!("`{k}` is true or false"))),
            }
        };
        let how = match f.get("match").and_then(Value::as_str) {
            Some("exact") => Match::Exact,
            Some("numeric_tolerance") => Match::Numeric {
                tolerance: number("tolerance")?.unwrap_or(0.0),
                relative: flag("relative")?.unwrap_or(false),
            },
            Some("date") => Match::Date {
                formats: match f.get("formats") {
                    None | Some(Value::Null) => {
                        DEFAULT_DATE_FORMATS.iter().map(|s| s.to_string()).collect()
                    }
                    // As AgentV: the list's texts (anything else in it left out).
                    Some(Value::Array(list)) => list
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect(),
                    Some(_) => {
                        return Err(doc.err(
                            &with(&at, key("formats")),
                            "`formats` is a list of date formats",
                        ));
                    }
                },
            },
            _ => {
                return Err(doc.err(
                    &with(&at, key("match")),
                    "a field's `match` is `exact`, `numeric_tolerance` or `date`",
                ));
            }
        };
        fields.push(Field {
            path,
            how,
            required: flag("required")?.unwrap_or(true),
            weight: number("weight")?.unwrap_or(1.0),
        });
    }
    Ok(FieldAccuracy {
        fields,
        all_or_nothing,
    })
}

/// The grader as a check of the answer against the test's expected output.
pub(crate) struct FieldAccuracyCheck {
    pub name: String,
    pub spec: FieldAccuracy,
    /// The answer's text.
    pub output: String,
    /// The test's `expected_output` as written (text, an object, or messages).
    pub expected: Option<Value>,
}

impl ScopedCheck for FieldAccuracyCheck {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn evaluate(&self, _run: &RunView<'_>) -> Grade {
        let (score, reason) = self.spec.grade(&self.output, self.expected.as_ref());
        Grade::score(score, reason).with_verdict(score >= PASS_AT)
    }
}

/// One field's result.
struct FieldResult {
    score: f64,
    weight: f64,
    hit: bool,
    message: String,
}

impl FieldAccuracy {
    /// The score and its reason (each field's message).
    pub(crate) fn grade(&self, output: &str, expected: Option<&Value>) -> (f64, String) {
        let Some(candidate) = parse_json_from_text(output) else {
            return (0.0, "Failed to parse candidate answer as JSON".into());
        };
        let Some(expected) = expected_data(expected) else {
            return (0.0, "No expected data found in expected_output".into());
        };
        let results: Vec<FieldResult> = self
            .fields
            .iter()
            .map(|f| field(f, &candidate, &expected))
            .collect();
        let score = if self.all_or_nothing {
            if results.iter().all(|r| r.hit) {
                1.0
            } else {
                0.0
            }
        } else {
            let total: f64 = results.iter().map(|r| r.weight).sum();
            if total == 0.0 {
                if results.is_empty() { 1.0 } else { 0.0 }
            } else {
                results.iter().map(|r| r.score * r.weight).sum::<f64>() / total
            }
        };
        let score = if score.is_finite() {
            score.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let reason = results
            .iter()
            .map(|r| format!("{} {}", if r.hit { "✓" } else { "✗" }, r.message))
            .collect::<Vec<_>>()
            .join("; ");
        (score, reason)
    }
}

/// AgentV's `parseJsonFromText`: code fences dropped, the text from its first `{` to its last
/// `}` (else all of it), a `"passed"` field's non-boolean value made a boolean, parsed as JSON.
fn parse_json_from_text(text: &str) -> Option<Value> {
    static PASSED: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let cleaned = text.replace("```json\n", "").replace("```json", "");
    let cleaned = cleaned.replace("```", "");
    let cleaned = cleaned.trim();
    let blob = match (cleaned.find('{'), cleaned.rfind('}')) {
        (Some(a), Some(b)) if a < b => &cleaned[a..=b],
        _ => cleaned,
    };
    let passed = PASSED.get_or_init(|| {
        regex::Regex::new(r#"(?i)("passed"\s*:\s*)(?:"([^"]+)"|([A-Za-z_][A-Za-z0-9_-]*))"#)
            .expect("a valid pattern")
    });
    let repaired = passed.replace_all(blob, |c: &regex::Captures<'_>| {
        let value = c
            .get(2)
            .or_else(|| c.get(3))
            .map_or("", |m| m.as_str())
            .trim()
            .to_lowercase();
        let b = if value == "true" { "true" } else { "false" };
        format!("{}{b}", &c[1])
    });
    serde_json::from_str(&repaired).ok()
}

/// JavaScript's truthiness of a JSON value.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0 && !x.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// The expected data: AgentV makes `expected_output` messages (text or an object without
/// `role` is one assistant message, a list whose first item has `role` is messages, another
/// list one assistant message) and takes the content of the last assistant message with
/// content that is an object (or a list), or text that parses as JSON.
fn expected_data(expected: Option<&Value>) -> Option<Value> {
    let assistant = |content: &Value| {
        let mut m = Map::new();
        m.insert("role".into(), Value::String("assistant".into()));
        m.insert("content".into(), content.clone());
        Value::Object(m)
    };
    let messages: Vec<Value> = match expected? {
        Value::Null => return None,
        Value::Array(list) => match list.first() {
            Some(Value::Object(first)) if first.contains_key("role") => list
                .iter()
                .filter(|m| m.get("role").is_some_and(Value::is_string))
                .cloned()
                .collect(),
            _ => vec![assistant(&Value::Array(list.clone()))],
        },
        Value::Object(o) if o.contains_key("role") => vec![Value::Object(o.clone())],
        other => vec![assistant(other)],
    };
    for message in messages.iter().rev() {
        if message.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        match message.get("content") {
            Some(c @ (Value::Object(_) | Value::Array(_))) => return Some(c.clone()),
            Some(Value::String(s)) if !s.is_empty() => {
                if let Some(v) = parse_json_from_text(s) {
                    return truthy(&v).then_some(v);
                }
            }
            _ => {}
        }
    }
    None
}

/// AgentV's `resolvePath`: the path split at `.`, `[` and `]`, walked through objects and
/// (by index) lists; `None` where it leads nowhere.
fn resolve(data: &Value, path: &str) -> Option<Value> {
    if path.is_empty() || !truthy(data) {
        return None;
    }
    let mut current = data.clone();
    for part in path.split(['.', '[', ']']).filter(|p| !p.is_empty()) {
        let is_index = part.bytes().all(|b| b.is_ascii_digit());
        current = match &current {
            Value::Array(list) if is_index => list.get(part.parse::<usize>().ok()?)?.clone(),
            // A list's `length`, as JavaScript reads it.
            Value::Array(list) if part == "length" => Value::from(list.len()),
            Value::Object(map) => map.get(part)?.clone(),
            _ => return None,
        };
    }
    Some(current)
}

/// JavaScript's `typeof` of a JSON value.
fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null | Value::Array(_) | Value::Object(_) => "object",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
    }
}

/// AgentV's `deepEqual` (numbers equal by value: `1500` is `1500.0`).
fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| deep_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, a)| y.get(k).is_some_and(|b| deep_equal(a, b)))
        }
        _ => a == b,
    }
}

/// JavaScript's `Number.parseFloat` of text: the longest number at its start.
fn parse_float(text: &str) -> Option<f64> {
    static NUMBER: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let number = NUMBER.get_or_init(|| {
        regex::Regex::new(r"^[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
            .expect("a valid pattern")
    });
    let m = number.find(text.trim_start())?.as_str();
    match m.trim_start_matches(['+', '-']) {
        "Infinity" if m.starts_with('-') => Some(f64::NEG_INFINITY),
        "Infinity" => Some(f64::INFINITY),
        _ => m.parse().ok(),
    }
}

/// AgentV's `toNumber`: a number, or text read by `parseFloat`.
fn to_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => parse_float(s),
        _ => None,
    }
}

/// One field's result.
fn field(f: &Field, candidate: &Value, expected: &Value) -> FieldResult {
    let path = &f.path;
    let result = |hit: bool, message: String| FieldResult {
        score: if hit { 1.0 } else { 0.0 },
        weight: f.weight,
        hit,
        message,
    };
    let Some(want) = resolve(expected, path) else {
        return result(true, format!("{path}: no expected value"));
    };
    let Some(got) = resolve(candidate, path) else {
        if f.required {
            return result(false, format!("{path} (required, missing)"));
        }
        // An optional field missing does not count.
        return FieldResult {
            score: 1.0,
            weight: 0.0,
            hit: true,
            message: format!("{path}: optional field missing"),
        };
    };
    match &f.how {
        Match::Exact => {
            if deep_equal(&got, &want) {
                result(true, path.clone())
            } else if type_of(&got) != type_of(&want) {
                result(
                    false,
                    format!(
                        "{path} (type mismatch: got {}, expected {})",
                        type_of(&got),
                        type_of(&want)
                    ),
                )
            } else {
                result(false, format!("{path} (value mismatch)"))
            }
        }
        Match::Numeric {
            tolerance,
            relative,
        } => {
            let (Some(g), Some(w)) = (to_number(&got), to_number(&want)) else {
                return result(false, format!("{path} (non-numeric value)"));
            };
            if !g.is_finite() || !w.is_finite() {
                return result(false, format!("{path} (invalid numeric value)"));
            }
            let diff = (g - w).abs();
            let off = if *relative && w != 0.0 {
                diff / w.abs()
            } else {
                diff
            };
            if off <= *tolerance {
                result(true, format!("{path} (within tolerance: diff={diff:.2})"))
            } else {
                result(
                    false,
                    format!("{path} (outside tolerance: diff={diff:.2}, tolerance={tolerance})"),
                )
            }
        }
        Match::Date { formats } => {
            let Some(g) = parse_date(&js_string(&got), formats) else {
                return result(false, format!("{path} (unparseable candidate date)"));
            };
            let Some(w) = parse_date(&js_string(&want), formats) else {
                return result(false, format!("{path} (unparseable expected date)"));
            };
            if g == w {
                result(true, path.clone())
            } else {
                result(
                    false,
                    format!(
                        "{path} (date mismatch: got {}, expected {})",
                        iso(g),
                        iso(w)
                    ),
                )
            }
        }
    }
}

/// JavaScript's `String(value)` of a JSON value (close enough for dates: text as it is).
fn js_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Days since 1970-01-01 of a day of the proleptic Gregorian calendar; a day past its month's
/// end rolls over into the next month (and day 0 is the month's last day before), as
/// JavaScript's `Date` does.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    // A month out of 1–12 rolls over into the years around (JavaScript's month -1 is the
    // December before).
    let year = year + (month - 1).div_euclid(12);
    let month = (month - 1).rem_euclid(12) + 1;
    // Howard Hinnant's algorithm, for the month's first day, plus the days.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468 + (day - 1)
}

/// The `YYYY-MM-DD` of a day number.
fn iso(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The month of a month's name (its first three letters, as JavaScript's date reader takes
/// it; AgentV's own table holds the same names), 1–12.
fn month_named(name: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let lower = name.to_lowercase();
    let prefix = lower.get(..3)?;
    MONTHS
        .iter()
        .position(|m| *m == prefix)
        .map(|i| i as i64 + 1)
}

/// A month (1–12) and day (1–31) as JavaScript's reader accepts them, to a day number.
fn day_checked(year: i64, month: i64, day: i64) -> Option<i64> {
    ((1..=12).contains(&month) && (1..=31).contains(&day))
        .then(|| days_from_civil(year, month, day))
}

/// What `new Date(text)` reads, for the ways dates are written (AgentV tries it first):
/// ISO dates and date-times (a time with an offset moved to UTC), `M/D/YYYY` and `M-D-YYYY`
/// (month first), `YYYY/M/D`, `D-Mon-YYYY`, `D Mon YYYY` and `Mon D[,] YYYY`. Node's reader
/// takes more (it is lenient past these); the days are compared in UTC, which is AgentV's
/// local time where it runs with `TZ=UTC`.
fn js_date(text: &str) -> Option<i64> {
    static ISO: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static NUMERIC: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static WORDS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let iso = ISO.get_or_init(|| {
        regex::Regex::new(
            r"^(\d{4})(?:[-/](\d{1,2})(?:[-/](\d{1,2}))?)?(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?)?$",
        )
        .expect("a valid pattern")
    });
    let numeric = NUMERIC.get_or_init(|| {
        regex::Regex::new(r"^(\d{1,2})[/-](\d{1,2})[/-](\d{4})$").expect("a valid pattern")
    });
    let words = WORDS.get_or_init(|| {
        regex::Regex::new(
            r"^(?:(\d{1,2})[- ]([A-Za-z]{3,9})\.?[- ](\d{4})|([A-Za-z]{3,9})\.? (\d{1,2}),? (\d{4}))$",
        )
        .expect("a valid pattern")
    });
    let n = |m: Option<regex::Match<'_>>| m.and_then(|m| m.as_str().parse::<i64>().ok());
    if let Some(c) = iso.captures(text) {
        let year = n(c.get(1))?;
        let month = n(c.get(2)).unwrap_or(1);
        let day = n(c.get(3)).unwrap_or(1);
        let mut days = day_checked(year, month, day)?;
        if let (Some(hour), Some(minute)) = (n(c.get(4)), n(c.get(5))) {
            let second = n(c.get(6)).unwrap_or(0);
            if hour > 24 || minute > 59 || second > 59 {
                return None;
            }
            let offset = match c.get(7).map(|m| m.as_str()) {
                None | Some("Z") => 0,
                Some(o) => {
                    let sign = if o.starts_with('-') { -1 } else { 1 };
                    let digits: String = o.chars().filter(char::is_ascii_digit).collect();
                    let (h, m) = digits.split_at(2);
                    sign * (h.parse::<i64>().ok()? * 60 + m.parse::<i64>().ok()?)
                }
            };
            let minutes = hour * 60 + minute - offset;
            days += minutes.div_euclid(24 * 60);
        }
        return Some(days);
    }
    if let Some(c) = numeric.captures(text) {
        return day_checked(n(c.get(3))?, n(c.get(1))?, n(c.get(2))?);
    }
    if let Some(c) = words.captures(text) {
        let (day, month, year) = match c.get(1) {
            Some(_) => (n(c.get(1))?, c.get(2)?.as_str(), n(c.get(3))?),
            None => (n(c.get(5))?, c.get(4)?.as_str(), n(c.get(6))?),
        };
        return day_checked(year, month_named(month)?, day);
    }
    None
}

/// AgentV's `parseDate`: JavaScript's own reading first, then `DD-MMM-YYYY`, then
/// `NN/NN/YYYY` or `NN-NN-YYYY`: month first when the formats name only a month-first form
/// (`MM/DD`, `MM-DD`), day first when only a day-first one, else guessed from the numbers
/// (a first number over 12 is the day; a second over 12 the day; else month first).
fn parse_date(text: &str, formats: &[String]) -> Option<i64> {
    static LOCALIZED: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static NUMERIC: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    if text.is_empty() {
        return None;
    }
    let trimmed = text.trim();
    if let Some(days) = js_date(trimmed) {
        return Some(days);
    }
    let localized = LOCALIZED.get_or_init(|| {
        regex::Regex::new(r"^(\d{1,2})-([A-Za-z]{3,9})-(\d{4})$").expect("a valid pattern")
    });
    if let Some(c) = localized.captures(trimmed) {
        // AgentV's own table of month names: the names and their three-letter forms, `sept`.
        const NAMES: [&[&str]; 12] = [
            &["jan", "january"],
            &["feb", "february"],
            &["mar", "march"],
            &["apr", "april"],
            &["may"],
            &["jun", "june"],
            &["jul", "july"],
            &["aug", "august"],
            &["sep", "sept", "september"],
            &["oct", "october"],
            &["nov", "november"],
            &["dec", "december"],
        ];
        let name = c[2].to_lowercase();
        if let Some(month) = NAMES.iter().position(|ns| ns.contains(&name.as_str())) {
            let day: i64 = c[1].parse().ok()?;
            let year: i64 = c[3].parse().ok()?;
            return Some(days_from_civil(year, month as i64 + 1, day));
        }
    }
    let numeric = NUMERIC.get_or_init(|| {
        regex::Regex::new(r"^(\d{1,2})[/-](\d{1,2})[/-](\d{4})$").expect("a valid pattern")
    });
    let c = numeric.captures(trimmed)?;
    let a: i64 = c[1].parse().ok()?;
    let b: i64 = c[2].parse().ok()?;
    let year: i64 = c[3].parse().ok()?;
    let us = formats
        .iter()
        .any(|f| f.contains("MM/DD") || f.contains("MM-DD"));
    let eu = formats
        .iter()
        .any(|f| f.contains("DD/MM") || f.contains("DD-MM"));
    // `new Date(year, month, day)`: a day past the month's end rolls over.
    let date = |month: i64, day: i64| days_from_civil(year, month, day);
    match (us, eu) {
        (true, false) => ((1..=12).contains(&a) && (1..=31).contains(&b)).then(|| date(a, b)),
        (false, true) => ((1..=12).contains(&b) && (1..=31).contains(&a)).then(|| date(b, a)),
        _ if a > 12 && b <= 12 => Some(date(b, a)),
        _ if b > 12 && a <= 12 => Some(date(a, b)),
        _ if a <= 12 && b <= 31 => Some(date(a, b)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn exact(path: &str, weight: f64) -> Field {
        Field {
            path: path.into(),
            how: Match::Exact,
            required: true,
            weight,
        }
    }

    /// AgentV's graders.test.ts expected output.
    fn invoice() -> Value {
        json!([{"role": "assistant", "content": {
            "invoice_number": "INV-001", "amount": 1500, "date": "15-JAN-2025",
            "vendor": {"name": "Acme Shipping", "address": "123 Main St"}}}])
    }

    fn score(fields: Vec<Field>, all_or_nothing: bool, output: &str) -> f64 {
        let spec = FieldAccuracy {
            fields,
            all_or_nothing,
        };
        spec.grade(output, Some(&invoice())).0
    }

    #[test]
    fn exact_fields_missing_ones_weights_and_all_or_nothing() {
        let two = || vec![exact("invoice_number", 1.0), exact("amount", 1.0)];
        let both = r#"{"invoice_number": "INV-001", "amount": 1500}"#;
        assert_eq!(score(two(), false, both), 1.0);
        assert_eq!(score(two(), false, r#"{"invoice_number": "INV-001"}"#), 0.5);
        let wrong = r#"{"invoice_number": "INV-001", "amount": 9999}"#;
        let weighted = vec![exact("invoice_number", 2.0), exact("amount", 1.0)];
        assert!((score(weighted, false, wrong) - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(score(two(), true, wrong), 0.0);
        // 1500.0 is 1500; a fenced answer is read.
        let fenced = "```json\n{\"invoice_number\": \"INV-001\", \"amount\": 1500.0}\n```";
        assert_eq!(score(two(), false, fenced), 1.0);
        assert_eq!(score(two(), false, "This is not valid JSON"), 0.0);
        // An optional field missing does not count; one with no expected value scores 1.
        let mut optional = exact("amount", 1.0);
        optional.required = false;
        let fields = vec![exact("invoice_number", 1.0), optional, exact("nope", 1.0)];
        assert_eq!(score(fields, false, r#"{"invoice_number": "X"}"#), 0.5);
    }

    #[test]
    fn paths_reach_into_objects_and_lists() {
        let fields = vec![exact("vendor.name", 1.0), exact("vendor.address", 1.0)];
        let vendor = r#"{"vendor": {"name": "Acme Shipping", "address": "123 Main St"}}"#;
        assert_eq!(score(fields, false, vendor), 1.0);
        let items =
            json!({"items": [{"name": "Item A", "price": 100}, {"name": "Item B", "price": 200}]});
        assert_eq!(
            resolve(&items, "items[1].price")
                .as_ref()
                .and_then(Value::as_f64),
            Some(200.0)
        );
        assert_eq!(resolve(&items, "items[2].price"), None);
        assert_eq!(resolve(&items, "items.name"), None);
    }

    #[test]
    fn numbers_within_a_tolerance() {
        let amount = |tolerance: f64, relative: bool| Field {
            path: "amount".into(),
            how: Match::Numeric {
                tolerance,
                relative,
            },
            required: true,
            weight: 1.0,
        };
        assert_eq!(
            score(vec![amount(1.0, false)], false, r#"{"amount": 1500.5}"#),
            1.0
        );
        assert_eq!(
            score(vec![amount(1.0, false)], false, r#"{"amount": 1502}"#),
            0.0
        );
        assert_eq!(
            score(vec![amount(0.01, true)], false, r#"{"amount": "1510 USD"}"#),
            1.0
        );
        assert_eq!(
            score(vec![amount(0.01, true)], false, r#"{"amount": 1516}"#),
            0.0
        );
        assert_eq!(
            score(vec![amount(1.0, false)], false, r#"{"amount": "n/a"}"#),
            0.0
        );
    }

    #[test]
    fn dates_in_any_of_the_formats() {
        let formats = |f: &[&str]| f.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let date = |f: &[&str]| Field {
            path: "date".into(),
            how: Match::Date {
                formats: formats(f),
            },
            required: true,
            weight: 1.0,
        };
        let both = ["DD-MMM-YYYY", "YYYY-MM-DD"];
        assert_eq!(
            score(vec![date(&both)], false, r#"{"date": "2025-01-15"}"#),
            1.0
        );
        assert_eq!(
            score(vec![date(&both)], false, r#"{"date": "2025-01-16"}"#),
            0.0
        );
        assert_eq!(
            score(vec![date(&both)], false, r#"{"date": "Jan 15, 2025"}"#),
            1.0
        );
        assert_eq!(
            score(vec![date(&both)], false, r#"{"date": "01/15/2025"}"#),
            1.0
        );
        let day = |s: &str, f: &[&str]| parse_date(s, &formats(f)).map(iso);
        let d = |s: &str| Some(s.to_string());
        // JavaScript reads month first; only what it cannot read is day first.
        assert_eq!(day("05/06/2025", &["DD/MM/YYYY"]), d("2025-05-06"));
        assert_eq!(day("15/01/2025", &["DD/MM/YYYY"]), d("2025-01-15"));
        assert_eq!(day("15/01/2025", &["MM/DD/YYYY"]), None);
        assert_eq!(day("15-01-2025", DEFAULT_DATE_FORMATS), d("2025-01-15"));
        assert_eq!(day("15-Sept-2025", &[]), d("2025-09-15"));
        assert_eq!(day("2025-02-30", &[]), d("2025-03-02"));
        assert_eq!(day("2025-01-15T23:00:00-05:00", &[]), d("2025-01-16"));
        assert_eq!(day("2024-12-31T10:00:00Z", &[]), d("2024-12-31"));
        assert_eq!(day("not a date", &[]), None);
    }

    #[test]
    fn expected_data_from_text_objects_or_messages() {
        let obj = json!({"a": 1});
        assert_eq!(expected_data(Some(&obj)), Some(obj.clone()));
        assert_eq!(expected_data(Some(&json!("{\"a\": 1}"))), Some(obj.clone()));
        let messages = json!([
            {"role": "assistant", "content": {"a": 1}},
            {"role": "assistant", "content": "not json"},
            {"role": "user", "content": "{\"a\": 2}"}
        ]);
        assert_eq!(expected_data(Some(&messages)), Some(obj));
        assert_eq!(expected_data(Some(&json!("plain text"))), None);
        assert_eq!(expected_data(None), None);
    }
}
