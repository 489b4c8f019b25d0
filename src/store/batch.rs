//! Transactions: the one each multi-statement write runs in, and the batch that groups many
//! such writes (a chunk's leases, kept reads or tick records) into one commit. Inside a batch
//! each write is a savepoint, so one PR's failed write is undone alone and the others land.

use anyhow::Result;
use rusqlite::{Connection, Savepoint, Transaction, TransactionBehavior};

use super::Store;

/// A write that lands whole or not at all: its own immediate transaction, or a savepoint of
/// the batch under way.
pub(super) enum Atomic<'a> {
    Own(Transaction<'a>),
    InBatch(Savepoint<'a>),
}

impl std::ops::Deref for Atomic<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        match self {
            Atomic::Own(tx) => tx,
            Atomic::InBatch(sp) => sp,
        }
    }
}

impl Atomic<'_> {
    /// Keeps the write (in a batch: until the batch commits). Dropped without it, it is undone.
    pub(super) fn commit(self) -> Result<()> {
        match self {
            Atomic::Own(tx) => tx.commit()?,
            Atomic::InBatch(sp) => sp.commit()?,
        }
        Ok(())
    }
}

impl Store {
    /// Starts an atomic write: a savepoint inside a batch, else an immediate transaction.
    pub(super) fn atomic(&mut self) -> Result<Atomic<'_>> {
        Ok(if self.conn.is_autocommit() {
            Atomic::Own(
                self.conn
                    .transaction_with_behavior(TransactionBehavior::Immediate)?,
            )
        } else {
            Atomic::InBatch(self.conn.savepoint()?)
        })
    }

    /// Runs `body` in one immediate transaction, committed when it returns `Ok` and rolled
    /// back when it returns `Err`: many small writes, one commit. Inside a batch already,
    /// `body` is simply part of it. Nothing in `body` may wait on the network: the batch
    /// holds the database's write lock until it ends.
    pub fn batch<T>(&mut self, body: impl FnOnce(&mut Store) -> Result<T>) -> Result<T> {
        if !self.conn.is_autocommit() {
            return body(self);
        }
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        let out = body(self);
        let ended = match &out {
            Ok(_) => self.conn.execute_batch("COMMIT"),
            Err(_) => self.conn.execute_batch("ROLLBACK"),
        };
        if let Err(e) = ended {
            if !self.conn.is_autocommit() {
                let _ = self.conn.execute_batch("ROLLBACK");
            }
            return Err(e.into());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(s: &Store) -> i64 {
        s.conn
            .query_row("SELECT count(*) FROM meta", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_batch_commits_what_its_body_kept_and_a_failed_one_nothing() {
        let mut s = Store::open_in_memory().unwrap();
        let before = count(&s);
        s.batch(|s| {
            s.set_meta("a", "1")?;
            // A write undone inside the batch leaves the others.
            let sp = s.atomic()?;
            sp.execute("INSERT INTO meta (key, value) VALUES ('b', '2')", [])?;
            drop(sp);
            s.set_meta("c", "3")
        })
        .unwrap();
        assert_eq!(count(&s), before + 2);
        assert_eq!(s.meta("b").unwrap(), None);
        let failed: Result<()> = s.batch(|s| {
            s.set_meta("d", "4")?;
            anyhow::bail!("no")
        });
        assert!(failed.is_err());
        assert_eq!(s.meta("d").unwrap(), None);
        assert!(s.conn.is_autocommit(), "no transaction is left open");
    }
}
