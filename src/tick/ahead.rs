//! A chunk's stage between its reads and its acting phase: once its failed checks' logs are
//! back, each PR's read is decided once ahead, exactly as the acting phase will first decide
//! it (see [`super::pr::ahead_jobs`]), and what those decisions need from the forge is
//! asked on the read pool while this thread goes on with other chunks: the evidence of who
//! pushed a head whose failure or conflict would reach the agent ([`Job`]). The
//! chunk is acted on when all its jobs are back, each PR handed its answers ([`PrAhead`]).
//!
//! The decisions ahead read nothing from the forge (a PR whose detection would is left to the
//! acting phase), and an answer is used only for what it was asked about: evidence only for
//! the head it was read for, so a kept read that is read again in full onto a moved head reads
//! that head's own evidence, at most once per head and tick, as it would without this stage.

use std::collections::BTreeMap;

use crate::app::SharedForge;
use crate::core::trust::{self, Trusted};
use crate::forge::{Forge, ForgeError};
use crate::model::trust::Evidence;
use crate::model::{Login, Sha, Snapshot};

/// What the forge says of how `snap`'s head got there: the pushes of its branch and, when no
/// push by a `trusted` login settles it, the signatures of its commits.
pub(super) fn evidence(
    forge: &dyn Forge,
    snap: &Snapshot,
    trusted: &Trusted<'_>,
) -> Result<Evidence, ForgeError> {
    let pushes = forge.pushes(snap)?;
    let commits = if trust::push_settles(&snap.head.sha, &pushes, trusted) {
        None
    } else {
        forge.signed_commits(snap)?
    };
    Ok(Evidence { pushes, commits })
}

/// The logins whose pushes and signatures vouch for a head (a [`Trusted`] a pool thread owns).
#[derive(Debug, Clone)]
pub(super) struct Vouchers {
    owner: String,
    agent: Vec<Login>,
    trust: Vec<String>,
    emails: Vec<String>,
}

impl Vouchers {
    pub(super) fn of(t: &Trusted<'_>) -> Self {
        Vouchers {
            owner: t.owner.to_owned(),
            agent: t.agent.to_vec(),
            trust: t.trust.to_vec(),
            emails: t.emails.to_vec(),
        }
    }

    fn trusted(&self) -> Trusted<'_> {
        Trusted {
            owner: &self.owner,
            agent: &self.agent,
            trust: &self.trust,
            emails: &self.emails,
        }
    }
}

/// A chunk's job for a pool thread, about one of its PRs (by watch id): the evidence on the
/// head of `snapshot` (see [`evidence`]). A chunk's armings are asked apart
/// ([`super::arm::Line`]): they are writes, with intents recorded before they go out.
pub(super) struct Job {
    pub(super) watch: i64,
    pub(super) forge: SharedForge,
    pub(super) snapshot: Box<Snapshot>,
    pub(super) vouchers: Vouchers,
}

/// A job's answer: the evidence read for `head`, or why it could not be.
pub(super) struct Done {
    watch: i64,
    head: Sha,
    evidence: Result<Evidence, ForgeError>,
}

/// Runs `job` (on a pool thread).
pub(super) fn work(job: Job) -> Done {
    Done {
        watch: job.watch,
        evidence: evidence(&*job.forge, &job.snapshot, &job.vouchers.trusted()),
        head: job.snapshot.head.sha,
    }
}

/// What was read ahead for one PR of a chunk.
#[derive(Debug, Default)]
pub(super) struct PrAhead {
    /// The evidence read for this head (or why it could not be), for its first decision that
    /// asks for it on this head.
    pub(super) evidence: Option<(Sha, Result<Evidence, ForgeError>)>,
}

/// A chunk's answers, by watch id.
#[derive(Debug, Default)]
pub(super) struct Answers {
    by_watch: BTreeMap<i64, PrAhead>,
}

impl Answers {
    pub(super) fn add(&mut self, done: Done) {
        self.by_watch.entry(done.watch).or_default().evidence = Some((done.head, done.evidence));
    }

    /// What was read ahead for the PR of `watch` (nothing, for a PR none was read for).
    pub(super) fn take(&mut self, watch: i64) -> PrAhead {
        self.by_watch.remove(&watch).unwrap_or_default()
    }
}
