//! Watched branches (a job's `branch: OWNER/REPO@BRANCH` entries), looked at on each run: the
//! due ones are read together per forge (GitHub: one request per hundred branches), `ci` is lit
//! while a mapped check fails on the head, and each failure on a trusted head goes to the
//! job's agent once per head and check as a `branch_failure` message. The head's trust is read
//! (the branch's pushes, then the signatures of the commits since the last trusted head when
//! no trusted push settles it) only when a failure would reach the agent and the owner has not
//! vouched for the head (`fix OWNER/REPO@BRANCH --head SHA`), and kept per head. A
//! branch is looked at again on the job's `poll_sec` while a mapped check runs or its head
//! waits to be listed, else on its `idle_poll_sec`.

use std::collections::BTreeMap;

use anyhow::Result;
use chrono::Duration;

use crate::app::App;
use crate::config::{Policy, Watch as Entry};
use crate::core::branch::{self, Failure};
use crate::core::trust::{self, Trusted};
use crate::forge::{BranchHead, Forge};
use crate::model::branch::{BranchMemory, BranchRef, BranchWatch};
use crate::model::message::{BRANCH_FAILURE, Channel, to_json};
use crate::model::trust::{Evidence, HeadTrust, TrustVerdict};
use crate::model::{FailedCheck, ForgeKind, Login, Sha};
use crate::store::{BranchLook, OutboxMessage};

/// What a job says of one of its branches.
struct Named {
    policy: Policy,
    /// `checks:`: the checks that count (empty: all).
    mapped: Vec<String>,
}

/// Brings the watched branches in line with the jobs, then looks at the due ones. Returns a
/// line per branch whose `ci` changed and per branch that could not be read.
pub fn look(app: &mut App) -> Result<Vec<String>> {
    let mut named = BTreeMap::new();
    let mut wanted = Vec::new();
    for job in &app.config.jobs {
        for entry in &job.watch {
            if let Entry::Branch(b) = entry {
                let r = BranchRef {
                    forge: b.forge,
                    repo: b.repo.clone(),
                    name: b.branch.clone(),
                };
                wanted.push((r.clone(), job.name.clone()));
                named.insert(
                    r,
                    Named {
                        policy: app.config.policy(Some(job)),
                        mapped: b.checks.clone(),
                    },
                );
            }
        }
    }
    app.store.sync_branch_watches(&wanted, app.now)?;
    let due: Vec<BranchWatch> = app
        .store
        .branch_watches()?
        .into_iter()
        .filter(|w| w.next_tick_at.is_none_or(|t| t <= app.now))
        .collect();
    let mut said = Vec::new();
    for kind in [ForgeKind::GitHub, ForgeKind::GitLab] {
        let group: Vec<&BranchWatch> = due.iter().filter(|w| w.branch.forge == kind).collect();
        if group.is_empty() {
            continue;
        }
        said.extend(look_at(app, kind, &group, &named)?);
    }
    Ok(said)
}

/// Reads `group` (branches of one forge) and records each.
fn look_at(
    app: &mut App,
    kind: ForgeKind,
    group: &[&BranchWatch],
    named: &BTreeMap<BranchRef, Named>,
) -> Result<Vec<String>> {
    let refs: Vec<BranchRef> = group.iter().map(|w| w.branch.clone()).collect();
    // The owner's login vouches for heads: asked (or taken from the kept viewer) only when
    // a failure could reach an agent.
    let agents = group.iter().any(|w| {
        named
            .get(&w.branch)
            .is_some_and(|n| n.policy.agent.is_some())
    });
    let owner = if agents {
        app.viewer(kind).ok().map(|v| v.login)
    } else {
        None
    };
    let heads = app
        .forges
        .get(kind, &app.config)
        .map_err(|e| e.clone())
        .and_then(|f| f.branch_heads(&refs).map_err(|e| e.to_string()));
    let mut said = Vec::new();
    for (i, w) in group.iter().enumerate() {
        let Some(n) = named.get(&w.branch) else {
            continue;
        };
        let look = match &heads {
            Err(e) => BranchLook {
                head_sha: w.head_sha.clone(),
                memory: w.memory.clone(),
                next_tick_at: app.now + secs(n.policy.poll_sec),
                last_error: Some(crate::secrets::mask(e)),
            },
            Ok(heads) => match &heads[i] {
                None => BranchLook {
                    head_sha: None,
                    memory: BranchMemory::default(),
                    next_tick_at: app.now + secs(n.policy.idle_poll_sec),
                    last_error: Some(format!(
                        "no branch {} on {}",
                        w.branch.short(),
                        kind.as_str()
                    )),
                },
                Some(head) => {
                    let forge = app
                        .forges
                        .get(kind, &app.config)
                        .map_err(|e| anyhow::anyhow!(e))?;
                    let (look, messages) =
                        judge(forge, &app.config, w, head, n, owner.as_deref(), app.now);
                    app.store.enqueue(&messages)?;
                    look
                }
            },
        };
        if look.memory.failing != w.memory.failing {
            said.push(match look.memory.failing.as_slice() {
                [] => format!("branch {}: ci cleared", w.branch.short()),
                failing => format!(
                    "branch {}: ci lit: {}",
                    w.branch.short(),
                    crate::core::report::failed(failing)
                ),
            });
        }
        if let (Some(e), None) = (&look.last_error, &w.last_error) {
            said.push(format!("error: branch {}: {e}", w.branch.short()));
        }
        app.store.record_branch_look(w.id, &look, app.now)?;
    }
    Ok(said)
}

/// A cadence in seconds, as the PRs' (a value past `i64` reads as five minutes).
fn secs(n: u64) -> Duration {
    Duration::seconds(i64::try_from(n).unwrap_or(300))
}

/// What one look at a read branch decides, with the messages for the agent.
fn judge(
    forge: &dyn Forge,
    config: &crate::config::Config,
    w: &BranchWatch,
    head: &BranchHead,
    n: &Named,
    owner: Option<&str>,
    now: crate::model::Instant,
) -> (BranchLook, Vec<OutboxMessage>) {
    let mut memory = w.memory.clone();
    memory.head_trust = memory.head_trust.filter(|t| t.sha == head.sha);
    let read = branch::read(&head.sha, &head.checks, &n.mapped, &memory);
    memory.failing.clone_from(&read.failing);
    memory.pending = read.pending;
    let mut look = BranchLook {
        head_sha: Some(head.sha.clone()),
        memory,
        next_tick_at: now
            + secs(if read.pending {
                n.policy.poll_sec
            } else {
                n.policy.idle_poll_sec
            }),
        last_error: None,
    };
    let (Some(agent), false) = (n.policy.agent.as_deref(), read.unsent.is_empty()) else {
        return (look, Vec::new());
    };
    let Some(owner) = owner else {
        look.last_error = Some("cannot learn the token's login".to_owned());
        look.next_tick_at = now + secs(n.policy.poll_sec);
        return (look, Vec::new());
    };
    let agent_logins: Vec<Login> = config
        .agent(agent)
        .map(|a| a.logins.iter().map(|l| Login::new(l.as_str())).collect())
        .unwrap_or_default();
    let agent_emails = config
        .agent(agent)
        .map(|a| a.emails.clone())
        .unwrap_or_default();
    let trusted = Trusted {
        owner,
        agent: &agent_logins,
        trust: &n.policy.trust,
        emails: &agent_emails,
    };
    let verdict = match head_verdict(forge, &w.branch, &head.sha, &mut look.memory, &trusted, now) {
        Ok(verdict) => verdict,
        Err(e) => {
            look.last_error = Some(format!("cannot read who pushed the head: {e}"));
            look.next_tick_at = now + secs(n.policy.poll_sec);
            return (look, Vec::new());
        }
    };
    look.memory.head_trust = Some(verdict.clone());
    if matches!(verdict.verdict, TrustVerdict::Trusted(_)) {
        look.memory.trusted_head = Some(head.sha.clone());
    }
    let by = match &verdict.verdict {
        TrustVerdict::Trusted(by) => by.words(),
        TrustVerdict::Unlisted => {
            look.next_tick_at = now + secs(n.policy.poll_sec);
            return (look, Vec::new());
        }
        TrustVerdict::Untrusted { .. } => return (look, Vec::new()),
    };
    let failed = failed_checks(forge, &w.branch.repo, head, &read.unsent, &n.policy);
    let url = w.branch.url();
    let message = branch::message(
        &Failure {
            branch: &w.branch,
            url: &url,
            head: &head.sha,
            agent,
            owner,
            trusted_by: &by,
            checks: &failed,
        },
        now,
    );
    let Ok(payload) = to_json(&message) else {
        return (look, Vec::new());
    };
    branch::mark_sent(&mut look.memory, &head.sha, &read.unsent);
    let outbox = OutboxMessage {
        id: message.id.clone(),
        pr: w.branch.url(),
        channel: Channel::Agent(agent.to_owned()).to_string(),
        kind: BRANCH_FAILURE.to_owned(),
        subject: format!(
            "{}: {}",
            w.branch.short(),
            crate::core::report::failed(&read.unsent)
        ),
        payload,
        created_at: now,
    };
    (look, vec![outbox])
}

/// The verdict on the branch's head: the owner's word; the one kept for this head; or one
/// judged on the branch's pushes and, when no trusted push settles it, on the signatures of the
/// commits since the newest trusted head (the head commit alone when there is none). What was
/// kept under a trust list that has since narrowed is forgotten first.
fn head_verdict(
    forge: &dyn Forge,
    branch: &BranchRef,
    head: &Sha,
    memory: &mut BranchMemory,
    trusted: &Trusted<'_>,
    now: crate::model::Instant,
) -> Result<HeadTrust, crate::forge::ForgeError> {
    let basis = trusted.basis();
    if trust::narrowed(&memory.trust_basis, &basis) {
        memory.vouched_heads.clear();
        memory.head_trust = None;
        memory.trusted_head = None;
    }
    memory.trust_basis = basis;
    let kept = memory.head_trust.clone();
    if let Some(t) = trust::owner_word(head, &memory.vouched_heads, false, kept.as_ref(), now) {
        return Ok(t);
    }
    if let Some(kept) = kept
        .as_ref()
        .filter(|k| !matches!(k.verdict, TrustVerdict::Unlisted))
    {
        return Ok(kept.clone());
    }
    let pushes = forge.branch_pushes(branch)?;
    let commits = if trust::push_settles(head, &pushes, trusted) {
        None
    } else {
        forge.branch_signed_commits(branch, memory.trusted_head.as_ref(), head)?
    };
    let evidence = Evidence { pushes, commits };
    Ok(trust::judge(head, &evidence, trusted, kept.as_ref(), now))
}

/// The failed checks `names` on `head`, each with the cleaned, masked tail of its log.
fn failed_checks(
    forge: &dyn Forge,
    repo: &str,
    head: &BranchHead,
    names: &[String],
    policy: &Policy,
) -> Vec<FailedCheck> {
    crate::core::checks::newest(&head.checks)
        .into_iter()
        .filter(|c| names.contains(&c.name))
        .take(5)
        .map(|c| {
            let raw = c
                .job_id
                .and_then(|job| forge.job_log(repo, job).ok().flatten())
                .unwrap_or_default();
            let tail = crate::core::logs::tail(
                &raw,
                policy.log_tail_lines,
                policy.log_tail_bytes,
                crate::secrets::mask,
            );
            super::detect::failed_check(c, tail, crate::model::Classification::Real, None)
        })
        .collect()
}
