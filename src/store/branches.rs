//! Watched branches: the rows a job's `branch:` entries keep (`branch_watches`).

use anyhow::{Context, Result};
use rusqlite::{Row, params};

use super::Store;
use crate::model::branch::{BranchMemory, BranchRef, BranchWatch};
use crate::model::{Instant, Sha, parse_instant, stamp};

fn instant(s: Option<String>) -> Option<Instant> {
    s.and_then(|s| parse_instant(&s).ok())
}

fn from_row(r: &Row<'_>) -> rusqlite::Result<(BranchWatch, String, String)> {
    let forge: String = r.get("forge")?;
    Ok((
        BranchWatch {
            id: r.get("id")?,
            branch: BranchRef {
                forge: crate::model::ForgeKind::GitHub,
                repo: r.get("repo")?,
                name: r.get("branch")?,
            },
            job: r.get("job")?,
            head_sha: r.get::<_, Option<String>>("head_sha")?.map(Sha),
            memory: BranchMemory::default(),
            next_tick_at: instant(r.get("next_tick_at")?),
            last_tick_at: instant(r.get("last_tick_at")?),
            last_error: r.get("last_error")?,
        },
        forge,
        r.get("memory")?,
    ))
}

/// What one look at a branch found, to record.
#[derive(Debug, Clone)]
pub struct BranchLook {
    pub head_sha: Option<Sha>,
    pub memory: BranchMemory,
    pub next_tick_at: Instant,
    pub last_error: Option<String>,
}

impl Store {
    /// Every watched branch, by repository and name.
    pub fn branch_watches(&self) -> Result<Vec<BranchWatch>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT * FROM branch_watches ORDER BY repo, branch, forge")?;
        let rows = stmt.query_map([], from_row)?;
        let mut out = Vec::new();
        for row in rows {
            let (mut w, forge, memory) = row?;
            w.branch.forge = forge
                .parse()
                .map_err(|e: String| anyhow::anyhow!(e))
                .with_context(|| format!("branch watch {}", w.id))?;
            w.memory = serde_json::from_str(&memory)
                .with_context(|| format!("the memory of branch watch {}", w.id))?;
            out.push(w);
        }
        Ok(out)
    }

    /// Makes `wanted` (branch, job) the watched branches: new ones are due at once, ones no
    /// job names any more are forgotten, a branch whose job changed keeps what it knew.
    pub fn sync_branch_watches(
        &mut self,
        wanted: &[(BranchRef, String)],
        now: Instant,
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        let have: Vec<(i64, String, String, String)> = {
            let mut stmt = tx.prepare("SELECT id, forge, repo, branch FROM branch_watches")?;
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        for (id, forge, repo, branch) in have {
            let named = wanted
                .iter()
                .any(|(b, _)| b.forge.as_str() == forge && b.repo == repo && b.name == branch);
            if !named {
                tx.execute("DELETE FROM branch_watches WHERE id = ?1", [id])?;
            }
        }
        for (b, job) in wanted {
            tx.execute(
                "INSERT INTO branch_watches (forge, repo, branch, job, next_tick_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (forge, repo, branch) DO UPDATE SET job = excluded.job",
                params![b.forge.as_str(), b.repo, b.name, job, stamp(now)],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Records that the owner vouched for `head` of branch watch `id`, and makes the branch due
    /// at `now` so the next run looks at it.
    pub fn vouch_branch_head(&mut self, id: i64, head: &Sha, now: Instant) -> Result<()> {
        let tx = self.atomic()?;
        let stored: String = tx.query_row(
            "SELECT memory FROM branch_watches WHERE id = ?1",
            [id],
            |r| r.get(0),
        )?;
        let mut memory: BranchMemory = serde_json::from_str(&stored)
            .with_context(|| format!("the memory of branch watch {id}"))?;
        if !memory.vouched_heads.contains(head) {
            memory.vouched_heads.push(head.clone());
        }
        tx.execute(
            "UPDATE branch_watches SET memory = ?2, next_tick_at = ?3 WHERE id = ?1",
            params![id, serde_json::to_string(&memory)?, stamp(now)],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Records one look at branch watch `id`.
    pub fn record_branch_look(&mut self, id: i64, look: &BranchLook, now: Instant) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE branch_watches SET head_sha = ?2, memory = ?3, next_tick_at = ?4,
                 last_tick_at = ?5, last_error = ?6 WHERE id = ?1",
            )?
            .execute(params![
                id,
                look.head_sha.as_ref().map(Sha::as_str),
                serde_json::to_string(&look.memory)?,
                stamp(look.next_tick_at),
                stamp(now),
                look.last_error,
            ])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ForgeKind;
    use chrono::TimeZone;

    fn t(secs: i64) -> Instant {
        chrono::Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
    }

    fn main_of(repo: &str) -> BranchRef {
        BranchRef {
            forge: ForgeKind::GitHub,
            repo: repo.into(),
            name: "main".into(),
        }
    }

    #[test]
    fn branch_watches_follow_the_jobs_and_keep_their_looks() {
        let mut store = Store::open_in_memory().unwrap();
        store
            .sync_branch_watches(
                &[(main_of("o/a"), "j".into()), (main_of("o/b"), "j".into())],
                t(0),
            )
            .unwrap();
        let all = store.branch_watches().unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].next_tick_at, Some(t(0)), "due at once");
        let memory = BranchMemory {
            failing: vec!["test".into()],
            sent: vec!["abc:test".into()],
            ..BranchMemory::default()
        };
        let look = BranchLook {
            head_sha: Some(Sha("abc".into())),
            memory: memory.clone(),
            next_tick_at: t(300),
            last_error: None,
        };
        store.record_branch_look(all[0].id, &look, t(1)).unwrap();
        // o/b leaves the job; o/a's job is renamed: it keeps what it knew.
        store
            .sync_branch_watches(&[(main_of("o/a"), "k".into())], t(2))
            .unwrap();
        let all = store.branch_watches().unwrap();
        assert_eq!(all.len(), 1);
        let a = &all[0];
        assert_eq!((a.job.as_str(), a.branch.repo.as_str()), ("k", "o/a"));
        assert_eq!(a.memory, memory);
        assert_eq!(a.head_sha, Some(Sha("abc".into())));
        assert_eq!((a.next_tick_at, a.last_tick_at), (Some(t(300)), Some(t(1))));
        assert!(a.ci());
        store
            .vouch_branch_head(a.id, &Sha("def".into()), t(5))
            .unwrap();
        store
            .vouch_branch_head(a.id, &Sha("def".into()), t(5))
            .unwrap();
        let a = &store.branch_watches().unwrap()[0];
        assert_eq!(a.memory.vouched_heads, [Sha("def".into())], "once");
        assert_eq!(a.memory.sent, memory.sent, "the rest is kept");
        assert_eq!(a.next_tick_at, Some(t(5)), "due at once");
    }
}
