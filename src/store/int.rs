//! Unsigned numbers (PR numbers, job ids, row limits) as SQLite keeps them, in a signed 64-bit
//! integer: [`Uint`] converts both ways with a check, so a value past `i64::MAX` (or a stored
//! negative one) is an error, never a wrapped number. A digest, whose 64 bits are all its own,
//! is kept as the signed integer of the same bits instead ([`signed`], [`unsigned`]).

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

/// A `u64` bound to or read from a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Uint(pub u64);

impl From<usize> for Uint {
    /// A count or index (never past `u64::MAX` on the platforms Rust supports).
    fn from(n: usize) -> Self {
        Uint(u64::try_from(n).unwrap_or(u64::MAX))
    }
}

impl ToSql for Uint {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        i64::try_from(self.0)
            .map(ToSqlOutput::from)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
    }
}

impl FromSql for Uint {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let n = i64::column_result(value)?;
        u64::try_from(n)
            .map(Uint)
            .map_err(|_| FromSqlError::OutOfRange(n))
    }
}

/// A digest as SQLite holds it: the same 64 bits, signed.
pub(super) fn signed(digest: u64) -> i64 {
    i64::from_le_bytes(digest.to_le_bytes())
}

/// A digest [`signed`] held, as it was.
pub(super) fn unsigned(held: i64) -> u64 {
    u64::from_le_bytes(held.to_le_bytes())
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;

    #[test]
    fn numbers_cross_into_sqlite_whole_or_not_at_all() {
        let conn = Connection::open_in_memory().unwrap();
        let back = |n: Uint| conn.query_row("SELECT ?1", [n], |r| r.get::<_, Uint>(0));
        for n in [0, 1, 2_147_483_647, i64::MAX.unsigned_abs()] {
            assert_eq!(back(Uint(n)).unwrap(), Uint(n));
        }
        assert!(matches!(
            back(Uint(i64::MAX.unsigned_abs() + 1)),
            Err(rusqlite::Error::ToSqlConversionFailure(_))
        ));
        let negative = conn.query_row("SELECT -1", [], |r| r.get::<_, Uint>(0));
        assert!(
            matches!(
                negative,
                Err(rusqlite::Error::FromSqlConversionFailure(..)
                    | rusqlite::Error::IntegralValueOutOfRange(..))
            ),
            "{negative:?}"
        );
        assert_eq!(Uint::from(7_usize), Uint(7));
    }

    #[test]
    fn digests_keep_their_64_bits() {
        for d in [0, 1, u64::MAX, 1 << 63, u64::MAX - 1] {
            assert_eq!(unsigned(signed(d)), d);
        }
        assert_eq!(signed(u64::MAX), -1);
    }
}
