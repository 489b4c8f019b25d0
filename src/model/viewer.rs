//! The token's user: the login pr-monitor acts for, and how the commits a forge makes on that
//! user's behalf (a branch update, a rebase) name it. GitHub names a commit's author and
//! committer by login; GitLab writes only a display name and an email into a commit, never a
//! username, so there the token's user is known by its name together with one of its emails
//! (`GET /user`: `name`, `commit_email`, `email`).

use serde::{Deserialize, Serialize};

use crate::model::{HeadCommit, Login};

/// Who the forge token belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Viewer {
    /// The login (GitHub) or username (GitLab): the owner pr-monitor acts for.
    pub login: String,
    /// How commits made for this user name it.
    pub commits_as: Committer,
}

/// How a commit names the token's user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Committer {
    /// By login, as the author or the committer (GitHub).
    Login(String),
    /// As the committer, by display name together with one of these emails (GitLab).
    NameAndEmail { name: String, emails: Vec<String> },
}

impl Viewer {
    /// A viewer whose commits name it by its login (GitHub).
    pub fn by_login(login: &str) -> Self {
        Viewer {
            login: login.to_owned(),
            commits_as: Committer::Login(login.to_owned()),
        }
    }
}

impl Committer {
    /// Whether `head` was committed (or, by login, authored) by this user. Nothing matches an
    /// empty login, name or email.
    pub fn made(&self, head: &HeadCommit) -> bool {
        match self {
            Committer::Login(login) => {
                !login.is_empty()
                    && [&head.author_login, &head.committer_login]
                        .into_iter()
                        .any(|l| l.as_deref().is_some_and(|l| Login::new(l).is(login)))
            }
            Committer::NameAndEmail { name, emails } => {
                let email = head.committer_email.as_deref().unwrap_or("");
                !name.is_empty()
                    && head.committer_name.as_deref() == Some(name.as_str())
                    && !email.is_empty()
                    && emails.iter().any(|e| e.eq_ignore_ascii_case(email))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Sha;

    fn head(login: Option<&str>, email: Option<&str>) -> HeadCommit {
        HeadCommit {
            sha: Sha("b".into()),
            author_login: Some("Dana Dev".into()),
            committer_login: login.map(str::to_owned),
            author_email: None,
            committer_email: email.map(str::to_owned),
            committer_name: login.map(str::to_owned),
            committed_at: None,
            parents: vec![],
        }
    }

    #[test]
    fn who_made_a_head() {
        let gitlab = Committer::NameAndEmail {
            name: "The Owner".into(),
            emails: vec![
                "1-owner@users.noreply.example".into(),
                "owner@example.com".into(),
            ],
        };
        let github = Viewer::by_login("owner").commits_as;
        let cases = [
            (
                &github,
                head(Some("OWNER"), None),
                true,
                "a login, in any case",
            ),
            (&github, head(Some("dev"), None), false, "another login"),
            (&github, head(None, None), false, "no committer"),
            (
                &gitlab,
                head(Some("The Owner"), Some("1-owner@users.noreply.example")),
                true,
                "the name and the commit email",
            ),
            (
                &gitlab,
                head(Some("The Owner"), Some("OWNER@example.com")),
                true,
                "the name and the primary email",
            ),
            (
                &gitlab,
                head(Some("The Owner"), Some("someone@example.com")),
                false,
                "the name alone: anyone can call themselves that",
            ),
            (
                &gitlab,
                head(Some("owner"), Some("owner@example.com")),
                false,
                "GitLab commits carry no username",
            ),
            (&gitlab, head(Some("The Owner"), None), false, "no email"),
        ];
        for (who, h, made, what) in cases {
            assert_eq!(who.made(&h), made, "{what}");
        }
        let nobody = Committer::NameAndEmail {
            name: String::new(),
            emails: vec![String::new()],
        };
        assert!(!nobody.made(&head(Some(""), Some(""))));
        assert!(!Viewer::by_login("").commits_as.made(&head(Some(""), None)));
    }
}
