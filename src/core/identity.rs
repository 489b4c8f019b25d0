//! Whose commit a head is, as the forge authenticates it: the agent's when its author or
//! committer resolves to one of the agent's logins (GitHub App bots included), when its author
//! or committer email is one of the agent's (`agents.NAME.emails`, or a forge's no-reply
//! address of one of its logins), when the forge saw one of the agent's logins push it, or when
//! it appeared while the agent's command ran. Never by a free-text name: anyone can write any
//! name into a commit.
//!
//! An email is no proof either (anyone can write any email into a commit): it says whose the
//! commit claims to be. Whether a head may reach the agent at all is [`super::trust`]'s call.

use crate::model::{HeadCommit, Login};

/// Who the agent is on the forge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Agent<'a> {
    /// `agents.NAME.logins` (App bots as `name[bot]`).
    pub logins: &'a [Login],
    /// `agents.NAME.emails`.
    pub emails: &'a [String],
}

impl Agent<'_> {
    /// Whether `login` is one of the agent's.
    pub(crate) fn has_login(&self, login: &str) -> bool {
        Login::any_is(self.logins, Some(login))
    }

    /// Whether `email` is one of the agent's: listed in `emails`, or GitHub's no-reply address
    /// `<id>+<login>@users.noreply.github.com` (an App bot's is `<id>+name[bot]@…`), or
    /// GitLab's `<id>-<username>@users.noreply.gitlab.com`, of one of its logins.
    pub(crate) fn has_email(&self, email: &str) -> bool {
        let email = email.trim();
        if email.is_empty() {
            return false;
        }
        if self.emails.iter().any(|e| e.eq_ignore_ascii_case(email)) {
            return true;
        }
        noreply_login(email).is_some_and(|login| self.has_login(login))
    }

    /// Whether the head names the agent as its author or committer, by login or by email.
    pub(crate) fn made(&self, head: &HeadCommit) -> bool {
        [&head.author_login, &head.committer_login]
            .into_iter()
            .flatten()
            .any(|l| self.has_login(l))
            || [&head.author_email, &head.committer_email]
                .into_iter()
                .flatten()
                .any(|e| self.has_email(e))
    }
}

/// The login a forge's no-reply commit email stands for: GitHub's
/// `<id>+<login>@users.noreply.github.com` (and the older `<login>@users.noreply.github.com`),
/// GitLab's `<id>-<username>@users.noreply.<host>`.
pub(crate) fn noreply_login(email: &str) -> Option<&str> {
    let (local, domain) = email.rsplit_once('@')?;
    let domain = domain.to_ascii_lowercase();
    if domain == "users.noreply.github.com" {
        let login = match local.split_once('+') {
            Some((id, login)) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) => login,
            Some(_) => return None,
            None => local,
        };
        return (!login.is_empty()).then_some(login);
    }
    if domain.starts_with("users.noreply.") {
        let (id, username) = local.split_once('-')?;
        return (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) && !username.is_empty())
            .then_some(username);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Sha;

    fn head(
        author: Option<&str>,
        committer: Option<&str>,
        author_email: Option<&str>,
        name: Option<&str>,
    ) -> HeadCommit {
        HeadCommit {
            sha: Sha("a".into()),
            author_login: author.map(str::to_owned),
            committer_login: committer.map(str::to_owned),
            author_email: author_email.map(str::to_owned),
            committer_email: None,
            committer_name: name.map(str::to_owned),
            committed_at: None,
            parents: vec![],
        }
    }

    #[test]
    fn whose_commit_a_head_is() {
        let logins = [Login::new("claude[bot]"), Login::new("fixer-bot")];
        let emails = ["agent@example.com".to_owned()];
        let agent = Agent {
            logins: &logins,
            emails: &emails,
        };
        let cases = [
            (
                head(Some("fixer-bot"), None, None, None),
                true,
                "the author's login",
            ),
            (
                head(None, Some("FIXER-BOT"), None, None),
                true,
                "the committer's, any case",
            ),
            (
                head(Some("claude"), None, None, None),
                true,
                "GraphQL's bot login has no [bot]",
            ),
            (
                head(Some("claude[bot]"), None, None, None),
                true,
                "REST's has it",
            ),
            (
                head(Some("fixer-bot[bot]"), None, None, None),
                true,
                "with [bot] either way",
            ),
            (
                head(
                    None,
                    None,
                    Some("209825114+claude[bot]@users.noreply.github.com"),
                    None,
                ),
                true,
                "an App bot: user null, its no-reply email",
            ),
            (
                head(
                    None,
                    None,
                    Some("7-fixer-bot@users.noreply.gitlab.com"),
                    None,
                ),
                true,
                "GitLab's no-reply email of its username",
            ),
            (
                head(None, None, Some("AGENT@example.com"), None),
                true,
                "a listed email",
            ),
            (
                head(
                    None,
                    None,
                    Some("1+mallory@users.noreply.github.com"),
                    Some("claude[bot]"),
                ),
                false,
                "a name alone is no one's",
            ),
            (
                head(Some("dev"), Some("dev"), None, Some("fixer-bot")),
                false,
                "someone else",
            ),
            (
                head(
                    None,
                    None,
                    Some("x+claude[bot]@users.noreply.github.com"),
                    None,
                ),
                false,
                "a no-reply address without a numeric id",
            ),
            (
                head(None, None, Some("claude[bot]@example.com"), None),
                false,
                "another domain",
            ),
            (head(None, None, None, None), false, "nothing known"),
        ];
        for (h, want, what) in cases {
            assert_eq!(agent.made(&h), want, "{what}");
        }
    }

    #[test]
    fn noreply_addresses_name_their_login() {
        let cases = [
            ("123+octocat@users.noreply.github.com", Some("octocat")),
            ("octocat@users.noreply.github.com", Some("octocat")),
            (
                "41898282+github-actions[bot]@users.noreply.github.com",
                Some("github-actions[bot]"),
            ),
            ("12-fixer@users.noreply.gitlab.com", Some("fixer")),
            ("12-fixer@users.noreply.gitlab.example.com", Some("fixer")),
            ("fixer@users.noreply.gitlab.com", None),
            ("a+b@example.com", None),
            ("no-at-sign", None),
        ];
        for (email, want) in cases {
            assert_eq!(noreply_login(email), want, "{email}");
        }
    }
}
