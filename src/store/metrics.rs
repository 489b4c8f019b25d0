//! Metrics that outlive one run: counters (actions taken, forge requests and points) and
//! last-known gauges (rate-limit remaining per forge), kept in the `metrics` table and read by
//! [`crate::tick::metrics`] when it writes the Prometheus file.
//!
//! Anything that wants a figure on the operator's dashboard feeds it here:
//!
//! ```no_run
//! # fn f(store: &mut pr_monitor::store::Store) -> anyhow::Result<()> {
//! use pr_monitor::store::Labels;
//! // a counter: adds to what earlier runs counted
//! store.add_to_counter("pr_monitor_forge_points_total", &Labels::of(&[("forge", "github")]), 3.0)?;
//! // a gauge: the last value seen wins
//! store.set_gauge("pr_monitor_rate_limit_remaining", &Labels::of(&[("forge", "github")]), 4990.0)?;
//! # Ok(()) }
//! ```
//!
//! Names follow Prometheus conventions (`_total` for counters). Label values are escaped here,
//! so forge text may be passed as it is.

use anyhow::Result;
use rusqlite::params;

use super::Store;

/// A metric's labels, rendered once in Prometheus form (`forge="github",kind="merge"`), sorted by
/// name so the same set always names the same series.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Labels(String);

impl Labels {
    /// Labels from `(name, value)` pairs; values are escaped as the text format requires.
    pub fn of(pairs: &[(&str, &str)]) -> Labels {
        let mut pairs = pairs.to_vec();
        pairs.sort_unstable();
        let rendered: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
            .collect();
        Labels(rendered.join(","))
    }

    /// The rendered form, empty when there are no labels.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// One stored series.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMetric {
    pub name: String,
    pub labels: Labels,
    /// `counter` or `gauge`.
    pub kind: String,
    pub value: f64,
}

impl Store {
    /// Adds `delta` to a counter (created at zero).
    pub fn add_to_counter(&mut self, name: &str, labels: &Labels, delta: f64) -> Result<()> {
        self.conn.execute(
            "INSERT INTO metrics (name, labels, kind, value) VALUES (?1, ?2, 'counter', ?3)
             ON CONFLICT (name, labels) DO UPDATE SET value = value + excluded.value",
            params![name, labels.as_str(), delta],
        )?;
        Ok(())
    }

    /// Sets a gauge to its latest value.
    pub fn set_gauge(&mut self, name: &str, labels: &Labels, value: f64) -> Result<()> {
        self.conn.execute(
            "INSERT INTO metrics (name, labels, kind, value) VALUES (?1, ?2, 'gauge', ?3)
             ON CONFLICT (name, labels) DO UPDATE SET value = excluded.value",
            params![name, labels.as_str(), value],
        )?;
        Ok(())
    }

    /// Every stored series, by name then labels.
    pub fn stored_metrics(&self) -> Result<Vec<StoredMetric>> {
        let mut stmt = self
            .conn
            .prepare("SELECT name, labels, kind, value FROM metrics ORDER BY name, labels")?;
        let rows = stmt.query_map([], |r| {
            Ok(StoredMetric {
                name: r.get(0)?,
                labels: Labels(r.get(1)?),
                kind: r.get(2)?,
                value: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Undelivered outbox messages: (not yet failed, failed at least once).
    pub fn outbox_counts(&self) -> Result<(i64, i64)> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FILTER (WHERE last_error IS NULL), COUNT(*) FILTER (WHERE last_error IS NOT NULL)
             FROM outbox WHERE delivered_at IS NULL",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_add_up_across_calls_and_gauges_keep_the_last_value() {
        let mut store = Store::open_in_memory().unwrap();
        let gh = Labels::of(&[("kind", "merge"), ("forge", "github")]);
        assert_eq!(gh.as_str(), "forge=\"github\",kind=\"merge\"");
        store.add_to_counter("a_total", &gh, 1.0).unwrap();
        store.add_to_counter("a_total", &gh, 2.0).unwrap();
        store.set_gauge("g", &Labels::default(), 5.0).unwrap();
        store.set_gauge("g", &Labels::default(), 4.0).unwrap();
        let all = store.stored_metrics().unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!((all[0].name.as_str(), all[0].value), ("a_total", 3.0));
        assert_eq!((all[1].kind.as_str(), all[1].value), ("gauge", 4.0));
        assert_eq!(store.outbox_counts().unwrap(), (0, 0));
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(
            Labels::of(&[("x", "a\"b\\c\nd")]).as_str(),
            "x=\"a\\\"b\\\\c\\nd\""
        );
    }
}
