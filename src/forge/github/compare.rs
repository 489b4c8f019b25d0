//! What a branch changed since it parted from another: `GET /repos/{o}/{r}/compare/{basehead}`
//! (three dots: from the merge base). Read only for a PR that conflicts, to name its files.

use serde::Deserialize;

use super::GitHub;
use crate::forge::ForgeError;
use crate::forge::http::{Idempotency, status_error};
use crate::model::PrRef;

/// GitHub lists at most this many files of a comparison: a list this long may be cut short.
const MAX_FILES: usize = 300;

#[derive(Debug, Deserialize)]
struct Comparison {
    #[serde(default)]
    files: Vec<ChangedFile>,
}

#[derive(Debug, Deserialize)]
struct ChangedFile {
    filename: String,
    #[serde(default)]
    previous_filename: Option<String>,
}

/// Percent-encodes a ref for the path, keeping the `/` of branch names.
fn path_ref(s: &str) -> String {
    crate::forge::percent_encoded(s, b"/")
}

impl GitHub {
    pub(super) fn changed_files(
        &self,
        pr: &PrRef,
        from: &str,
        to: &str,
    ) -> Result<Option<Vec<String>>, ForgeError> {
        // One commit per page: the files come whole on the first page either way.
        let path = format!(
            "/repos/{}/compare/{}...{}?per_page=1",
            pr.repo,
            path_ref(from),
            path_ref(to)
        );
        let resp = self.rest("GET", &path, None, Idempotency::Retry)?;
        if resp.status == 404 {
            // A side the repository cannot see (a fork's commits gone): not known.
            return Ok(None);
        }
        if resp.status != 200 {
            return Err(status_error(&resp));
        }
        let c: Comparison = serde_json::from_str(&resp.body)
            .map_err(|e| ForgeError::Unexpected(format!("comparison: {e}")))?;
        if c.files.len() >= MAX_FILES {
            return Ok(None);
        }
        Ok(Some(
            c.files
                .into_iter()
                .flat_map(|f| std::iter::once(f.filename).chain(f.previous_filename))
                .collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn refs_keep_their_slashes_and_lose_what_a_path_cannot_hold() {
        assert_eq!(super::path_ref("feature/a b#1"), "feature/a%20b%231");
    }
}
