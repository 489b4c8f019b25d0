//! `config check`'s look at the secrets a run will need: each forge token of a forge the
//! config or the database uses (its token keys given, a job watching on it, an open watch of
//! it), each agent's own token, the SMTP credentials and the Slack webhook. Each is read as a
//! run would read it (environment variable, file, `gh auth token --user`, glab's config) and
//! dropped at once: the values are never printed, only whether they could be read. A token
//! command is not run (it may have effects a check should not have); it is said as such.

use std::collections::BTreeSet;

use crate::config::{Config, TokenKeys, TokenSource, Watch};
use crate::model::ForgeKind;

/// One secret a run will need: what it is for, and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needed {
    /// `github token`, `agent fixer's token`, `SMTP password` …
    pub what: String,
    pub source: TokenSource,
}

/// Whether a forge's token is needed: its keys are given, or something watches on it.
fn forge_needed<T: TokenKeys>(block: &T, kind: ForgeKind, used: &BTreeSet<ForgeKind>) -> bool {
    let keys = block.token_keys();
    keys.env.is_some()
        || keys.file.is_some()
        || keys.command.is_some()
        || block.account().is_some()
        || used.contains(&kind)
}

/// The forges the jobs' watch lists name.
pub fn forges_of_jobs(config: &Config) -> BTreeSet<ForgeKind> {
    config
        .jobs
        .iter()
        .flat_map(|j| &j.watch)
        .map(|w| match w {
            Watch::Pr(pr) => pr.forge,
            Watch::Repo(r) => r.forge,
            Watch::Mine(forge) => *forge,
            Watch::Branch(b) => b.forge,
        })
        .collect()
}

/// The secrets a run of `config` will need, given the forges in use.
pub fn needed(config: &Config, used: &BTreeSet<ForgeKind>) -> Vec<Needed> {
    let mut out = Vec::new();
    if config.github.app.is_none() && forge_needed(&config.github, ForgeKind::GitHub, used) {
        out.push(Needed {
            what: "github token".into(),
            source: config.github.token(),
        });
    }
    if forge_needed(&config.gitlab, ForgeKind::GitLab, used) {
        out.push(Needed {
            what: "gitlab token".into(),
            source: config.gitlab.token(),
        });
    }
    for (name, agent) in &config.agents {
        if let Some(source) = agent.token() {
            out.push(Needed {
                what: format!("agent `{name}`'s token"),
                source,
            });
        }
    }
    if let Some(email) = &config.notify.email {
        for (what, env) in [
            ("SMTP user name", &email.username_env),
            ("SMTP password", &email.password_env),
        ] {
            if let Some(env) = env {
                out.push(Needed {
                    what: what.into(),
                    source: TokenSource::Env(env.clone()),
                });
            }
        }
    }
    if let Some(slack) = &config.notify.slack {
        out.push(Needed {
            what: "Slack webhook".into(),
            source: TokenSource::Env(slack.webhook_url_env.clone()),
        });
    }
    out
}

/// What reading one secret found: `None` when it was read (or is a command, not run), else
/// why not. The value is dropped at once.
pub fn problem(needed: &Needed) -> Option<String> {
    if matches!(needed.source, TokenSource::Command(_)) {
        return None;
    }
    // An empty value is an error of its own.
    needed
        .source
        .resolve()
        .err()
        .map(|e| format!("{}: {e:#}", needed.what))
}

/// How a secret is said in `config check`'s output: where it comes from, and whether it was
/// read (a command is not run).
pub fn describe(needed: &Needed) -> String {
    let how = if matches!(needed.source, TokenSource::Command(_)) {
        "not run by a check"
    } else {
        "readable"
    };
    format!("{} ({how})", needed.source)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(yaml: &str) -> Config {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.yaml");
        std::fs::write(&path, yaml).unwrap();
        Config::load(Some(&path)).unwrap()
    }

    fn whats(c: &Config, used: &[ForgeKind]) -> Vec<String> {
        needed(c, &used.iter().copied().collect())
            .into_iter()
            .map(|n| format!("{} <- {}", n.what, n.source))
            .collect()
    }

    #[test]
    fn a_forge_is_needed_when_its_keys_are_given_or_something_watches_on_it() {
        let bare = config("database: x.db\n");
        assert!(whats(&bare, &[]).is_empty());
        assert_eq!(
            whats(&bare, &[ForgeKind::GitLab]),
            ["gitlab token <- environment variable `GITLAB_TOKEN`"]
        );
        let given = config(
            "database: x.db\ngithub:\n  token_env: MY_GH\nnotify:\n  slack:\n    webhook_url_env: HOOK\n  email:\n    smtp_url: smtp://127.0.0.1:25\n    from: a@example.com\n    to: [b@example.com]\n    username_env: SMTP_U\n    password_env: SMTP_P\n",
        );
        assert_eq!(
            whats(&given, &[]),
            [
                "github token <- environment variable `MY_GH`",
                "SMTP user name <- environment variable `SMTP_U`",
                "SMTP password <- environment variable `SMTP_P`",
                "Slack webhook <- environment variable `HOOK`",
            ]
        );
    }

    #[test]
    fn a_missing_secret_is_named_and_a_command_is_not_run() {
        let missing = Needed {
            what: "github token".into(),
            source: TokenSource::Env("PRM_UNIT_SURELY_UNSET_TOKEN".into()),
        };
        let said = problem(&missing).unwrap();
        assert!(said.contains("`PRM_UNIT_SURELY_UNSET_TOKEN`"), "{said}");
        let command = Needed {
            what: "github token".into(),
            source: TokenSource::Command("exit 1".into()),
        };
        assert_eq!(problem(&command), None);
        assert!(describe(&command).contains("not run"));
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("token");
        std::fs::write(&empty, "\n").unwrap();
        let file = Needed {
            what: "gitlab token".into(),
            source: TokenSource::File(empty),
        };
        assert!(problem(&file).is_some_and(|p| p.contains("empty")));
    }
}
