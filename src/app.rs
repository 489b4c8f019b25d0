//! The context every command runs in: the config, the database, the forge clients (built,
//! and their tokens read, on first use), the logical clock and the output mode. No dispatch
//! and no printing: the commands take an `&mut App` (see `commands`).

use anyhow::Result;

use crate::config::{Config, Policy, TokenKeys as _};
use crate::forge::github::GitHub;
use crate::forge::gitlab::GitLab;
use crate::forge::http::Usage;
use crate::forge::{Forge, SnapshotRequest};
use crate::model::reference::PrArg;
use crate::model::watch::Watch;
use crate::model::{ForgeKind, Instant, PrRef, Snapshot};
use crate::store::Store;

/// A usage or configuration error: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct UsageError(pub String);

pub(crate) fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

/// Nothing could be read: the forge the command needed refused its token, could not be
/// reached, or its client could not be built (the token unreadable). Exit code 3, as a run's.
#[derive(Debug, thiserror::Error)]
#[error("nothing could be read")]
pub(crate) struct NothingRead;

/// `e` as a command's error: said as [`NothingRead`] (exit 3) when it carries a forge's client
/// that could not be built or a forge that refused the token or could not be reached (see
/// [`ClientFailure::cuts_off`]), else as it is. A write that fails after the command's read
/// was answered (`merge --now`, `rerun`) is said in words: something was read, so it exits 1.
pub(crate) fn nothing_read_if_cut_off(e: anyhow::Error) -> anyhow::Error {
    let cut_off = e.chain().any(|c| {
        c.downcast_ref::<ClientFailure>()
            .is_some_and(ClientFailure::cuts_off)
            || c.downcast_ref::<crate::forge::ForgeError>()
                .is_some_and(crate::forge::ForgeError::cuts_off)
    });
    if cut_off { e.context(NothingRead) } else { e }
}

impl ClientFailure {
    /// Whether this failure leaves nothing read: the setup, or a forge that refused the token
    /// or could not be reached ([`crate::forge::ForgeError::cuts_off`]).
    pub(crate) fn cuts_off(&self) -> bool {
        match self {
            ClientFailure::Setup(_) => true,
            ClientFailure::Forge(e) => e.cuts_off(),
        }
    }
}

/// Reads a forge token; the error names where it was looked for, never a value.
fn read_token(source: &crate::config::TokenSource, forge: &str) -> Result<String, String> {
    source
        .resolve()
        .map(|t| t.expose().to_owned())
        .map_err(|e| format!("{forge} token: {e:#}"))
}

/// The GitHub client `config` asks for: with its token, or signed in as its App (the App's
/// key read and parsed now, so every new client reads the key file afresh); and the hash of
/// the credential it was built with.
fn github_client(config: &crate::config::GitHubConfig) -> Result<(GitHub, String), String> {
    let graphql_url = config.graphql_url();
    let limits =
        crate::forge::deadline::Limits::from_secs(config.timeout_sec, config.run_budget_sec);
    let client = match &config.app {
        None => {
            let token = read_token(&config.token(), "GitHub")?;
            let credential = credential_hash(&token);
            GitHub::new(&config.api_url, &graphql_url, token).map(|c| (c, credential))
        }
        Some(app) => {
            let key = app_key(app)?;
            let auth = crate::forge::github::app_auth::AppAuth::new(&config.api_url, app.id, key);
            GitHub::with_app(&config.api_url, &graphql_url, auth)
                .map(|c| (c, credential_hash(&format!("app {}", app.id))))
        }
    };
    client.map(|(c, credential)| (c.with_limits(limits), credential))
}

/// Reads and parses a GitHub App's private key; the error names where it was read from.
pub(crate) fn app_key(
    app: &crate::config::GitHubAppConfig,
) -> Result<crate::forge::github::app_key::AppKey, String> {
    let pem = app.read_private_key()?;
    crate::forge::github::app_key::AppKey::from_pem(pem.expose())
        .map_err(|e| format!("GitHub App {}: {e}", app.key_source()))
}

/// A short hash that tells one credential from another and gives nothing of it away.
fn credential_hash(credential: &str) -> String {
    crate::core::hash::fnv64(&format!("pr-monitor credential\n{credential}"))
}

/// A forge client threads can share: a run's parallel reads and its acting thread use one.
pub(crate) type SharedForge = std::sync::Arc<dyn Forge + Send + Sync>;

/// Why a forge's client could not answer: it could not be built (no token, an unreadable
/// key: the setup), or the forge itself failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientFailure {
    #[error("{0}")]
    Setup(String),
    #[error(transparent)]
    Forge(#[from] crate::forge::ForgeError),
}

/// The forge clients of a run, built (and their tokens read) on first use.
#[derive(Debug, Default)]
pub struct Forges {
    github: Option<Result<std::sync::Arc<GitHub>, String>>,
    gitlab: Option<Result<std::sync::Arc<GitLab>, String>>,
    viewers: std::collections::BTreeMap<ForgeKind, crate::model::viewer::Viewer>,
    /// A hash of the credential each client was built with (never the credential): a token
    /// that changed is told apart without keeping it.
    credentials: std::collections::BTreeMap<ForgeKind, String>,
    /// Clients dropped by [`Forges::forget`]: a read under way may still be using one, so
    /// what they used is summed when asked.
    retired: Vec<(ForgeKind, UsageOf)>,
    /// The usage already handed out by [`Forges::take_usage`].
    taken: std::collections::BTreeMap<ForgeKind, Usage>,
}

/// A dropped client, kept for its usage.
#[derive(Debug)]
enum UsageOf {
    GitHub(std::sync::Arc<GitHub>),
    GitLab(std::sync::Arc<GitLab>),
}

impl Forges {
    /// The client for `kind`.
    pub fn get(&mut self, kind: ForgeKind, config: &Config) -> Result<&dyn Forge, String> {
        match kind {
            ForgeKind::GitHub => self
                .github(config)
                .as_ref()
                .map(|c| &**c as &dyn Forge)
                .map_err(Clone::clone),
            ForgeKind::GitLab => self
                .gitlab(config)
                .as_ref()
                .map(|c| &**c as &dyn Forge)
                .map_err(Clone::clone),
        }
    }

    /// The client for `kind`, to hand to another thread.
    pub fn shared(&mut self, kind: ForgeKind, config: &Config) -> Result<SharedForge, String> {
        match kind {
            ForgeKind::GitHub => self
                .github(config)
                .as_ref()
                .map(|c| std::sync::Arc::clone(c) as SharedForge)
                .map_err(Clone::clone),
            ForgeKind::GitLab => self
                .gitlab(config)
                .as_ref()
                .map(|c| std::sync::Arc::clone(c) as SharedForge)
                .map_err(Clone::clone),
        }
    }

    fn github(&mut self, config: &Config) -> &Result<std::sync::Arc<GitHub>, String> {
        let credentials = &mut self.credentials;
        self.github.get_or_insert_with(|| {
            let (client, credential) = github_client(&config.github)?;
            credentials.insert(ForgeKind::GitHub, credential);
            Ok(std::sync::Arc::new(client))
        })
    }

    fn gitlab(&mut self, config: &Config) -> &Result<std::sync::Arc<GitLab>, String> {
        let credentials = &mut self.credentials;
        self.gitlab.get_or_insert_with(|| {
            let token = read_token(&config.gitlab.token(), "GitLab")?;
            credentials.insert(ForgeKind::GitLab, credential_hash(&token));
            GitLab::new(&config.gitlab.api_url, token)
                .map(|c| {
                    c.with_limits(crate::forge::deadline::Limits::from_secs(
                        config.gitlab.timeout_sec,
                        config.gitlab.run_budget_sec,
                    ))
                })
                .map(std::sync::Arc::new)
        })
    }

    /// The hash of the credential `kind`'s client was built with, once it was built.
    pub fn credential(&self, kind: ForgeKind) -> Option<&str> {
        self.credentials.get(&kind).map(String::as_str)
    }

    /// Drops the client of `kind`, so the next use reads its token afresh (after a 401: the
    /// token may have been rotated).
    pub fn forget(&mut self, kind: ForgeKind) {
        let dropped = match kind {
            ForgeKind::GitHub => self.github.take().and_then(Result::ok).map(UsageOf::GitHub),
            ForgeKind::GitLab => self.gitlab.take().and_then(Result::ok).map(UsageOf::GitLab),
        };
        self.retired.extend(dropped.map(|c| (kind, c)));
        if kind == ForgeKind::GitHub {
            crate::forge::github::app_auth::forget_tokens();
        }
    }

    /// What every client of `kind` built this run has used.
    fn live_usage(&self, kind: ForgeKind) -> Usage {
        let live = match kind {
            ForgeKind::GitHub => self
                .github
                .as_ref()
                .and_then(|c| c.as_ref().ok())
                .map(|c| c.usage()),
            ForgeKind::GitLab => self
                .gitlab
                .as_ref()
                .and_then(|c| c.as_ref().ok())
                .map(|c| c.usage()),
        };
        self.retired
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, c)| match c {
                UsageOf::GitHub(c) => c.usage(),
                UsageOf::GitLab(c) => c.usage(),
            })
            .chain(live)
            .fold(Usage::default(), Usage::then)
    }

    /// What each client built this run knows of its rate-limit budget.
    pub fn budgets(&self) -> Vec<(ForgeKind, crate::forge::rate::Budget)> {
        let github = self
            .github
            .as_ref()
            .and_then(|c| c.as_ref().ok())
            .map(|c| (ForgeKind::GitHub, c.budget()));
        let gitlab = self
            .gitlab
            .as_ref()
            .and_then(|c| c.as_ref().ok())
            .map(|c| (ForgeKind::GitLab, c.budget()));
        github.into_iter().chain(gitlab).collect()
    }

    /// What each forge's clients have used since the last call (since they were built, the
    /// first time), for the forges that sent anything: each request is counted once.
    pub fn take_usage(&mut self) -> Vec<(ForgeKind, Usage)> {
        let mut out = Vec::new();
        for kind in [ForgeKind::GitHub, ForgeKind::GitLab] {
            let total = self.live_usage(kind);
            let taken = self.taken.insert(kind, total).unwrap_or_default();
            let fresh = Usage {
                requests: total.requests - taken.requests,
                points: total.points - taken.points,
                rate_limit_remaining: total.rate_limit_remaining,
            };
            if fresh.requests > 0 {
                out.push((kind, fresh));
            }
        }
        out
    }

    /// The user the token of `kind` belongs to (asked once per run).
    pub fn viewer(
        &mut self,
        kind: ForgeKind,
        config: &Config,
    ) -> Result<crate::model::viewer::Viewer, ClientFailure> {
        if let Some(viewer) = self.viewers.get(&kind) {
            return Ok(viewer.clone());
        }
        let viewer = self
            .get(kind, config)
            .map_err(ClientFailure::Setup)?
            .viewer()?;
        self.viewers.insert(kind, viewer.clone());
        Ok(viewer)
    }
}

/// One PR's snapshot read through `forge`.
pub(crate) fn read_snapshot(forge: &dyn Forge, request: SnapshotRequest) -> Result<Snapshot> {
    let pr = request.pr.clone();
    let mut answers = forge.snapshots(&[request]);
    Ok(answers
        .pop()
        .ok_or_else(|| anyhow::anyhow!("no answer for {pr}"))??)
}

/// Everything a command needs.
#[derive(Debug)]
pub struct App {
    pub config: Config,
    pub store: Store,
    pub now: Instant,
    /// `--now` was given: the clock stands still (replays and tests).
    pub clock_fixed: bool,
    pub json: bool,
    pub forges: Forges,
    /// `run --dry-run`: nothing is written, caches included.
    pub dry_run: bool,
    /// The viewers [`App::viewer`] found remembered in the database (when, for which
    /// credential, who), so a run reads each once rather than once per PR.
    pub viewers_read:
        std::collections::BTreeMap<ForgeKind, (i64, String, crate::model::viewer::Viewer)>,
}

impl App {
    /// The login the forge token belongs to (see [`App::viewer`]).
    pub fn owner(&mut self, kind: ForgeKind) -> Result<String, ClientFailure> {
        self.viewer(kind).map(|v| v.login)
    }

    /// The user the forge token belongs to: remembered in the database for a day and for
    /// that token, so a run does not spend a request on it; a new token is asked again. The
    /// first login learnt becomes the accepted owner (see [`App::token_login_change`]).
    pub fn viewer(
        &mut self,
        kind: ForgeKind,
    ) -> Result<crate::model::viewer::Viewer, ClientFailure> {
        const FRESH_SECS: i64 = 86_400;
        let real_now = crate::clock::wall_secs();
        self.forges
            .get(kind, &self.config)
            .map_err(ClientFailure::Setup)?;
        let credential = self.forges.credential(kind).unwrap_or_default().to_owned();
        let fresh = |(at, c, _): &(i64, String, _)| *c == credential && real_now - at < FRESH_SECS;
        if let Some((_, _, viewer)) = self.viewers_read.get(&kind).filter(|v| fresh(v)) {
            return Ok(viewer.clone());
        }
        if let Some(read) = self.cached_viewer(kind).filter(fresh) {
            let viewer = read.2.clone();
            self.viewers_read.insert(kind, read);
            return Ok(viewer);
        }
        let viewer = self.forges.viewer(kind, &self.config)?;
        if self.dry_run {
            return Ok(viewer);
        }
        // A cache: a failed write only costs one request next run.
        if let Ok(json) = serde_json::to_string(&viewer) {
            let _ = self.store.set_meta(
                &format!("viewer:{}", kind.as_str()),
                &format!("{real_now}\t{credential}\t{json}"),
            );
        }
        let accepted = format!("owner:{}", kind.as_str());
        if self.store.meta(&accepted).ok().flatten().is_none() {
            let _ = self.store.set_meta(&accepted, &viewer.login);
        }
        Ok(viewer)
    }

    /// The remembered viewer of `kind`: when it was asked, for which credential, and who.
    fn cached_viewer(
        &self,
        kind: ForgeKind,
    ) -> Option<(i64, String, crate::model::viewer::Viewer)> {
        let cached = self
            .store
            .meta(&format!("viewer:{}", kind.as_str()))
            .ok()
            .flatten()?;
        let mut parts = cached.splitn(3, '\t');
        let at = parts.next()?.parse().ok()?;
        let credential = parts.next()?.to_owned();
        let viewer = serde_json::from_str(parts.next()?).ok()?;
        Some((at, credential, viewer))
    }

    /// Whether `kind`'s token now belongs to someone other than the accepted owner: (the
    /// accepted owner, the token's login). Costs a request only when the token changed since
    /// its login was last asked; before any login was learnt, nothing has changed.
    pub fn token_login_change(&mut self, kind: ForgeKind) -> Result<Option<(String, String)>> {
        let Some((_, credential, _)) = self.cached_viewer(kind) else {
            return Ok(None);
        };
        if self.forges.get(kind, &self.config).is_err() {
            return Ok(None);
        }
        let login = if self.forges.credential(kind) == Some(credential.as_str()) {
            self.cached_viewer(kind).map(|(_, _, v)| v.login)
        } else {
            Some(self.viewer(kind)?.login)
        };
        let accepted = self.store.meta(&format!("owner:{}", kind.as_str()))?;
        Ok(match (accepted, login) {
            (Some(was), Some(now)) if !crate::model::Login::new(&was).is(&now) => Some((was, now)),
            _ => None,
        })
    }

    /// Accepts the token's current login as `kind`'s owner (`watch resume` after a change).
    pub fn accept_owner(&mut self, kind: ForgeKind) -> Result<String> {
        let login = self.viewer(kind)?.login;
        self.store
            .set_meta(&format!("owner:{}", kind.as_str()), &login)?;
        Ok(login)
    }

    /// The owner's login as the last run recorded it (however long ago), for what an agent
    /// signs on the owner's behalf: an agent's route never reads the owner's token. A usage
    /// error before any run has recorded it.
    pub fn recorded_owner(&self, kind: ForgeKind) -> Result<String> {
        self.store
            .meta(&format!("owner:{}", kind.as_str()))?
            .or_else(|| self.cached_viewer(kind).map(|(_, _, viewer)| viewer.login))
            .ok_or_else(|| {
                usage(format!(
                    "the owner's {} login is not recorded yet: `pr-monitor run` records it",
                    kind.as_str()
                ))
            })
    }

    /// A client of `kind`'s forge on agent `name`'s own token, with only an agent's verbs. A
    /// usage error (exit 2) when the agent has no token of its own, or it cannot be read: the
    /// owner's is never lent.
    pub fn agent_forge(
        &self,
        name: &str,
        kind: ForgeKind,
    ) -> Result<crate::forge::agent::AgentForge> {
        let agent = self.config.agent(name).map_err(usage)?;
        let source = agent.token().ok_or_else(|| {
            usage(format!(
                "agent `{name}` has no forge token of its own (`agents.{name}.token_env` or \
                 `token_file`); the owner's is not lent to an agent"
            ))
        })?;
        let token = read_token(&source, &format!("agent `{name}`'s")).map_err(usage)?;
        let client: Box<dyn Forge + Send + Sync> = match kind {
            ForgeKind::GitHub => {
                let github = &self.config.github;
                Box::new(GitHub::new(&github.api_url, &github.graphql_url(), token).map_err(usage)?)
            }
            ForgeKind::GitLab => {
                Box::new(GitLab::new(&self.config.gitlab.api_url, token).map_err(usage)?)
            }
        };
        Ok(crate::forge::agent::AgentForge::new(name, client))
    }

    /// The client of `kind`'s forge (built, and its token read, on first use).
    pub fn forge(&mut self, kind: ForgeKind) -> Result<&dyn Forge> {
        self.forges
            .get(kind, &self.config)
            .map_err(|e| ClientFailure::Setup(e).into())
    }

    /// Reads one PR's snapshot now (with the branch names a watch keeps, so behind is read
    /// from the branches).
    pub fn snapshot(&mut self, pr: &PrRef) -> Result<Snapshot> {
        let request = self.snapshot_request(pr)?;
        read_snapshot(self.forge(pr.forge)?, request)
    }

    /// What reading `pr`'s snapshot asks: the branch names a watch keeps, so behind is read
    /// from the branches.
    pub fn snapshot_request(&self, pr: &PrRef) -> Result<SnapshotRequest> {
        let watch = self.store.watch(pr)?;
        let required_checks =
            self.policy_for_pr(watch.as_ref()).checks == crate::config::ChecksScope::Required;
        let branches = watch
            .filter(|w| !w.status.memory.cross_repository)
            .and_then(|w| w.status.base_ref.zip(w.status.head_ref));
        Ok(SnapshotRequest {
            pr: pr.clone(),
            branches,
            required_checks,
        })
    }

    /// The PR a command-line argument names: on one of the configured forges' hosts (else a
    /// usage error), in the spelling it is watched under (see [`Store::known`]). The one place
    /// a PR argument becomes a [`PrRef`].
    pub fn pr(&self, arg: &PrArg) -> Result<PrRef> {
        let pr = arg.on(&self.config.forge_hosts()).map_err(usage)?;
        self.store.known(&pr)
    }

    /// Adds one history row to `pr`, at the program's clock.
    pub fn log(&mut self, pr: &PrRef, what: String) -> Result<()> {
        self.store.log(
            pr,
            &[crate::model::watch::HistoryEntry {
                at: self.now,
                what,
                why: None,
            }],
        )
    }

    /// The policy that applies to a watch: its job's, else the config's `pr` block, with the
    /// watch's own overrides on top.
    pub fn policy_for(&self, watch: &Watch) -> Policy {
        self.policy_of(watch.job.as_deref(), watch.agent.as_deref(), watch.auto_fix)
    }

    /// The policy for a watch of `job` with its own `agent` and `auto_fix` overrides.
    pub fn policy_of(
        &self,
        job: Option<&str>,
        agent: Option<&str>,
        auto_fix: Option<bool>,
    ) -> Policy {
        let job = job.and_then(|name| self.config.job(name));
        let mut policy = self.config.policy(job);
        if let Some(agent) = agent {
            policy.agent = Some(agent.to_owned());
        }
        if let Some(auto_fix) = auto_fix {
            policy.auto_fix = auto_fix;
        }
        policy
    }

    /// The policy for a PR that may not be watched: its watch's ([`App::policy_for`]), else
    /// the config's `pr` block.
    pub fn policy_for_pr(&self, watch: Option<&Watch>) -> Policy {
        watch.map_or_else(|| self.config.policy(None), |w| self.policy_for(w))
    }
}
