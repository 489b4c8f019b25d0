//! Unsigned numbers (PR numbers, job ids, row limits) as SQLite keeps them, in a signed 64-bit
//! integer: [`Uint`] converts both ways with a check, so a value past `i64::MAX` (or a stored
//! negative one) is an error, never a wrapped number.

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
}
