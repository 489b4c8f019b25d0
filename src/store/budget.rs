//! The forge's rate-limit budget as the last answers told it (`rate_limits`): per forge host,
//! token fingerprint and resource, the figures and what one PR read cost on it in the last
//! run that read any, so the next run can tell, before it spends anything, whether the budget
//! left covers the PRs due.

use anyhow::Result;
use rusqlite::{OptionalExtension, params};

use super::Store;
use crate::forge::rate::RateFigures;

/// One kept row: the figures, when they were seen (real epoch seconds) and the last cost of a
/// PR read in thousandths of a point (or request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptBudget {
    pub host: String,
    pub identity: String,
    pub figures: RateFigures,
    pub seen_at: i64,
    pub milli_per_pr: Option<u64>,
}

impl Store {
    /// Keeps `figures` as the latest of their resource for (`host`, `identity`); a known cost
    /// per PR read replaces the kept one, an unknown one keeps it.
    pub fn keep_budget(
        &mut self,
        host: &str,
        identity: &str,
        figures: &RateFigures,
        seen_at: i64,
        milli_per_pr: Option<u64>,
    ) -> Result<()> {
        let num = |v: Option<u64>| v.and_then(|v| i64::try_from(v).ok());
        self.conn.execute(
            "INSERT INTO rate_limits (host, identity, resource, lim, remaining, used, reset_at, seen_at, milli_per_pr)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (host, identity, resource) DO UPDATE SET
                lim = excluded.lim, remaining = excluded.remaining, used = excluded.used,
                reset_at = excluded.reset_at, seen_at = excluded.seen_at,
                milli_per_pr = coalesce(excluded.milli_per_pr, rate_limits.milli_per_pr)",
            params![
                host,
                identity,
                figures.resource,
                num(figures.limit),
                num(Some(figures.remaining)),
                num(figures.used),
                figures.reset_epoch,
                seen_at,
                num(milli_per_pr),
            ],
        )?;
        Ok(())
    }

    /// The kept figures of one resource of (`host`, `identity`).
    pub fn kept_budget(
        &self,
        host: &str,
        identity: &str,
        resource: &str,
    ) -> Result<Option<KeptBudget>> {
        Ok(self
            .conn
            .query_row(
                "SELECT host, identity, resource, lim, remaining, used, reset_at, seen_at, milli_per_pr
                 FROM rate_limits WHERE host = ?1 AND identity = ?2 AND resource = ?3",
                params![host, identity, resource],
                budget_from_row,
            )
            .optional()?)
    }

    /// Every kept row, by host, identity and resource.
    pub fn kept_budgets(&self) -> Result<Vec<KeptBudget>> {
        let mut stmt = self.conn.prepare(
            "SELECT host, identity, resource, lim, remaining, used, reset_at, seen_at, milli_per_pr
             FROM rate_limits ORDER BY host, identity, resource",
        )?;
        let rows = stmt.query_map([], budget_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

fn budget_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<KeptBudget> {
    let num = |i: usize| -> rusqlite::Result<Option<u64>> {
        Ok(r.get::<_, Option<i64>>(i)?
            .and_then(|v| u64::try_from(v).ok()))
    };
    Ok(KeptBudget {
        host: r.get(0)?,
        identity: r.get(1)?,
        figures: RateFigures {
            resource: r.get(2)?,
            limit: num(3)?,
            remaining: num(4)?.unwrap_or(0),
            used: num(5)?,
            reset_epoch: r.get(6)?,
        },
        seen_at: r.get(7)?,
        milli_per_pr: num(8)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(remaining: u64) -> RateFigures {
        RateFigures {
            resource: "graphql".into(),
            limit: Some(5000),
            remaining,
            used: Some(5000 - remaining),
            reset_epoch: Some(1_800_000_000),
        }
    }

    #[test]
    fn the_latest_figures_are_kept_per_host_identity_and_resource() {
        let mut store = Store::open_in_memory().unwrap();
        store
            .keep_budget("api.github.com", "aa", &figures(4000), 10, Some(20))
            .unwrap();
        store
            .keep_budget("api.github.com", "aa", &figures(3000), 11, None)
            .unwrap();
        store
            .keep_budget("api.github.com", "bb", &figures(100), 12, Some(1600))
            .unwrap();
        let kept = store
            .kept_budget("api.github.com", "aa", "graphql")
            .unwrap()
            .unwrap();
        assert_eq!(
            (kept.figures.remaining, kept.seen_at, kept.milli_per_pr),
            (3000, 11, Some(20)),
            "an unknown cost keeps the last known one"
        );
        assert_eq!(
            store.kept_budget("api.github.com", "aa", "core").unwrap(),
            None
        );
        assert_eq!(store.kept_budgets().unwrap().len(), 2);
    }
}
