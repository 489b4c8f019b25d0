//! What a forge's webhook event names: the watched PRs it may concern, by number, by head
//! commit, by head branch or by base branch (a push to it leaves them behind). A nudge is a
//! hint about timing only: it makes the PRs it names due, and what happens to them is decided
//! by the next read, exactly as in a poll.

use crate::model::{ForgeKind, Sha};

/// One PR (or several, by head) that an event names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Nudge {
    pub forge: ForgeKind,
    /// The repository (GitHub `owner/name`, GitLab project path), in any letter case.
    pub repo: String,
    pub names: Named,
}

impl Nudge {
    /// The nudges of one event about `repo` from its names: each once, in order, leaving out
    /// the empty ones and the all-zero commit a forge sends for a branch that did not exist.
    pub fn all(forge: ForgeKind, repo: &str, mut named: Vec<Named>) -> Vec<Nudge> {
        named.retain(|n| match n {
            Named::Head(sha) => sha.as_str().bytes().any(|b| b != b'0'),
            Named::Branch(b) | Named::Base(b) => !b.is_empty(),
            Named::Number(_) => true,
        });
        named.sort();
        named.dedup();
        named
            .into_iter()
            .map(|names| Nudge {
                forge,
                repo: repo.to_owned(),
                names,
            })
            .collect()
    }
}

/// How an event names a PR.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Named {
    /// By its number (GitLab: its iid).
    Number(u64),
    /// By the head commit last seen on it.
    Head(Sha),
    /// By its head branch.
    Branch(String),
    /// By its base branch: a push to it may leave every PR based on it behind.
    Base(String),
}

/// What a push to `git_ref` names: the branch pushed (the PRs whose head it is, by name and by
/// the commit it had, `before`) and the same branch as a base (the PRs it may leave behind).
/// A tag names nothing.
pub fn pushed(git_ref: Option<&str>, before: Option<String>) -> Vec<Named> {
    let Some(branch) = git_ref.and_then(|r| r.strip_prefix("refs/heads/")) else {
        return Vec::new();
    };
    let mut named = vec![
        Named::Branch(branch.to_owned()),
        Named::Base(branch.to_owned()),
    ];
    named.extend(before.map(|s| Named::Head(Sha(s))));
    named
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_push_names_its_branch_as_head_and_as_base_and_the_commit_it_had() {
        let named = pushed(Some("refs/heads/main"), Some("ab12".into()));
        assert_eq!(
            Nudge::all(ForgeKind::GitHub, "o/r", named)
                .into_iter()
                .map(|n| n.names)
                .collect::<Vec<_>>(),
            vec![
                Named::Head(Sha("ab12".into())),
                Named::Branch("main".into()),
                Named::Base("main".into()),
            ]
        );
        assert!(pushed(Some("refs/tags/v1.0"), Some("ab12".into())).is_empty());
        assert!(pushed(None, None).is_empty());
    }

    /// An event's names become its nudges each once, in order, without the empty names and
    /// the all-zero commit a push of a new branch names as its `before`.
    #[test]
    fn an_events_names_are_kept_once_without_the_empty_ones() {
        let head = |s: &str| Named::Head(Sha(s.into()));
        let given = vec![
            Named::Branch("fix".into()),
            head("0000000000000000000000000000000000000000"),
            head(""),
            Named::Branch(String::new()),
            Named::Base(String::new()),
            Named::Number(7),
            head("abc"),
            Named::Number(7),
        ];
        for forge in [ForgeKind::GitHub, ForgeKind::GitLab] {
            let names: Vec<Named> = Nudge::all(forge, "o/r", given.clone())
                .into_iter()
                .inspect(|n| assert_eq!((n.forge, n.repo.as_str()), (forge, "o/r")))
                .map(|n| n.names)
                .collect();
            assert_eq!(
                names,
                [Named::Number(7), head("abc"), Named::Branch("fix".into())]
            );
        }
    }
}
