//! A watched branch (a job's `branch: OWNER/REPO@BRANCH` entry): which branch, what its head
//! and checks were at the last look, and what was sent about them.

use serde::{Deserialize, Serialize};

use super::trust::HeadTrust;
use super::{ForgeKind, Instant, Sha};

/// A branch of a repository on a forge.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BranchRef {
    pub forge: ForgeKind,
    /// `owner/name` on GitHub, `group/…/project` on GitLab.
    pub repo: String,
    pub name: String,
}

impl BranchRef {
    /// `octo/app@main`, as a job names it.
    pub fn short(&self) -> String {
        format!("{}@{}", self.repo, self.name)
    }

    /// The branch's web address under `roots`.
    pub fn url_on(&self, roots: &super::web::WebRoots) -> String {
        let root = roots.of(self.forge);
        match self.forge {
            ForgeKind::GitHub => format!("{root}/{}/tree/{}", self.repo, self.name),
            ForgeKind::GitLab => format!("{root}/{}/-/tree/{}", self.repo, self.name),
        }
    }
}

/// What the branch's row keeps between looks (stored as JSON; every field has a default, so
/// a row written by an older version reads).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct BranchMemory {
    /// The mapped checks failing on the head at the last look: `ci` is lit while any is.
    pub failing: Vec<String>,
    /// Some mapped check on the head had not finished at the last look.
    pub pending: bool,
    /// `head:check` of every failure already sent to the agent: each is sent once.
    pub sent: Vec<String>,
    /// The verdict on the head's trust, kept until the head moves.
    pub head_trust: Option<HeadTrust>,
    /// The newest head judged trusted: the signatures of the commits since it vouch for the
    /// next head.
    pub trusted_head: Option<Sha>,
    /// Heads the owner vouched for (`fix OWNER/REPO@BRANCH --head SHA`).
    pub vouched_heads: Vec<Sha>,
    /// The trusted logins (besides the owner) what is kept was judged under: when one of them
    /// leaves the lists, the verdict, the trusted head and the vouched heads are forgotten.
    pub trust_basis: Vec<String>,
}

/// One watched branch as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchWatch {
    pub id: i64,
    pub branch: BranchRef,
    /// The job whose entry names it.
    pub job: String,
    pub head_sha: Option<Sha>,
    pub memory: BranchMemory,
    pub next_tick_at: Option<Instant>,
    pub last_tick_at: Option<Instant>,
    pub last_error: Option<String>,
}

impl BranchWatch {
    /// Whether `ci` is lit: a mapped check fails on the head.
    pub fn ci(&self) -> bool {
        !self.memory.failing.is_empty()
    }

    /// How the head is vouched for, when it was judged trusted.
    pub fn trusted_by(&self) -> Option<String> {
        super::trust::trusted_by(
            self.head_sha.as_ref(),
            &self.memory.vouched_heads,
            self.memory.head_trust.as_ref(),
        )
    }
}
