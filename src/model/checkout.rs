//! Where the agent's checkout of a PR stands against the PR's head (`watch add PR --checkout
//! PATH`): at the head, behind it (the head was pushed from elsewhere), ahead of it (commits
//! not pushed yet), both, or unreadable; and how `status PR` says so. Pure: what git answered
//! goes in (see `crate::checkout` for the reading), words come out.

use serde::Serialize;

use crate::model::Sha;

/// The checkout against the head, as git told it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "standing", rename_all = "snake_case")]
pub enum Standing {
    /// The checkout is at the head.
    AtHead { sha: Sha },
    /// The head has commits the checkout lacks: it was pushed from elsewhere. `missing` is
    /// `None` when the checkout has not even fetched the head.
    Behind { sha: Sha, missing: Option<u32> },
    /// The checkout has commits on top of the head: not pushed yet.
    Ahead { sha: Sha, unpushed: u32 },
    /// Both: the head was pushed from elsewhere and the checkout has commits not pushed yet.
    Diverged { sha: Sha },
    /// git could not read the checkout (no such folder, not a repository, no commit).
    Unreadable { reason: String },
}

impl Standing {
    /// Whether the checkout is at another commit than the head (or cannot be told).
    pub fn is_stale(&self) -> bool {
        !matches!(self, Standing::AtHead { .. })
    }

    /// `status PR`'s words for it, `head` being the PR's head.
    pub fn words(&self, head: &Sha) -> String {
        let plural = |n: u32| if n == 1 { "" } else { "s" };
        match self {
            Standing::AtHead { sha } => format!("at the head {}", sha.short()),
            Standing::Behind { sha, missing: None } => format!(
                "at {}: the head {} was pushed from elsewhere (not fetched here)",
                sha.short(),
                head.short()
            ),
            Standing::Behind {
                sha,
                missing: Some(n),
            } => format!(
                "at {}: the head {} was pushed from elsewhere ({n} commit{} the checkout lacks)",
                sha.short(),
                head.short(),
                plural(*n)
            ),
            Standing::Ahead { sha, unpushed } => format!(
                "at {}: {unpushed} commit{} not pushed yet (the head is {})",
                sha.short(),
                plural(*unpushed),
                head.short()
            ),
            Standing::Diverged { sha } => format!(
                "at {}: the head {} was pushed from elsewhere, and the checkout has commits not pushed yet",
                sha.short(),
                head.short()
            ),
            Standing::Unreadable { reason } => format!("cannot be read: {reason}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_standing_reads_as_the_seed_says() {
        let sha = |s: &str| Sha(s.repeat(40));
        let head = sha("h");
        let c = sha("c");
        let cases = [
            (
                Standing::AtHead { sha: head.clone() },
                "at the head hhhhhhh",
                false,
            ),
            (
                Standing::Behind {
                    sha: c.clone(),
                    missing: None,
                },
                "at ccccccc: the head hhhhhhh was pushed from elsewhere (not fetched here)",
                true,
            ),
            (
                Standing::Behind {
                    sha: c.clone(),
                    missing: Some(2),
                },
                "at ccccccc: the head hhhhhhh was pushed from elsewhere (2 commits the checkout lacks)",
                true,
            ),
            (
                Standing::Ahead {
                    sha: c.clone(),
                    unpushed: 1,
                },
                "at ccccccc: 1 commit not pushed yet (the head is hhhhhhh)",
                true,
            ),
            (
                Standing::Diverged { sha: c },
                "at ccccccc: the head hhhhhhh was pushed from elsewhere, and the checkout has commits not pushed yet",
                true,
            ),
            (
                Standing::Unreadable {
                    reason: "no such folder".into(),
                },
                "cannot be read: no such folder",
                true,
            ),
        ];
        for (standing, words, stale) in cases {
            assert_eq!(standing.words(&head), words);
            assert_eq!(standing.is_stale(), stale, "{words}");
        }
    }

    #[test]
    fn the_json_names_the_standing() {
        let v = serde_json::to_value(Standing::Ahead {
            sha: Sha("abc".into()),
            unpushed: 2,
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"standing": "ahead", "sha": "abc", "unpushed": 2})
        );
    }
}
