//! Whether a head is vouched for, so that what is on it may reach the agent: the forge saw a
//! trusted login push it (GitHub's repository activity, GitLab's push events); or every commit
//! past the base is signed, verified and committed by a trusted login; or the owner vouched for
//! that exact head. Trusted logins are the owner, the agent's logins and the job's `trust`;
//! never a login the forge itself acts as (`web-flow` vouches only for a verified commit whose
//! author is trusted). An email or a commit date proves nothing: anyone can write them; only a
//! signature the forge verified makes the committer email name its signer (GitLab verifies a
//! signature only when that email is one of the signing user's verified emails, and names no
//! username).

use chrono::Duration;

use super::identity::noreply_login;
use crate::model::trust::{
    Evidence, HeadTrust, Push, SignedCommit, TrustVerdict, TrustedBy, UNLISTED_GRACE_SECS,
};
use crate::model::{Instant, Login, Sha};

/// The logins whose pushes and signed commits vouch for a head.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Trusted<'a> {
    /// The token's login (empty when unknown: then it vouches for nothing).
    pub owner: &'a str,
    pub agent: &'a [Login],
    /// The job's `trust`.
    pub trust: &'a [String],
    /// `agents.NAME.emails`: a commit whose verified signature is over one of them is the
    /// agent's.
    pub emails: &'a [String],
}

impl Trusted<'_> {
    /// Whether `login` is trusted.
    pub(crate) fn has(&self, login: &str) -> bool {
        if login.trim().is_empty() || Login::forge_actor(login).is_some() {
            return false;
        }
        let l = Login::new(login);
        (!self.owner.is_empty() && l.is(self.owner))
            || self.agent.iter().any(|a| a.is(login))
            || self.trust.iter().any(|t| l.is(t))
    }

    /// Whether a verified signature over `email` is a trusted login's: the email is one of the
    /// agent's, or a forge's no-reply address of a trusted login.
    pub(crate) fn has_email(&self, email: &str) -> bool {
        let email = email.trim();
        !email.is_empty()
            && (self.emails.iter().any(|e| e.eq_ignore_ascii_case(email))
                || noreply_login(email).is_some_and(|login| self.has(login)))
    }

    /// The logins besides the owner and the agent's emails, lowercased and sorted: when a
    /// later list lacks one of these, what was vouched under them is forgotten.
    pub(crate) fn basis(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .agent
            .iter()
            .map(|a| Login::bare(a.as_str()).to_ascii_lowercase())
            .chain(
                self.trust
                    .iter()
                    .map(|t| Login::bare(t).to_ascii_lowercase()),
            )
            .chain(self.emails.iter().map(|e| e.trim().to_ascii_lowercase()))
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// Whether the trust list narrowed since `before` was kept: one of its logins is gone.
pub(crate) fn narrowed(before: &[String], now: &[String]) -> bool {
    before.iter().any(|b| !now.contains(b))
}

/// The newest push the forge lists of `head`.
pub(crate) fn push_of<'a>(head: &Sha, pushes: &'a [Push]) -> Option<&'a Push> {
    pushes.iter().find(|p| &p.after == head)
}

/// Whether the pushes alone settle the verdict (a trusted login pushed the head), so the
/// commits need not be read.
pub(crate) fn push_settles(head: &Sha, pushes: &[Push], trusted: &Trusted<'_>) -> bool {
    push_of(head, pushes).is_some_and(|p| trusted.has(&p.actor))
}

/// Whether one commit vouches for itself: signed and verified, committed by a trusted login
/// (named by the forge, or by the committer email its verified signature is over), or by
/// `web-flow` (the web interface) for a trusted author.
fn signed_by_trusted(c: &SignedCommit, trusted: &Trusted<'_>) -> bool {
    let by = |l: &Option<String>| l.as_deref().is_some_and(|l| trusted.has(l));
    let web = c
        .committer_login
        .as_deref()
        .is_some_and(|l| Login::new("web-flow").is(l));
    let by_email = c
        .committer_email
        .as_deref()
        .is_some_and(|e| trusted.has_email(e));
    c.verified && (by(&c.committer_login) || by_email || (web && by(&c.author_login)))
}

/// Judges `head` on what the forge said. `earlier` is the verdict kept for the same head, if
/// any: an unlisted head's grace counts from its first judgement.
pub(crate) fn judge(
    head: &Sha,
    evidence: &Evidence,
    trusted: &Trusted<'_>,
    earlier: Option<&HeadTrust>,
    now: Instant,
) -> HeadTrust {
    let push = push_of(head, &evidence.pushes);
    let judged_at = earlier
        .filter(|e| &e.sha == head)
        .map_or(now, |e| e.judged_at);
    let signed = evidence
        .commits
        .as_ref()
        .is_some_and(|cs| !cs.is_empty() && cs.iter().all(|c| signed_by_trusted(c, trusted)));
    let verdict = match push {
        Some(p) if trusted.has(&p.actor) => TrustVerdict::Trusted(TrustedBy::Push(p.actor.clone())),
        _ if signed => TrustVerdict::Trusted(TrustedBy::Signatures),
        Some(p) => TrustVerdict::Untrusted {
            reason: format!("pushed by {}, who is not trusted", p.actor),
        },
        None if now - judged_at < Duration::seconds(UNLISTED_GRACE_SECS) => TrustVerdict::Unlisted,
        None => TrustVerdict::Untrusted {
            reason: format!(
                "no push of it was listed in {} minutes, and its commits are not all signed by trusted logins",
                UNLISTED_GRACE_SECS / 60
            ),
        },
    };
    HeadTrust {
        sha: head.clone(),
        verdict,
        pusher: push.map(|p| p.actor.clone()),
        pushed_at: push.and_then(|p| p.at),
        judged_at,
    }
}

/// The owner's word on `head`: trusted when they vouched for it (`vouched`) and the trust list
/// has not narrowed since.
pub(crate) fn owner_word(
    head: &Sha,
    vouched_heads: &[Sha],
    narrowed: bool,
    earlier: Option<&HeadTrust>,
    now: Instant,
) -> Option<HeadTrust> {
    (!narrowed && vouched_heads.contains(head)).then(|| vouched(head, earlier, now))
}

/// The verdict on a head the owner vouched for.
pub(crate) fn vouched(head: &Sha, earlier: Option<&HeadTrust>, now: Instant) -> HeadTrust {
    let earlier = earlier.filter(|e| &e.sha == head);
    HeadTrust {
        sha: head.clone(),
        verdict: TrustVerdict::Trusted(TrustedBy::Owner),
        pusher: earlier.and_then(|e| e.pusher.clone()),
        pushed_at: earlier.and_then(|e| e.pushed_at),
        judged_at: earlier.map_or(now, |e| e.judged_at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(secs: i64) -> Instant {
        chrono::Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
    }

    fn push(actor: &str, after: &str) -> Push {
        Push {
            actor: actor.into(),
            before: None,
            after: Sha(after.into()),
            at: Some(t(-30)),
        }
    }

    fn commit(verified: bool, author: &str, committer: &str) -> SignedCommit {
        SignedCommit {
            sha: Sha("c".into()),
            verified,
            author_login: Some(author.into()),
            committer_login: Some(committer.into()),
            committer_email: None,
        }
    }

    /// A commit as GitLab tells it: no logins, the committer email its signature is over.
    fn by_email(verified: bool, email: &str) -> SignedCommit {
        SignedCommit {
            sha: Sha("c".into()),
            verified,
            author_login: None,
            committer_login: None,
            committer_email: Some(email.into()),
        }
    }

    fn words(v: &TrustVerdict) -> String {
        match v {
            TrustVerdict::Trusted(by) => by.words(),
            TrustVerdict::Untrusted { reason } => format!("untrusted: {reason}"),
            TrustVerdict::Unlisted => "unlisted".into(),
        }
    }

    /// A row of [`who_vouches_for_a_head`]: what it shows, the evidence, seconds after the
    /// first judgement, and the verdict in words.
    type Case = (&'static str, Evidence, i64, &'static str);

    fn ev(pushes: Vec<Push>, commits: Option<Vec<SignedCommit>>) -> Evidence {
        Evidence { pushes, commits }
    }

    /// Pushes of the head: the newest one's pusher decides, and a forge's own actor vouches
    /// for nothing.
    fn push_cases() -> Vec<Case> {
        vec![
            (
                "the agent pushed it (REST spells [bot])",
                ev(vec![push("claude[bot]", "h")], None),
                0,
                "push by claude[bot]",
            ),
            (
                "the owner pushed it",
                ev(vec![push("OWNER", "h")], None),
                0,
                "push by OWNER",
            ),
            (
                "a trusted reviewer pushed it",
                ev(vec![push("reviewer", "h")], None),
                0,
                "push by reviewer",
            ),
            (
                "the newest push of the head counts",
                ev(vec![push("mallory", "h"), push("owner", "h")], None),
                0,
                "untrusted: pushed by mallory, who is not trusted",
            ),
            (
                "an outsider pushed it",
                ev(vec![push("mallory", "h")], None),
                0,
                "untrusted: pushed by mallory, who is not trusted",
            ),
            (
                "a push of another head says nothing",
                ev(vec![push("owner", "g")], None),
                0,
                "unlisted",
            ),
            (
                "github-actions pushing vouches for nothing",
                ev(vec![push("github-actions[bot]", "h")], None),
                0,
                "untrusted: pushed by github-actions[bot], who is not trusted",
            ),
        ]
    }

    /// Signed commits: every commit past the base verified, by a trusted login or over a
    /// trusted email.
    fn signature_cases() -> Vec<Case> {
        vec![
            (
                "signed, verified, committed by a trusted login",
                ev(vec![], Some(vec![commit(true, "x", "reviewer")])),
                0,
                "signatures",
            ),
            (
                "signatures vouch even for an outsider's push",
                ev(
                    vec![push("mallory", "h")],
                    Some(vec![commit(true, "x", "owner")]),
                ),
                0,
                "signatures",
            ),
            (
                "web-flow, verified, trusted author",
                ev(vec![], Some(vec![commit(true, "owner", "web-flow")])),
                0,
                "signatures",
            ),
            (
                "web-flow for an outsider",
                ev(vec![], Some(vec![commit(true, "mallory", "web-flow")])),
                0,
                "unlisted",
            ),
            (
                "one unverified commit",
                ev(
                    vec![],
                    Some(vec![
                        commit(true, "o", "owner"),
                        commit(false, "o", "owner"),
                    ]),
                ),
                0,
                "unlisted",
            ),
            (
                "signed by an outsider",
                ev(vec![], Some(vec![commit(true, "o", "mallory")])),
                0,
                "unlisted",
            ),
            ("no commits", ev(vec![], Some(vec![])), 0, "unlisted"),
            (
                "verified over one of the agent's emails (GitLab)",
                ev(vec![], Some(vec![by_email(true, "bot@example.com")])),
                0,
                "signatures",
            ),
            (
                "verified over a trusted login's no-reply email (GitLab)",
                ev(
                    vec![],
                    Some(vec![by_email(true, "17-reviewer@users.noreply.gitlab.com")]),
                ),
                0,
                "signatures",
            ),
            (
                "unverified over the agent's email",
                ev(vec![], Some(vec![by_email(false, "bot@example.com")])),
                0,
                "unlisted",
            ),
            (
                "verified over an outsider's email",
                ev(
                    vec![],
                    Some(vec![by_email(true, "18-mallory@users.noreply.gitlab.com")]),
                ),
                0,
                "unlisted",
            ),
        ]
    }

    /// Neither a push nor signatures: the grace before an unlisted head is refused.
    fn grace_cases() -> Vec<Case> {
        vec![
            (
                "unlisted for ten minutes",
                ev(vec![], None),
                UNLISTED_GRACE_SECS,
                "untrusted: no push of it was listed in 10 minutes, and its commits are not all signed by trusted logins",
            ),
            (
                "unlisted a little less",
                ev(vec![], None),
                UNLISTED_GRACE_SECS - 1,
                "unlisted",
            ),
        ]
    }

    #[test]
    fn who_vouches_for_a_head() {
        let agent = [Login::new("claude[bot]")];
        let trust = ["Reviewer".to_owned()];
        let emails = ["Bot@Example.com".to_owned()];
        let trusted = Trusted {
            owner: "owner",
            agent: &agent,
            trust: &trust,
            emails: &emails,
        };
        let head = Sha("h".into());
        let cases = push_cases()
            .into_iter()
            .chain(signature_cases())
            .chain(grace_cases());
        for (what, evidence, later, want) in cases {
            let first = judge(&head, &evidence, &trusted, None, t(0));
            let got = judge(&head, &evidence, &trusted, Some(&first), t(later));
            assert_eq!(words(&got.verdict), want, "{what}");
            assert_eq!(
                got.judged_at,
                t(0),
                "{what}: the grace counts from the first judgement"
            );
        }
    }

    #[test]
    fn the_push_is_kept_with_the_verdict_and_settles_alone_only_when_trusted() {
        let agent = [Login::new("fixer-bot")];
        let trusted = Trusted {
            owner: "",
            agent: &agent,
            trust: &[],
            emails: &[],
        };
        let head = Sha("h".into());
        let pushes = vec![push("fixer-bot", "h")];
        assert!(push_settles(&head, &pushes, &trusted));
        assert!(!push_settles(&head, &[push("mallory", "h")], &trusted));
        assert!(!trusted.has(""), "an unknown owner vouches for nothing");
        let got = judge(
            &head,
            &Evidence {
                pushes,
                commits: None,
            },
            &trusted,
            None,
            t(0),
        );
        assert_eq!(got.pusher.as_deref(), Some("fixer-bot"));
        assert_eq!(got.pushed_at, Some(t(-30)));
    }

    #[test]
    fn a_narrower_list_forgets() {
        let agent = [Login::new("Claude[bot]")];
        let trust = ["b".to_owned(), "a".to_owned()];
        let basis = Trusted {
            owner: "o",
            agent: &agent,
            trust: &trust,
            emails: &[" Bot@Example.com".to_owned()],
        }
        .basis();
        assert_eq!(basis, ["a", "b", "bot@example.com", "claude"]);
        let wider: Vec<String> = ["a", "b", "bot@example.com", "c", "claude"]
            .map(String::from)
            .into();
        assert!(!narrowed(&basis, &wider));
        assert!(narrowed(&basis, &["a".into(), "claude".into()]));
        let no_email: Vec<String> = ["a", "b", "claude"].map(String::from).into();
        assert!(narrowed(&basis, &no_email), "an email left the list");
    }
}
