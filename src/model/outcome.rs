//! What the forge answered to one of a plan's writes, as plain data: the shell turns a forge
//! client's error into an [`Outcome`], and the core (`core::outcome`) says what it does to the
//! PR's state.

use std::fmt;

/// Why a forge would not turn auto-merge on. Each forge client classifies its own answers;
/// callers match on the variant, never on the words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Nothing is left to wait for: the PR can be merged now (GitHub: "clean status" or
    /// "unstable status" with no required checks; GitLab: no pipeline, and mergeable).
    AlreadyClean(String),
    /// The repository or branch offers no auto-merge (GitHub: "not allowed", or no
    /// protection rules): pr-monitor merges itself.
    Unavailable(String),
    /// Anything else, in the forge's words: try again next tick.
    Other(String),
}

impl Refusal {
    /// The forge's own words.
    pub fn message(&self) -> &str {
        match self {
            Refusal::AlreadyClean(m) | Refusal::Unavailable(m) | Refusal::Other(m) => m,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// The answer to one planned action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Done as asked.
    Done,
    /// Not asked at all: its intent could not be recorded first (why).
    NotAsked(String),
    /// The forge failed or refused.
    Failed(Failure),
    /// A re-run of several workflow runs: the runs the forge did not re-run (none: all did).
    RunsFailed(Vec<(u64, Failure)>),
}

/// A write the forge failed or refused: its words, and what they mean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The error as it is shown (`conflict: …`, `forge unavailable: …`).
    pub said: String,
    pub kind: FailureKind,
}

/// What a failed write means for the PR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureKind {
    /// The branch conflicts with its base (the forge's words).
    Conflict(String),
    /// Auto-merge was refused, for a reason the rules act on.
    AutoMergeRefused(Refusal),
    /// A 5xx, a timeout, an unreachable forge or a spent rate limit: whether the write took
    /// effect is unknown, and the tick is incomplete.
    Unknown,
    /// Refused for a reason asking again this tick would not change (a moved head, a 422).
    Refused,
}
