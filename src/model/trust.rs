//! Who vouches for a head: what the forge says about how it got there (its pushes, its
//! commits' signatures), and the verdict the core keeps per head.

use serde::{Deserialize, Serialize};

use super::{Instant, Sha};

/// A push the forge recorded of a branch (GitHub's repository activity, GitLab's push events).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Push {
    /// Who pushed, as the forge authenticated them.
    pub actor: String,
    pub before: Option<Sha>,
    pub after: Sha,
    pub at: Option<Instant>,
}

/// One commit past the base, as the forge verified it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedCommit {
    pub sha: Sha,
    /// The forge verified its signature.
    pub verified: bool,
    pub author_login: Option<String>,
    pub committer_login: Option<String>,
    /// The committer email the verified signature is over, where the forge names no login
    /// (GitLab).
    #[serde(default)]
    pub committer_email: Option<String>,
}

/// What the forge says about how the head got there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Evidence {
    /// Pushes of the head branch whose `after` is the head, newest first.
    pub pushes: Vec<Push>,
    /// The PR's commits past the base, when they were read (only when no push settles it).
    pub commits: Option<Vec<SignedCommit>>,
}

/// How a trusted head is vouched for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustedBy {
    /// The forge saw this trusted login push it.
    Push(String),
    /// Every commit past the base is signed, verified and committed by a trusted login.
    Signatures,
    /// The owner vouched for this exact head (`fix --head`, `watch add --trust-head`).
    Owner,
}

impl TrustedBy {
    /// The words the inbox message and `status` use: `push by fixer-bot`, `signatures`,
    /// `vouched by the owner`.
    pub fn words(&self) -> String {
        match self {
            TrustedBy::Push(login) => format!("push by {login}"),
            TrustedBy::Signatures => "signatures".to_owned(),
            TrustedBy::Owner => "vouched by the owner".to_owned(),
        }
    }
}

/// The verdict on one head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustVerdict {
    Trusted(TrustedBy),
    /// Nothing may reach the agent on this head; `reason` says why, in words.
    Untrusted {
        reason: String,
    },
    /// The forge lists no push of the head yet: judged again until
    /// [`UNLISTED_GRACE_SECS`] after the first judgement.
    Unlisted,
}

/// How `head` is vouched for, in words (`push by fixer-bot`, `signatures`, `vouched by the
/// owner`), when the owner vouched for it or the verdict kept for it is trusted; else `None`.
pub fn trusted_by(head: Option<&Sha>, vouched: &[Sha], kept: Option<&HeadTrust>) -> Option<String> {
    let head = head?;
    if vouched.contains(head) {
        return Some(TrustedBy::Owner.words());
    }
    match kept {
        Some(t) if &t.sha == head => match &t.verdict {
            TrustVerdict::Trusted(by) => Some(by.words()),
            _ => None,
        },
        _ => None,
    }
}

/// How long a head the forge lists no push of yet is judged again before it is untrusted.
pub const UNLISTED_GRACE_SECS: i64 = 600;

/// The verdict kept for a head, with what the forge said of its push.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadTrust {
    pub sha: Sha,
    pub verdict: TrustVerdict,
    /// Who pushed it, when the forge listed the push.
    #[serde(default)]
    pub pusher: Option<String>,
    /// When it was pushed, when the forge listed the push.
    #[serde(default)]
    pub pushed_at: Option<Instant>,
    /// When it was first judged (the unlisted grace counts from here).
    pub judged_at: Instant,
}
