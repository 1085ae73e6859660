//! "Did you mean `x`?": the known name closest to a misspelled one, when it is close enough to
//! be a typo. Used for unknown keys of `niceeval.toml` and unknown assertion types of
//! assertions as data (the `#[eval]` macro applies the same rule to its options).

/// The least Jaro-Winkler similarity (0 to 1, case-insensitive) at which a name is suggested.
/// Typos score above 0.9 (`concurency`/`concurrency` 0.98, `tiemout`/`timeout` 0.96), a
/// missing suffix around 0.9 (`judge`/`judge_model`), unrelated names well below 0.7
/// (`retries`/`runs` 0.46).
pub(crate) const MIN_SIMILARITY: f64 = 0.8;

/// The candidate most similar to `name` (the first of equals), if any reaches
/// `MIN_SIMILARITY` (0.8).
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let name = name.trim().to_lowercase();
    let mut best: Option<(f64, &'a str)> = None;
    for candidate in candidates {
        let similarity = strsim::jaro_winkler(&name, &candidate.to_lowercase());
        if similarity >= MIN_SIMILARITY && best.is_none_or(|(b, _)| similarity > b) {
            best = Some((similarity, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_suggested_and_unrelated_ones_are_not() {
        let keys = ["concurrency", "strict", "timeout", "runs"];
        assert_eq!(closest("concurency", keys), Some("concurrency"));
        assert_eq!(closest("tiemout", keys), Some("timeout"));
        assert_eq!(closest("Strict", keys), Some("strict"));
        assert_eq!(closest("run", keys), Some("runs"));
        assert_eq!(closest("retries", keys), None);
        assert_eq!(closest("x", keys), None);
        assert_eq!(closest("anything", []), None);
        // Ties go to the first candidate (canonical names come before aliases).
        assert_eq!(closest("rouge-l", ["rouge-n", "rouge-1"]), Some("rouge-n"));
    }
}
