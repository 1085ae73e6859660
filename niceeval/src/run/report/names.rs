//! How every output of a run names an eval: the one decision the console (progress lines,
//! table, failure headers, flaky list, comparison), Markdown, HTML and JUnit texts share, so an
//! eval reads the same everywhere.

/// How a run's outputs name its evals: by the id without its test target (the crate segment,
/// `support::refund` for `evals::support::refund`, the name libtest shows) when the run shows
/// evals of one target, by the whole id (`smoke::order_status`, `evals::order_status`) when it
/// shows evals of several, so those stay apart.
///
/// Baselines, results files, JUnit's `classname` and the HTML page's `data-id` keep whole ids:
/// they are keys other runs are matched by, not names a reader reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Names {
    /// The run shows evals of more than one target.
    several_targets: bool,
}

/// The test target of an id: its first segment (`evals` in `evals::support::refund`).
fn target(id: &str) -> &str {
    id.split_once("::").map_or("", |(target, _)| target)
}

impl Names {
    /// How a run that shows the evals `ids` names them.
    pub(crate) fn of<'a>(ids: impl IntoIterator<Item = &'a str>) -> Self {
        let mut ids = ids.into_iter();
        let several_targets = match ids.next() {
            Some(first) => ids.any(|id| target(id) != target(first)),
            None => false,
        };
        Names { several_targets }
    }

    /// The name of the eval (or dataset) `id`.
    pub(crate) fn name(self, id: &str) -> &str {
        if self.several_targets {
            id
        } else {
            id.split_once("::").map_or(id, |(_, rest)| rest)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_target_drops_it_several_keep_it() {
        let one = Names::of(["evals::dataset::support_csv::x", "evals::refund"]);
        assert_eq!(
            one.name("evals::dataset::support_csv::x"),
            "dataset::support_csv::x"
        );
        assert_eq!(
            one.name("evals::dataset::support_csv"),
            "dataset::support_csv"
        );
        let several = Names::of(["evals::order_status", "smoke::order_status"]);
        assert_eq!(several.name("smoke::order_status"), "smoke::order_status");
        assert_eq!(Names::of([]).name("evals::refund"), "refund");
        assert_eq!(Names::default().name("refund"), "refund");
    }
}
