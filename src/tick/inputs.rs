//! What a PR's tick needs besides its snapshot and stored state ([`PrInputs`]): the agent's
//! logins and emails, the owner and how the forge's commits name them, what the PR already
//! handled and its open intents; and the digest of the context a quiet decision is made in.

use std::collections::BTreeMap;

use super::failure::TickFailure;
use super::settle;
use crate::app::App;
use crate::config::Policy;
use crate::core::decide::Context;
use crate::model::Login;
use crate::model::watch::Watch;

/// What a PR's tick needs besides its snapshot. A failed read of any of these fails that PR's
/// tick: guessing (nothing seen, no owner, no agent logins) would re-send or mis-route.
#[derive(Debug)]
pub(super) struct PrInputs {
    pub(super) agent_logins: Vec<Login>,
    pub(super) agent_emails: Vec<String>,
    pub(super) owner: String,
    /// How the forge's commits for the owner name it (to tell a recorded update's head).
    pub(super) commits_as: crate::model::viewer::Committer,
    pub(super) seen: BTreeMap<(String, String), String>,
    /// The PR's recorded intents no read has reconciled yet.
    pub(super) intents: Vec<crate::model::intent::Intent>,
}

impl PrInputs {
    /// The digest of the context a decision on these inputs is made in (see
    /// [`settle::Context`]), under the configuration of digest `config`.
    pub(super) fn context_digest(&self, config: u64, update_turn: bool) -> u64 {
        settle::Context {
            config,
            owner: &self.owner,
            commits_as: &self.commits_as,
            agent_logins: &self.agent_logins,
            agent_emails: &self.agent_emails,
            update_turn,
        }
        .digest()
    }

    /// The decision's context on these inputs: no evidence read yet.
    pub(super) fn context<'a>(
        &'a self,
        policy: &'a Policy,
        now: crate::model::Instant,
        update_turn: bool,
        fix_asked: bool,
    ) -> Context<'a> {
        Context {
            policy,
            now,
            agent_logins: &self.agent_logins,
            agent_emails: &self.agent_emails,
            evidence: None,
            owner: &self.owner,
            commits_as: &self.commits_as,
            update_turn,
            seen: &self.seen,
            fix_asked,
            intents: &self.intents,
            held: crate::secrets::mask,
        }
    }
}

/// What a chunk loaded for its PRs' inputs, each an error's text when it could not be
/// loaded: their open intents by watch id, what they already handled by the PR's address.
#[derive(Debug, Clone, Copy)]
pub(super) struct ChunkLoads<'a> {
    pub(super) intents: &'a Result<BTreeMap<i64, Vec<crate::model::intent::Intent>>, String>,
    pub(super) seen: &'a Result<BTreeMap<String, crate::store::Seen>, String>,
}

/// A PR's inputs; with `chunk_seen` false (a settled read) what it already handled is left
/// empty: it is loaded only if the PR is decided after all.
pub(super) fn pr_inputs(
    app: &mut App,
    watch: &Watch,
    policy: &Policy,
    chunk: ChunkLoads<'_>,
    chunk_seen: bool,
) -> Result<PrInputs, TickFailure> {
    if let Some(damage) = &watch.unreadable {
        return Err(TickFailure::Damaged(format!(
            "the stored state of this PR cannot be read ({damage}); it is left as it is: \
             `watch rm` then `watch add` starts it afresh"
        )));
    }
    let intents = match chunk.intents {
        Ok(by_watch) => by_watch.get(&watch.id).cloned().unwrap_or_default(),
        Err(e) => {
            return Err(TickFailure::Store(anyhow::anyhow!(
                "cannot read the recorded intents: {e}"
            )));
        }
    };
    let seen = match chunk.seen {
        _ if !chunk_seen => crate::store::Seen::new(),
        Ok(by_pr) => by_pr.get(&watch.pr.url()).cloned().unwrap_or_default(),
        Err(e) => {
            return Err(TickFailure::Store(anyhow::anyhow!(
                "cannot read what was already handled: {e}"
            )));
        }
    };
    inputs_of(app, watch.pr.forge, policy, intents, seen)
}

/// The digest of the context a quiet decision on a PR of `forge` under `policy` with no
/// recorded intent is made in (see [`settle::Context`]), under the configuration of digest
/// `config`; or why its inputs cannot be had.
pub(super) fn quiet_context(
    app: &mut App,
    forge: crate::model::ForgeKind,
    policy: &Policy,
    (config, update_turn): (u64, bool),
) -> Result<u64, TickFailure> {
    let inputs = inputs_of(app, forge, policy, Vec::new(), crate::store::Seen::new())?;
    Ok(inputs.context_digest(config, update_turn))
}

/// The inputs of a PR of `forge` under `policy`, with its recorded `intents` and what it
/// already handled (`seen`).
fn inputs_of(
    app: &mut App,
    forge: crate::model::ForgeKind,
    policy: &Policy,
    intents: Vec<crate::model::intent::Intent>,
    seen: crate::store::Seen,
) -> Result<PrInputs, TickFailure> {
    let (agent_logins, agent_emails) = match policy.agent.as_deref() {
        Some(name) => {
            let agent = app.config.agent(name).map_err(TickFailure::Setup)?;
            (
                agent
                    .logins
                    .iter()
                    .map(|l| Login::new(l.as_str()))
                    .collect(),
                agent.emails.clone(),
            )
        }
        None => (Vec::new(), Vec::new()),
    };
    // The owner's login matters only where an agent may be written to, or where a recorded
    // branch update must be told from someone else's push.
    let updating = intents
        .iter()
        .any(|i| i.kind == crate::model::intent::IntentKind::UpdateBranch);
    let viewer = if policy.agent.is_some() || updating {
        app.viewer(forge)?
    } else {
        crate::model::viewer::Viewer::by_login("")
    };
    Ok(PrInputs {
        agent_logins,
        agent_emails,
        owner: viewer.login,
        commits_as: viewer.commits_as,
        seen,
        intents,
    })
}
