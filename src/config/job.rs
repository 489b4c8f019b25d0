//! Job files (`jobs/*.yaml`): which PRs to watch, and the policy for them.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::cron::CronSchedule;
use super::de as check;
use super::locate::{Seg, Target};
use super::{Config, ConfigError, Source};
use crate::model::reference::{ForgeHosts, PrArg};
use crate::model::{ForgeKind, MergeMethod, PrRef};

/// How a behind branch is updated (`merge` | `rebase`): the forge's own type, so a policy's
/// value goes straight into `Forge::update_branch`.
pub use crate::model::UpdateMethod;
pub use crate::model::plan::{NotifyChannel, NotifyKind};
use crate::model::policy::{ChecksScope, Edits, Handler, UpdateBranch};

/// One job file. Unknown keys are errors.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping of job keys")]
pub struct Job {
    /// The job's name, as `run --job NAME` and `watch add --job NAME` take it: letters, digits,
    /// `-`, `_` and `.`. Required, and unique across job files.
    #[serde(deserialize_with = "check::name")]
    pub name: String,
    /// When the daemon runs this job (5-field cron, or 6 with seconds first). Default: the
    /// config's `schedule`.
    #[serde(default)]
    pub schedule: Option<CronSchedule>,
    /// What to watch, as written; [`Job::parse`] checks it into [`Job::watch`].
    #[serde(default, rename = "watch")]
    written_watch: Vec<WrittenWatch>,
    /// What to watch. Default: nothing (PRs can still join the job through `watch add --job`).
    /// A `pr:` address names a host of the configured forge.
    #[serde(skip)]
    pub watch: Vec<Watch>,
    /// The policy; every field is optional and falls back to the config's `pr` block or the
    /// built-in default. See [`Config::policy`].
    #[serde(default)]
    pub policy: JobPolicy,
    /// Channels to notify through. Default: every channel configured in the config's `notify`
    /// block. A channel named here must be configured there.
    #[serde(default)]
    pub notify: Option<Vec<NotifyChannel>>,
    /// Which events notify. Default: [`NotifyKind::DEFAULT`] (`ci, guard, merge, stuck, error`);
    /// add `conflict` and `review` to hear of those too.
    #[serde(default)]
    pub notify_on: Option<Vec<NotifyKind>>,
    /// The file the job was read from (set by the loader; empty for a job built in code).
    #[serde(skip)]
    pub source: PathBuf,
}

/// One entry of a job's `watch:` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Watch {
    /// `pr: PR` — one pull request or merge request, in any form [`PrArg`] parses; an address
    /// names a host of the configured forge.
    Pr(PrRef),
    /// `repo: OWNER/NAME` — every open PR in the repository that matches all its filters.
    Repo(RepoWatch),
    /// `mine: github | gitlab` — every open PR (MR) the owner authored, on any repository the
    /// token reaches: one search request per listing.
    Mine(ForgeKind),
    /// `branch: OWNER/REPO@BRANCH` — the checks on the branch's head.
    Branch(BranchWatch),
}

/// A `branch:` watch entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchWatch {
    /// `forge: github | gitlab`. Default `github`.
    pub forge: ForgeKind,
    /// `owner/name` on GitHub, `group/…/project` on GitLab.
    pub repo: String,
    /// The branch's name.
    pub branch: String,
    /// `checks: [names]`: only these checks count (compared case-insensitively). Default: all.
    pub checks: Vec<String>,
}

impl BranchWatch {
    /// Whether a check of this name counts for the watch.
    pub fn counts(&self, check: &str) -> bool {
        self.checks.is_empty() || self.checks.iter().any(|c| c.eq_ignore_ascii_case(check))
    }
}

/// A `repo:` watch entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoWatch {
    /// `forge: github | gitlab` — an addition to the contract, since `octo/app` alone cannot say
    /// which forge it is on. Default `github`.
    pub forge: ForgeKind,
    /// `owner/name` on GitHub, `group/…/project` on GitLab.
    pub repo: String,
    /// Only PRs opened by one of these logins (compared case-insensitively). Default: anyone.
    pub authors: Vec<String>,
    /// Only PRs carrying every one of these labels (compared case-insensitively). Default: any.
    pub labels: Vec<String>,
}

impl RepoWatch {
    /// Whether a PR with this author and these labels passes the filters.
    pub fn matches(&self, author: Option<&str>, labels: &[String]) -> bool {
        let author_ok = self.authors.is_empty()
            || author.is_some_and(|a| self.authors.iter().any(|w| w.eq_ignore_ascii_case(a)));
        let labels_ok = self
            .labels
            .iter()
            .all(|want| crate::model::has_label(labels, want));
        author_ok && labels_ok
    }
}

/// A job's `policy:` block. `None` means "not set here".
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping (the `policy` block)")]
pub struct JobPolicy {
    /// The agent (a key of the config's `agents`) that fixes these PRs. Default: none.
    #[serde(default, deserialize_with = "check::opt_name")]
    pub agent: Option<String>,
    /// Send failures on the agent's commits back to it. Default: the config's `pr.auto_fix`.
    #[serde(default)]
    pub auto_fix: Option<bool>,
    /// Addition to the contract: fixes per PR before auto-fix stops. Default: `pr.max_attempts`.
    #[serde(default, deserialize_with = "check::opt_count")]
    pub max_attempts: Option<u32>,
    /// Addition to the contract: `squash | merge | rebase`, or `""` for the first the repository
    /// allows. Default: `pr.merge_method`.
    #[serde(default, deserialize_with = "check::opt_merge_method")]
    #[allow(clippy::option_option, reason = "three states: absent, \"\", a method")]
    pub merge_method: Option<Option<MergeMethod>>,
    /// Arm a merge as soon as the PR is watched. Default `false`.
    #[serde(default)]
    pub merge_when_ready: Option<bool>,
    /// Who handles review feedback. Default `owner` (light the `cmt` pill only).
    #[serde(default)]
    pub reviews: Option<Handler>,
    /// Who handles merge conflicts. Default `owner` (light the `cnf` pill only).
    #[serde(default)]
    pub conflicts: Option<Handler>,
    /// When to update a branch that is behind its base. Default `armed`.
    #[serde(default)]
    pub update_branch: Option<UpdateBranch>,
    /// How to update it. Default `merge`.
    #[serde(default)]
    pub update_method: Option<UpdateMethod>,
    /// Labels a PR must carry before a merge is armed. Default none.
    #[serde(default)]
    pub required_labels: Option<Vec<String>>,
    /// Logins whose approval a PR needs before a merge is armed. Default none.
    #[serde(default)]
    pub required_approvals_from: Option<Vec<String>>,
    /// Logins whose feedback may reach the agent, besides the owner and the PR author. Default
    /// none. Never a login the forge itself acts as (`web-flow`, `github-actions[bot]` …).
    #[serde(default, deserialize_with = "super::de::opt_logins")]
    pub trust: Option<Vec<String>>,
    /// Arm merges on PRs whose base is not the repository's default branch. Default `false`.
    #[serde(default)]
    pub allow_non_default_base: Option<bool>,
    /// Seconds between this job's ticks while something is happening. Default `pr.poll_sec`.
    #[serde(default, deserialize_with = "check::opt_secs")]
    pub poll_sec: Option<u64>,
    /// Seconds between this job's ticks otherwise. Default `pr.idle_poll_sec`.
    #[serde(default, deserialize_with = "check::opt_secs")]
    pub idle_poll_sec: Option<u64>,
    /// Where the forge has no auto-merge, pr-monitor merges an armed, ready PR itself. Default
    /// `true`; `false` keeps the forge's auto-merge as the only way a PR merges.
    #[serde(default)]
    pub self_merge: Option<bool>,
    /// Which edits make a comment new feedback. Default `author`.
    #[serde(default)]
    pub edits: Option<Edits>,
    /// Which checks are judged. Default `all`.
    #[serde(default)]
    pub checks: Option<ChecksScope>,
    /// Messages to the agent per PR in any hour; past it, work waits. `0`: no cap. Default 6.
    #[serde(default)]
    pub agent_messages_per_hour: Option<u32>,
    /// Feedback reaches the agent only when it mentions this handle (`"@fixer"`) outside
    /// quoted lines, code and HTML comments. Default: no gate.
    #[serde(default, deserialize_with = "check::opt_mention")]
    pub mention: Option<String>,
}

impl Job {
    /// Parses and validates one job file's text against `config` (its agents and channels).
    /// `path` names the file in errors and becomes [`Job::source`].
    pub fn parse(text: &str, path: &Path, config: &Config) -> Result<Job, ConfigError> {
        let src = Source { path, text };
        let Some(mut job) = src.parse::<Job>()? else {
            return Err(src.error(
                &[],
                Target::Value,
                "the job file is empty; a job needs `name`",
            ));
        };
        job.validate(&src, config)?;
        let hosts = config.forge_hosts();
        job.watch = std::mem::take(&mut job.written_watch)
            .into_iter()
            .enumerate()
            .map(|(i, entry)| {
                entry.on(&hosts).map_err(|why| {
                    src.error(
                        &[Seg::Key("watch"), Seg::Index(i), Seg::Key("pr")],
                        Target::Value,
                        why,
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        job.source = path.to_path_buf();
        Ok(job)
    }

    /// Checks what one value cannot check alone: the agent and channels must exist.
    fn validate(&self, src: &Source<'_>, config: &Config) -> Result<(), ConfigError> {
        if let Some(agent) = &self.policy.agent
            && let Err(why) = config.agent(agent)
        {
            return Err(src.error(&[Seg::Key("policy"), Seg::Key("agent")], Target::Value, why));
        }
        let configured = config.notify.channels();
        for (i, channel) in self.notify.iter().flatten().enumerate() {
            if !configured.contains(channel) {
                return Err(src.error(
                    &[Seg::Key("notify"), Seg::Index(i)],
                    Target::Value,
                    format_args!(
                        "channel `{}` is not configured in the config's `notify` block",
                        channel.as_str()
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A watch entry as written: a `pr:` entry's address is not yet checked against the configured
/// forge hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum WrittenWatch {
    Pr(PrArg),
    Repo(RepoWatch),
    Mine(ForgeKind),
    Branch(BranchWatch),
}

impl WrittenWatch {
    /// The entry, when a `pr:` address names one of `hosts` for its forge.
    fn on(self, hosts: &ForgeHosts) -> Result<Watch, String> {
        match self {
            WrittenWatch::Pr(arg) => arg.on(hosts).map(Watch::Pr),
            WrittenWatch::Repo(repo) => Ok(Watch::Repo(repo)),
            WrittenWatch::Mine(forge) => Ok(Watch::Mine(forge)),
            WrittenWatch::Branch(branch) => Ok(Watch::Branch(branch)),
        }
    }
}

/// The keys of a watch entry, as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWatch {
    #[serde(default, deserialize_with = "check::opt_pr_arg")]
    pr: Option<PrArg>,
    #[serde(default, deserialize_with = "check::opt_repo")]
    repo: Option<String>,
    #[serde(default)]
    forge: Option<ForgeKind>,
    #[serde(default)]
    authors: Option<Vec<String>>,
    #[serde(default)]
    labels: Option<Vec<String>>,
    #[serde(default)]
    mine: Option<ForgeKind>,
    #[serde(default)]
    branch: Option<String>,
    #[serde(default)]
    checks: Option<Vec<String>>,
}

impl RawWatch {
    fn into_watch(self) -> Result<WrittenWatch, String> {
        let kinds = [
            self.pr.is_some(),
            self.repo.is_some(),
            self.mine.is_some(),
            self.branch.is_some(),
        ];
        if kinds.iter().filter(|k| **k).count() > 1 {
            return Err(
                "a watch entry has one of `pr:`, `repo:`, `branch:` or `mine:`, not several"
                    .to_owned(),
            );
        }
        if self.checks.is_some() && self.branch.is_none() {
            return Err("`checks` goes with `branch:`".to_owned());
        }
        if let Some(forge) = self.mine {
            return if self.forge.is_some() || self.authors.is_some() || self.labels.is_some() {
                Err("`mine:` names its forge and takes no filters".to_owned())
            } else {
                Ok(WrittenWatch::Mine(forge))
            };
        }
        if let Some(written) = self.branch {
            if self.authors.is_some() || self.labels.is_some() {
                return Err("`authors` and `labels` go with `repo:`, not with `branch:`".to_owned());
            }
            return branch_watch(
                &written,
                self.forge.unwrap_or(ForgeKind::GitHub),
                self.checks.unwrap_or_default(),
            )
            .map(WrittenWatch::Branch);
        }
        match (self.pr, self.repo) {
            (Some(_), Some(_)) => Err("a watch entry has `pr:` or `repo:`, not both".to_owned()),
            (Some(pr), None) => {
                if self.forge.is_some() || self.authors.is_some() || self.labels.is_some() {
                    Err(
                        "`forge`, `authors` and `labels` go with `repo:`, not with `pr:`"
                            .to_owned(),
                    )
                } else {
                    Ok(WrittenWatch::Pr(pr))
                }
            }
            (None, Some(repo)) => {
                let forge = self.forge.unwrap_or(ForgeKind::GitHub);
                if forge == ForgeKind::GitHub && repo.split('/').count() != 2 {
                    return Err(format!(
                        "`{repo}` is not a GitHub repository (OWNER/NAME); \
                         add `forge: gitlab` for a GitLab project"
                    ));
                }
                Ok(WrittenWatch::Repo(RepoWatch {
                    forge,
                    repo,
                    authors: self.authors.unwrap_or_default(),
                    labels: self.labels.unwrap_or_default(),
                }))
            }
            (None, None) => Err(
                "a watch entry needs `pr: PR`, `repo: OWNER/NAME`, `branch: OWNER/NAME@BRANCH` \
                 or `mine: github | gitlab`"
                    .to_owned(),
            ),
        }
    }
}

/// A `branch:` entry's `OWNER/NAME@BRANCH`, checked for `forge`.
fn branch_watch(
    written: &str,
    forge: ForgeKind,
    checks: Vec<String>,
) -> Result<BranchWatch, String> {
    let Some((repo, branch)) = written.trim().split_once('@') else {
        return Err(format!(
            "`{written}` names no branch; use OWNER/NAME@BRANCH"
        ));
    };
    let repo = check::repo_path(repo)?;
    let branch = branch.trim();
    let bad = |c: char| c.is_control() || c.is_whitespace() || "~^:?*[\\".contains(c);
    if branch.is_empty() || branch.chars().any(bad) || branch.contains("..") {
        return Err(format!("`{branch}` is not a branch name"));
    }
    if forge == ForgeKind::GitHub && repo.split('/').count() != 2 {
        return Err(format!(
            "`{repo}` is not a GitHub repository (OWNER/NAME); add `forge: gitlab` for a GitLab project"
        ));
    }
    Ok(BranchWatch {
        forge,
        repo,
        branch: branch.to_owned(),
        checks,
    })
}

impl<'de> Deserialize<'de> for WrittenWatch {
    /// Reads the entry's keys with serde_yaml still in charge (so a bad key or value keeps its
    /// own position), then checks the combination; an error in the combination points at the
    /// entry.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = WrittenWatch;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping with `pr:`, `repo:`, `branch:` or `mine:`")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<WrittenWatch, A::Error> {
                let raw = RawWatch::deserialize(de::value::MapAccessDeserializer::new(map))?;
                raw.into_watch().map_err(de::Error::custom)
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_watch(authors: &[&str], labels: &[&str]) -> RepoWatch {
        RepoWatch {
            forge: ForgeKind::GitHub,
            repo: "octo/app".into(),
            authors: authors.iter().map(|s| (*s).to_owned()).collect(),
            labels: labels.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn repo_filters_need_one_author_and_every_label() {
        let labels = |ls: &[&str]| ls.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let cases = [
            (repo_watch(&[], &[]), None, labels(&[]), true),
            (
                repo_watch(&["octocat"], &[]),
                Some("OctoCat"),
                labels(&[]),
                true,
            ),
            (
                repo_watch(&["octocat"], &[]),
                Some("other"),
                labels(&[]),
                false,
            ),
            (repo_watch(&["octocat"], &[]), None, labels(&[]), false),
            (
                repo_watch(&[], &["automerge"]),
                None,
                labels(&["AutoMerge", "x"]),
                true,
            ),
            (
                repo_watch(&[], &["automerge", "ready"]),
                None,
                labels(&["automerge"]),
                false,
            ),
        ];
        for (watch, author, labels, want) in cases {
            assert_eq!(
                watch.matches(author, &labels),
                want,
                "{watch:?} {author:?} {labels:?}"
            );
        }
    }

    #[test]
    fn branch_and_mine_entries_read_into_their_watches() {
        let raw = |yaml: &str| -> WrittenWatch { serde_yaml::from_str(yaml).unwrap() };
        assert_eq!(
            raw("branch: octo/app@release/1.x\nchecks: [lint, Test]\n"),
            WrittenWatch::Branch(BranchWatch {
                forge: ForgeKind::GitHub,
                repo: "octo/app".into(),
                branch: "release/1.x".into(),
                checks: vec!["lint".into(), "Test".into()],
            })
        );
        assert_eq!(
            raw("branch: g/sub/p@main\nforge: gitlab\n"),
            WrittenWatch::Branch(BranchWatch {
                forge: ForgeKind::GitLab,
                repo: "g/sub/p".into(),
                branch: "main".into(),
                checks: Vec::new(),
            })
        );
        assert_eq!(raw("mine: gitlab\n"), WrittenWatch::Mine(ForgeKind::GitLab));
        let WrittenWatch::Branch(b) = raw("branch: o/r@main\nchecks: [test]\n") else {
            panic!("a branch entry");
        };
        assert!(b.counts("Test") && !b.counts("lint"));
        let WrittenWatch::Branch(all) = raw("branch: o/r@main\n") else {
            panic!("a branch entry");
        };
        assert!(all.counts("anything"), "no `checks`: every check counts");
    }

    #[test]
    fn names_agree_with_serde() {
        fn serde_name<T: serde::Serialize>(v: T) -> String {
            serde_json::to_string(&v)
                .unwrap()
                .trim_matches('"')
                .to_owned()
        }
        for h in [Handler::Owner, Handler::Agent] {
            assert_eq!(h.as_str(), serde_name(h));
        }
        for u in [
            UpdateBranch::Armed,
            UpdateBranch::Always,
            UpdateBranch::Never,
        ] {
            assert_eq!(u.as_str(), serde_name(u));
        }
        for m in [UpdateMethod::Merge, UpdateMethod::Rebase] {
            assert_eq!(m.to_string(), serde_name(m));
        }
        for c in [NotifyChannel::Email, NotifyChannel::Slack] {
            assert_eq!(c.as_str(), serde_name(c));
        }
        let kinds = [
            NotifyKind::Ci,
            NotifyKind::Guard,
            NotifyKind::Merge,
            NotifyKind::Stuck,
            NotifyKind::Error,
            NotifyKind::Conflict,
            NotifyKind::Review,
        ];
        for k in kinds {
            assert_eq!(k.as_str(), serde_name(k));
        }
    }

    #[test]
    fn default_notify_kinds_are_the_contracts() {
        let names: Vec<String> = NotifyKind::DEFAULT
            .iter()
            .map(|k| {
                serde_json::to_string(k)
                    .unwrap()
                    .trim_matches('"')
                    .to_owned()
            })
            .collect();
        assert_eq!(names, ["ci", "guard", "merge", "stuck", "error"]);
    }
}
