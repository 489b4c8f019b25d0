//! A chunk's stage between its reads and its acting phase: once its failed checks' logs are
//! back, each PR's read is decided once ahead, exactly as the acting phase will first decide
//! it (see [`super::pr::ahead_jobs`]), and what those decisions need from the forge is
//! asked on the read pool while this thread goes on with other chunks: the evidence of who
//! pushed a head whose failure or conflict would reach the agent ([`Job`]), its commits'
//! signatures taken from the chunk's annotations read where they were listed there
//! ([`ask`]). The chunk is acted on when all its jobs are back, each PR handed its answers
//! ([`PrAhead`]).
//!
//! The decisions ahead read nothing from the forge (a PR whose detection would is left to the
//! acting phase), and an answer is used only for what it was asked about: evidence only for
//! the head it was read for, so a kept read that is read again in full onto a moved head reads
//! that head's own evidence, at most once per head and tick, as it would without this stage.

use std::collections::BTreeMap;

use super::detect;
use crate::app::SharedForge;
use crate::config::Policy;
use crate::core::trust::{self, Trusted};
use crate::forge::{CheckRunRef, CommitsAsk, Forge, ForgeError};
use crate::model::trust::{Evidence, SignedCommit, TrustVerdict};
use crate::model::watch::Watch;
use crate::model::{Login, Sha, Snapshot};

/// What the forge says of how `snap`'s head got there: the pushes of its branch and, when no
/// push by a `trusted` login settles it, the signatures of its commits (`listed`, when they
/// were listed for this head with the chunk's annotations, else read now).
pub(super) fn evidence(
    forge: &dyn Forge,
    snap: &Snapshot,
    trusted: &Trusted<'_>,
    listed: Option<Vec<SignedCommit>>,
) -> Result<Evidence, ForgeError> {
    let pushes = forge.pushes(snap)?;
    let commits = if trust::push_settles(&snap.head.sha, &pushes, trusted) {
        None
    } else {
        match listed {
            Some(listed) => Some(listed),
            None => forge.signed_commits(snap)?,
        }
    };
    Ok(Evidence { pushes, commits })
}

/// A chunk's PR whose commits are listed with its annotations: its watch id and the ask.
pub(super) type Ask = (i64, CommitsAsk);

/// The commits listed for a chunk's PRs: watch id, the head they were listed for, the commits.
pub(super) type Listed = Vec<(i64, Sha, Vec<SignedCommit>)>;

/// The ask for the commits of `watch`'s PR on `snap`'s head, when the evidence on that head
/// may be read this tick: the PR has an agent, and its head has neither the owner's word nor
/// a settled verdict kept (a head the forge listed no push of yet is judged again). A guess
/// made before the decision: a PR it leaves out has its commits read with its evidence, and
/// one whose evidence is not read has only made the query longer.
pub(super) fn ask(watch: &Watch, snap: &Snapshot, policy: &Policy) -> Option<Ask> {
    let m = &watch.status.memory;
    let head = &snap.head.sha;
    let settled = m
        .head_trust
        .as_ref()
        .is_some_and(|t| &t.sha == head && !matches!(t.verdict, TrustVerdict::Unlisted));
    let wanted = policy.agent.is_some() && !settled && !m.vouched_heads.contains(head);
    wanted.then(|| {
        let ask = CommitsAsk {
            pr: snap.pr.clone(),
            head: head.clone(),
        };
        (watch.id, ask)
    })
}

/// The annotations of `runs` and the commits `asks` name, in one read (see
/// [`detect::read_notes_and_commits`]): those listed, by watch id.
pub(super) fn read_notes(
    forge: &dyn Forge,
    runs: &[CheckRunRef],
    asks: Vec<Ask>,
) -> (detect::Notes, Listed) {
    let prs: Vec<CommitsAsk> = asks.iter().map(|(_, a)| a.clone()).collect();
    let (notes, listed) = detect::read_notes_and_commits(forge, runs, &prs);
    let listed = asks
        .into_iter()
        .zip(listed)
        .filter_map(|((watch, ask), commits)| Some((watch, ask.head, commits?)))
        .collect();
    (notes, listed)
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
/// head of `snapshot` (see [`evidence`]), with the commits listed for that head, if they
/// were. A chunk's armings are asked apart ([`super::arm::Line`]): they are writes, with
/// intents recorded before they go out.
pub(super) struct Job {
    pub(super) watch: i64,
    pub(super) forge: SharedForge,
    pub(super) snapshot: Box<Snapshot>,
    pub(super) vouchers: Vouchers,
    pub(super) listed: Option<Vec<SignedCommit>>,
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
        evidence: evidence(
            &*job.forge,
            &job.snapshot,
            &job.vouchers.trusted(),
            job.listed,
        ),
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

/// A chunk's answers, by watch id, and the commits listed with its annotations.
#[derive(Debug, Default)]
pub(super) struct Answers {
    by_watch: BTreeMap<i64, PrAhead>,
    listed: BTreeMap<i64, (Sha, Vec<SignedCommit>)>,
}

impl Answers {
    /// The commits listed with the chunk's annotations.
    pub(super) fn listed(&mut self, listed: Listed) {
        for (watch, head, commits) in listed {
            self.listed.insert(watch, (head, commits));
        }
    }

    /// The commits listed for `watch`, when they were listed for `head`: for its evidence job.
    pub(super) fn take_listed(&mut self, watch: i64, head: &Sha) -> Option<Vec<SignedCommit>> {
        self.listed
            .remove(&watch)
            .filter(|(listed_for, _)| listed_for == head)
            .map(|(_, commits)| commits)
    }

    pub(super) fn add(&mut self, done: Done) {
        self.by_watch.entry(done.watch).or_default().evidence = Some((done.head, done.evidence));
    }

    /// What was read ahead for the PR of `watch` (nothing, for a PR none was read for).
    pub(super) fn take(&mut self, watch: i64) -> PrAhead {
        self.by_watch.remove(&watch).unwrap_or_default()
    }
}
