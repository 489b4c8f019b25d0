use std::path::{Path, PathBuf};

use super::load::{io_reason, strip_location};
use super::*;
use crate::model::{ForgeKind, PrRef};

/// The config example from CONTRACT.md, verbatim.
const CONTRACT_CONFIG: &str = r#"
database: pr-monitor.db
jobs_dir: ../jobs
schedule: "*/1 * * * *"      # daemon: how often the due-PR sweep runs; 5-field cron, or 6 with seconds first
github:
  api_url: https://api.github.com            # GitHub Enterprise: https://HOST/api/v3
  graphql_url: https://api.github.com/graphql # optional: derived from api_url (…/api/v3 -> …/api/graphql)
  token_env: GITHUB_TOKEN                    # or token_file: PATH, or token_command: "gh auth token"
gitlab:
  api_url: https://gitlab.com/api/v4
  token_env: GITLAB_TOKEN                    # or token_file / token_command
pr:
  auto_fix: true            # send failures on the agent's commits back to it
  max_attempts: 3           # fixes per PR before auto-fix stops
  merge_method: ""          # squash | merge | rebase; empty: the first the repo allows of squash, merge, rebase
  poll_sec: 30              # cadence while checks run, a fix is in flight, a merge is armed, or there was activity in the last two minutes
  idle_poll_sec: 300        # cadence for an open PR otherwise
  fix_timeout_sec: 1800     # a fix in flight this long without a new commit counts as having pushed none
  no_checks_grace_sec: 600  # a head with no checks yet is pending this long after it was first seen; then it has no checks
agents:
  fixer:
    inbox: /var/lib/pr-monitor/inbox/fixer    # a folder: messages are written to tmp/ and renamed into new/
    logins: [fixer-bot]                       # commits authored or committed by these logins are the agent's
notify:
  email: { smtp_url: "smtps://smtp.example.com:465", username_env: SMTP_USER, password_env: SMTP_PASSWORD,
           from: "pr-monitor@example.com", to: ["owner@example.com"] }
  slack: { webhook_url_env: SLACK_WEBHOOK_URL }
report:                     # optional outputs written at the end of every run, atomically
  html_path: /var/lib/pr-monitor/status.html                          # a self-contained status page
  metrics_path: /var/lib/node_exporter/textfile/pr_monitor.prom       # Prometheus text format
"#;

/// The job example from CONTRACT.md, verbatim.
const CONTRACT_JOB: &str = r#"
name: my-prs
schedule: "*/2 * * * *"     # optional; default: the config's schedule
watch:
  - pr: https://github.com/octo/app/pull/342
  - repo: octo/app            # every open PR in octo/app matching all the filters below
    authors: [octocat]
    labels: [automerge]
policy:
  agent: fixer
  auto_fix: true
  merge_when_ready: true
  reviews: owner              # owner (light cmt only) | agent (send new feedback to the agent)
  conflicts: owner            # owner (light cnf only) | agent
  update_branch: armed        # armed (update a behind branch only when armed to merge) | always | never
  update_method: merge        # merge | rebase
  required_labels: []
  required_approvals_from: []
  trust: []                   # logins whose feedback may reach the agent, besides the owner and the PR author
  allow_non_default_base: false  # arm merges on PRs whose base is not the repository's default branch
notify: [email, slack]
notify_on: [ci, guard, merge, stuck, error]   # the default kinds; add conflict and review to hear of those too
"#;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn contract_config() -> Config {
    Config::parse(CONTRACT_CONFIG, Path::new("/etc/pr-monitor/config.yaml")).unwrap()
}

#[test]
fn example_config_and_every_job_file_load() {
    let root = manifest_dir();
    let config = Config::from_file(&root.join("config/pr-monitor.yaml")).unwrap();
    let job_files: Vec<_> = std::fs::read_dir(root.join("jobs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    assert!(!job_files.is_empty());
    assert_eq!(config.jobs.len(), job_files.len());
    assert!(config.job("example").is_some());

    assert_eq!(config.database, root.join("config/pr-monitor.db"));
    assert_eq!(config.jobs_dir, Some(root.join("config/../jobs")));
    let fixer = config.agent("fixer").unwrap();
    assert_eq!(
        fixer.delivery(),
        Some(AgentDelivery::Inbox(&root.join("config/inbox/fixer")))
    );
    assert_eq!(fixer.logins, ["fixer-bot"]);
    assert_eq!(
        config.github.token(),
        TokenSource::Env("GITHUB_TOKEN".into())
    );
    assert_eq!(config.notify.channels(), []);
    assert_eq!(
        config.pr,
        PrConfig::default(),
        "the example spells out the defaults"
    );
    for job in &config.jobs {
        let policy = config.policy(Some(job));
        assert_eq!(policy.job.as_deref(), Some(job.name.as_str()));
    }
}

#[test]
fn contract_examples_parse() {
    let config = contract_config();
    assert_eq!(config.database, Path::new("/etc/pr-monitor/pr-monitor.db"));
    assert_eq!(
        config.jobs_dir,
        Some(PathBuf::from("/etc/pr-monitor/../jobs"))
    );
    assert_eq!(config.schedule.as_str(), "*/1 * * * *");
    assert_eq!(
        config.github.graphql_url(),
        "https://api.github.com/graphql"
    );
    assert_eq!(
        config.gitlab.token(),
        TokenSource::Env("GITLAB_TOKEN".into())
    );
    assert_eq!(config.pr, PrConfig::default());
    let email = config.notify.email.as_ref().unwrap();
    assert_eq!(email.to, ["owner@example.com"]);
    assert_eq!(email.password_env.as_deref(), Some("SMTP_PASSWORD"));
    assert_eq!(
        config.notify.channels(),
        [NotifyChannel::Email, NotifyChannel::Slack]
    );
    assert_eq!(
        config.report.metrics_path.as_deref(),
        Some(Path::new("/var/lib/node_exporter/textfile/pr_monitor.prom"))
    );

    let job = Job::parse(CONTRACT_JOB, Path::new("jobs/my-prs.yaml"), &config).unwrap();
    assert_eq!(job.name, "my-prs");
    assert_eq!(
        job.schedule.as_ref().map(CronSchedule::as_str),
        Some("*/2 * * * *")
    );
    assert_eq!(job.source, Path::new("jobs/my-prs.yaml"));
    assert_eq!(
        job.watch,
        [
            Watch::Pr(PrRef::github("octo/app", 342)),
            Watch::Repo(RepoWatch {
                forge: ForgeKind::GitHub,
                repo: "octo/app".into(),
                authors: vec!["octocat".into()],
                labels: vec!["automerge".into()],
            }),
        ]
    );
    let policy = config.policy(Some(&job));
    assert_eq!(policy.agent.as_deref(), Some("fixer"));
    assert!(policy.merge_when_ready);
    assert_eq!(policy.notify, [NotifyChannel::Email, NotifyChannel::Slack]);
    assert_eq!(policy.notify_on, NotifyKind::DEFAULT);
}

#[test]
fn empty_config_is_all_defaults() {
    for text in ["", "# nothing here\n", "---\n", "~\n"] {
        let config = Config::parse(text, Path::new("/srv/c.yaml")).unwrap();
        assert_eq!(config.database, Path::new("/srv/pr-monitor.db"), "{text:?}");
        assert_eq!(config.jobs_dir, Some(PathBuf::from("/srv/jobs")));
        assert_eq!(config.github, GitHubConfig::default());
        assert_eq!(config.pr, PrConfig::default());
    }
}

/// Config texts that must fail, with the exact `file:line:column: message` (or, after `…`, a
/// prefix of it).
const CONFIG_ERRORS: &[(&str, &str)] = &[
    // Malformed YAML.
    (
        "agents:\n  fixer:\n    logins: [a, b\n",
        "c.yaml:4:1: did not find expected ',' or ']', while parsing a flow sequence at line 3 column 13",
    ),
    (
        "pr:\n\tpoll_sec: 30\n",
        "c.yaml:2:1: found character that cannot start any token, while scanning for the next token",
    ),
    (
        "database: a.db\ndatabase: b.db\n",
        "c.yaml:2:1: duplicate field `database`",
    ),
    (
        "pr:\n  poll_sec: 3\n  auto_fix: true\n  poll_sec: 4\n",
        "c.yaml:4:3: pr: duplicate field `poll_sec`",
    ),
    (
        "agents:\n  a: {inbox: x}\n  b: {inbox: y}\n  a: {inbox: z}\n",
        "c.yaml:4:3: agents: duplicate key `a`",
    ),
    // Unknown keys.
    (
        "databse: x.db\n",
        "c.yaml:1:1: unknown field `databse`, expected one of `database`, `jobs_dir`, …",
    ),
    (
        "pr:\n  poll_sec: 30\n  pol_sec: 5\n",
        "c.yaml:3:3: pr: unknown field `pol_sec`, expected one of `auto_fix`, …",
    ),
    (
        "agents:\n  fixer:\n    inbox: i\n    login: [x]\n",
        "c.yaml:4:5: agents.fixer: unknown field `login`, expected one of `inbox`, …",
    ),
    (
        "notify:\n  email: {smtp_url: \"smtps://h\", from: a@b, to: [c@d], cc: [e@f]}\n",
        "c.yaml:2:56: notify.email: unknown field `cc`, expected one of …",
    ),
    // Wrong types.
    (
        "pr:\n  auto_fix: maybe\n",
        "c.yaml:2:13: pr.auto_fix: invalid type: string \"maybe\", expected a boolean",
    ),
    (
        "pr:\n  poll_sec: soon\n",
        "c.yaml:2:13: pr.poll_sec: invalid type: string \"soon\", expected a whole number, at least 1",
    ),
    (
        "agents: [fixer]\n",
        "c.yaml:1:9: agents: invalid type: sequence, expected a map",
    ),
    (
        "notify:\n  email: {smtp_url: \"smtps://h\", from: a@b}\n",
        "c.yaml:2:10: notify.email: missing field `to`",
    ),
    // Numbers out of range: signed, so the message says what is allowed.
    (
        "pr:\n  poll_sec: -5\n",
        "c.yaml:2:13: pr.poll_sec: must be at least 1, not -5",
    ),
    (
        "pr:\n  poll_sec: 0\n",
        "c.yaml:2:13: pr.poll_sec: must be at least 1, not 0",
    ),
    (
        "pr:\n  idle_poll_sec: -1\n",
        "c.yaml:2:18: pr.idle_poll_sec: must be at least 1, not -1",
    ),
    (
        "pr:\n  max_attempts: 0\n",
        "c.yaml:2:17: pr.max_attempts: must be at least 1, not 0",
    ),
    (
        "pr:\n  fix_timeout_sec: 0\n",
        "c.yaml:2:20: pr.fix_timeout_sec: must be at least 1, not 0",
    ),
    (
        "pr:\n  no_checks_grace_sec: -1\n",
        "c.yaml:2:24: pr.no_checks_grace_sec: must be 0 (off) or more, not -1",
    ),
    (
        "pr:\n  stuck_after_sec: -60\n",
        "c.yaml:2:20: pr.stuck_after_sec: must be 0 (off) or more, not -60",
    ),
    (
        "pr:\n  log_tail_lines: 0\n",
        "c.yaml:2:19: pr.log_tail_lines: must be at least 1, not 0",
    ),
    (
        "pr:\n  poll_sec: 99999999999\n",
        "c.yaml:2:13: pr.poll_sec: must be at most 31622400, not 99999999999",
    ),
    (
        "agents:\n  x:\n    command: run\n    timeout_sec: -1\n",
        "c.yaml:4:18: agents.x.timeout_sec: must be at least 1, not -1",
    ),
    // Bad values.
    (
        "pr:\n  merge_method: fast-forward\n",
        "c.yaml:2:17: pr.merge_method: unknown merge method `fast-forward` (squash, merge or rebase)",
    ),
    (
        "pr:\n  infra_patterns: [\"runner lost\", \"  \"]\n",
        "c.yaml:2:35: pr.infra_patterns[1]: an empty pattern would match every log",
    ),
    (
        "database: \"\"\n",
        "c.yaml:1:11: database: must not be empty",
    ),
    // URLs.
    (
        "github:\n  api_url: http://ghe.example.com/api/v3\n",
        "c.yaml:2:12: github.api_url: `http://ghe.example.com/api/v3` uses plain http, which is allowed only to a loopback host (127.0.0.0/8, ::1, localhost); use https",
    ),
    (
        "github:\n  api_url: api.github.com\n",
        "c.yaml:2:12: github.api_url: `api.github.com` is not a URL (scheme://host[:port][/path])",
    ),
    (
        "github:\n  graphql_url: ftp://x/graphql\n",
        "c.yaml:2:16: github.graphql_url: `ftp://x/graphql` must be an https URL, not `ftp`",
    ),
    (
        "gitlab:\n  api_url: \"https://gitlab.example.com:0/api/v4\"\n",
        "c.yaml:2:12: gitlab.api_url: `https://gitlab.example.com:0/api/v4` has a malformed port `0`",
    ),
    (
        "notify:\n  email:\n    smtp_url: https://smtp.example.com\n    from: a@b\n    to: [c@d]\n",
        "c.yaml:3:15: notify.email.smtp_url: `https://smtp.example.com` must be an smtp:// or smtps:// URL, not `https`",
    ),
    (
        "agents:\n  x:\n    webhook_url: http://agents.example.com/hook\n",
        "c.yaml:3:18: agents.x.webhook_url: `http://agents.example.com/hook` uses plain http…",
    ),
    // Schedules.
    (
        "schedule: \"* * * *\"\n",
        "c.yaml:1:11: schedule: `* * * *` has 4 fields; a schedule has 5 (minute hour day-of-month month day-of-week) or 6 with seconds first",
    ),
    (
        "schedule: \"0 25 * * *\"\n",
        "c.yaml:1:11: schedule: `0 25 * * *`: hour field `25`: 25 is out of range 0-23",
    ),
    // Tokens: more than one source, reported at the second key.
    (
        "github:\n  token_env: GH\n  token_command: gh auth token\n",
        "c.yaml:3:3: github.token_command: give only one of `token_env`, `token_file`, `token_command`, `gh_user`; `token_env` is already given",
    ),
    (
        "gitlab:\n  token_file: t\n  api_url: https://gitlab.com/api/v4\n  token_env: GL\n",
        "c.yaml:4:3: gitlab.token_env: give only one of `token_env`, `token_file`, `token_command`, `glab_config_dir`; `token_file` is already given",
    ),
    (
        "github: {token_command: x, token_file: y}\n",
        "c.yaml:1:28: github.token_file: give only one of `token_env`, `token_file`, `token_command`, `gh_user`; `token_command` is already given",
    ),
    (
        "github:\n  token_env: GITHUB-TOKEN\n",
        "c.yaml:2:14: github.token_env: `GITHUB-TOKEN` is not an environment variable name (letters, digits and `_`, not starting with a digit)",
    ),
    // A GitHub App: its own key source, and no token keys beside it.
    (
        "github:\n  token_env: GH\n  app:\n    id: 7\n    private_key_env: KEY\n",
        "c.yaml:3:3: github.app: give only one of `token_env`, `app`; `token_env` is already given",
    ),
    (
        "github:\n  app: {id: 7, private_key_file: k.pem}\n  token_command: gh auth token\n",
        "c.yaml:3:3: github.token_command: give only one of `token_command`, `app`; `app` is already given",
    ),
    (
        "github:\n  app:\n    id: 7\n",
        "c.yaml:3:5: github.app: an App needs one of `private_key_file` or `private_key_env`",
    ),
    (
        "github:\n  app:\n    id: 7\n    private_key_file: k.pem\n    private_key_env: KEY\n",
        "c.yaml:5:5: github.app.private_key_env: give only one of `private_key_file`, `private_key_env`; `private_key_file` is already given",
    ),
    (
        "github:\n  app:\n    private_key_file: k.pem\n",
        "c.yaml:3:5: github.app: missing field `id`",
    ),
    (
        "github:\n  app:\n    id: 0\n    private_key_file: k.pem\n",
        "c.yaml:3:9: github.app.id: must be at least 1, not 0",
    ),
    (
        "github:\n  app:\n    id: 7\n    private_key: k.pem\n",
        "c.yaml:4:5: github.app: unknown field `private_key`, expected one of `id`, `private_key_file`, `private_key_env`",
    ),
    // Agents.
    (
        "agents:\n  fixer:\n    logins: [bot]\n",
        "c.yaml:3:5: agents.fixer: an agent needs one of `inbox`, `webhook_url` or `command`",
    ),
    (
        "agents:\n  fixer:\n    inbox: i\n    logins: [bot]\n    command: run-agent\n",
        "c.yaml:5:5: agents.fixer.command: give only one of `inbox`, `webhook_url`, `command`; `inbox` is already given",
    ),
    (
        "agents:\n  fixer:\n    inbox: i\n    timeout_sec: 30\n",
        "c.yaml:4:5: agents.fixer.timeout_sec: `timeout_sec` goes with `webhook_url` or `command`, not with `inbox`",
    ),
    (
        "agents:\n  fixer:\n    inbox: i\n    token_env: FIXER_TOKEN\n    token_file: t\n",
        "c.yaml:5:5: agents.fixer.token_file: give only one of `token_env`, `token_file`; `token_env` is already given",
    ),
    (
        "agents:\n  \"my fixer\":\n    inbox: i\n",
        "c.yaml:2:3: agents.my fixer: `my fixer` is not a valid name; use letters, digits, `-`, `_` and `.`",
    ),
    // Email addresses.
    (
        "notify:\n  email:\n    smtp_url: smtps://h:465\n    from: me@example.com\n    to:\n      - owner@example.com\n      - not-an-address\n",
        "c.yaml:7:9: notify.email.to[1]: `not-an-address` is not an email address",
    ),
    (
        "notify:\n  email: { smtp_url: \"smtps://h\", from: \"me\", to: [a@b] }\n",
        "c.yaml:2:41: notify.email.from: `me` is not an email address",
    ),
    (
        "notify:\n  email: { smtp_url: \"smtps://h\", from: a@b, to: [] }\n",
        "c.yaml:2:50: notify.email.to: needs at least one address",
    ),
    (
        "notify:\n  email:\n    smtp_url: smtps://h\n    from: a@b\n    to: [c@d]\n    password_env: PW\n",
        "c.yaml:6:5: notify.email.password_env: `password_env` needs `username_env` too",
    ),
    (
        "notify:\n  slack: {}\n",
        "c.yaml:2:10: notify.slack: missing field `webhook_url_env`",
    ),
];

/// Compares every case and reports all mismatches at once.
fn check_errors(cases: impl IntoIterator<Item = (String, &'static str)>) {
    let mismatches: Vec<String> = cases
        .into_iter()
        .filter(|(got, want)| match want.strip_suffix('…') {
            Some(prefix) => !got.starts_with(prefix),
            None => got != want,
        })
        .map(|(got, want)| format!(" got: {got}\nwant: {want}"))
        .collect();
    assert!(mismatches.is_empty(), "\n{}", mismatches.join("\n\n"));
}

#[test]
fn config_errors_point_at_file_line_column() {
    check_errors(CONFIG_ERRORS.iter().map(|(text, want)| {
        let err = Config::parse(text, Path::new("c.yaml")).unwrap_err();
        assert!(matches!(err, ConfigError::At { .. }), "{text}: {err:?}");
        (err.to_string(), *want)
    }));
}

/// Job texts that must fail against the contract's config.
const JOB_ERRORS: &[(&str, &str)] = &[
    ("", "j.yaml:1:1: the job file is empty; a job needs `name`"),
    ("watch: []\n", "j.yaml:1:1: missing field `name`"),
    (
        "- name: a\n",
        "j.yaml:1:1: invalid type: sequence, expected a mapping of job keys",
    ),
    (
        "name: a\nwtach: []\n",
        "j.yaml:2:1: unknown field `wtach`, expected one of `name`, `schedule`, `watch`, `policy`, `notify`, `notify_on`",
    ),
    (
        "name: my prs\n",
        "j.yaml:1:7: name: `my prs` is not a valid name; use letters, digits, `-`, `_` and `.`",
    ),
    (
        "name: a\nschedule: \"*/2 * * *\"\n",
        "j.yaml:2:11: schedule: `*/2 * * *` has 4 fields…",
    ),
    (
        "name: a\nwatch:\n  - pr: octo/app\n",
        "j.yaml:3:9: watch[0].pr: `octo/app` is not a pull request reference; use https://github.com/OWNER/REPO/pull/N, https://gitlab.com/GROUP/PROJECT/-/merge_requests/N, OWNER/REPO#N (GitHub) or GROUP/PROJECT!N (GitLab)",
    ),
    (
        "name: a\nwatch:\n  - pr: o/r#1\n  - {pr: \"https://github.com/o/r/issues/2\"}\n",
        "j.yaml:4:10: watch[1].pr: `https://github.com/o/r/issues/2` is not a pull request reference; …",
    ),
    (
        "name: a\nwatch:\n  - pr: o/r#1\n    repo: o/r\n",
        "j.yaml:3:5: watch[0]: a watch entry has one of `pr:`, `repo:`, `branch:` or `mine:`, not several",
    ),
    (
        "name: a\nwatch:\n  - mine: github\n    authors: [x]\n",
        "j.yaml:3:5: watch[0]: `mine:` names its forge and takes no filters",
    ),
    (
        "name: a\nwatch:\n  - mine: bitbucket\n",
        "j.yaml:3:11: watch[0].mine: unknown variant `bitbucket`, expected `github` or `gitlab`",
    ),
    (
        "name: a\nwatch:\n  - branch: octo/app\n",
        "j.yaml:3:5: watch[0]: `octo/app` names no branch; use OWNER/NAME@BRANCH",
    ),
    (
        "name: a\nwatch:\n  - branch: octo/app@my branch\n",
        "j.yaml:3:5: watch[0]: `my branch` is not a branch name",
    ),
    (
        "name: a\nwatch:\n  - repo: octo/app\n    checks: [lint]\n",
        "j.yaml:3:5: watch[0]: `checks` goes with `branch:`",
    ),
    (
        "name: a\nwatch:\n  - pr: o/r#1\n    labels: [x]\n",
        "j.yaml:3:5: watch[0]: `forge`, `authors` and `labels` go with `repo:`, not with `pr:`",
    ),
    (
        "name: a\nwatch:\n  - labels: [x]\n",
        "j.yaml:3:5: watch[0]: a watch entry needs `pr: PR`, `repo: OWNER/NAME`, `branch: OWNER/NAME@BRANCH` or `mine: github | gitlab`",
    ),
    (
        "name: a\nwatch:\n  - repo: octo\n",
        "j.yaml:3:11: watch[0].repo: `octo` is not a repository; use OWNER/NAME (GitHub) or GROUP/PROJECT (GitLab)",
    ),
    (
        "name: a\nwatch:\n  - repo: g/sub/p\n",
        "j.yaml:3:5: watch[0]: `g/sub/p` is not a GitHub repository (OWNER/NAME); add `forge: gitlab` for a GitLab project",
    ),
    (
        "name: a\nwatch:\n  - repo: o/r\n    lables: [x]\n",
        "j.yaml:4:5: watch[0]: unknown field `lables`, expected one of `pr`, `repo`, `forge`, `authors`, `labels`, `mine`, `branch`, `checks`",
    ),
    (
        "name: a\nwatch:\n  - o/r#1\n",
        "j.yaml:3:5: watch[0]: invalid type: string \"o/r#1\", expected a mapping with `pr:`, `repo:`, `branch:` or `mine:`",
    ),
    (
        "name: a\npolicy:\n  agent: fixr\n",
        "j.yaml:3:10: policy.agent: no agent `fixr` in the config (defined: `fixer`)",
    ),
    (
        "name: a\npolicy:\n  reviews: bot\n",
        "j.yaml:3:12: policy.reviews: unknown variant `bot`, expected `owner` or `agent`",
    ),
    (
        "name: a\npolicy:\n  update_branch: sometimes\n",
        "j.yaml:3:18: policy.update_branch: unknown variant `sometimes`, expected one of `armed`, `always`, `never`",
    ),
    (
        "name: a\npolicy:\n  update_method: squash\n",
        "j.yaml:3:18: policy.update_method: unknown variant `squash`, expected `merge` or `rebase`",
    ),
    (
        "name: a\npolicy:\n  max_attempts: -2\n",
        "j.yaml:3:17: policy.max_attempts: must be at least 1, not -2",
    ),
    (
        "name: a\npolicy:\n  auto_fx: true\n",
        "j.yaml:3:3: policy: unknown field `auto_fx`, expected one of …",
    ),
    (
        "name: a\nnotify: [email, pager]\n",
        "j.yaml:2:17: notify[1]: unknown variant `pager`, expected `email` or `slack`",
    ),
    (
        "name: a\nnotify_on: [ci, merged]\n",
        "j.yaml:2:17: notify_on[1]: unknown variant `merged`, expected one of `ci`, `guard`, `merge`, `stuck`, `error`, `conflict`, `review`",
    ),
];

#[test]
fn job_errors_point_at_file_line_column() {
    let config = contract_config();
    check_errors(JOB_ERRORS.iter().map(|(text, want)| {
        (
            Job::parse(text, Path::new("j.yaml"), &config)
                .unwrap_err()
                .to_string(),
            *want,
        )
    }));
}

#[test]
fn job_references_are_checked_against_the_config() {
    let bare = Config::parse("", Path::new("c.yaml")).unwrap();
    let cases = [
        (
            "name: a\npolicy:\n  agent: fixer\n",
            "j.yaml:3:10: policy.agent: no agent `fixer`: the config defines none",
        ),
        (
            "name: a\nnotify: [email]\n",
            "j.yaml:2:10: notify[0]: channel `email` is not configured in the config's `notify` block",
        ),
        (
            "name: a\nnotify:\n  - slack\n",
            "j.yaml:3:5: notify[0]: channel `slack` is not configured in the config's `notify` block",
        ),
    ];
    for (text, want) in cases {
        let err = Job::parse(text, Path::new("j.yaml"), &bare).unwrap_err();
        assert_eq!(err.to_string(), want);
    }
}

#[test]
fn job_addresses_name_the_configured_forge_hosts() {
    let config = Config::parse(
        "gitlab:\n  api_url: https://git.example.com/api/v4\n",
        Path::new("c.yaml"),
    )
    .unwrap();
    let job = Job::parse(
        "name: a\nwatch:\n  - pr: https://git.example.com/g/sub/p/-/merge_requests/7\n",
        Path::new("j.yaml"),
        &config,
    )
    .unwrap();
    assert_eq!(
        job.watch,
        [Watch::Pr(PrRef {
            forge: ForgeKind::GitLab,
            repo: "g/sub/p".into(),
            number: 7,
        })]
    );
    let err = Job::parse(
        "name: a\nwatch:\n  - repo: octo/app\n  - pr: https://git.example.com/o/r/pull/1\n",
        Path::new("j.yaml"),
        &config,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "j.yaml:4:9: watch[1].pr: `https://git.example.com/o/r/pull/1` names host \
         `git.example.com`, which is not a configured github host (github.com)"
    );
}

#[test]
fn relative_paths_resolve_against_the_config_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let text = "\
database: state/pr.db
jobs_dir: ../jobs
github:
  token_file: secrets/gh
gitlab:
  token_file: /abs/gl
agents:
  fixer:
    inbox: inbox/fixer
  far:
    inbox: /var/inbox
report:
  html_path: out/status.html
  metrics_path: ../metrics/pr.prom
";
    write(root, "etc/config.yaml", text);
    write(root, "jobs/a.yaml", "name: a\n");
    let config = Config::load_from(Some(Path::new("etc/config.yaml")), root).unwrap();
    let etc = root.join("etc");
    assert_eq!(
        config.source.as_deref(),
        Some(etc.join("config.yaml").as_path())
    );
    assert_eq!(config.database, etc.join("state/pr.db"));
    assert_eq!(config.jobs_dir, Some(etc.join("../jobs")));
    assert_eq!(
        config.github.token(),
        TokenSource::File(etc.join("secrets/gh"))
    );
    assert_eq!(config.gitlab.token(), TokenSource::File("/abs/gl".into()));
    assert_eq!(config.agents["fixer"].inbox, Some(etc.join("inbox/fixer")));
    assert_eq!(
        config.agents["far"].inbox,
        Some(PathBuf::from("/var/inbox"))
    );
    assert_eq!(config.report.html_path, Some(etc.join("out/status.html")));
    assert_eq!(
        config.report.metrics_path,
        Some(etc.join("../metrics/pr.prom"))
    );
    assert_eq!(config.jobs.len(), 1);
    assert_eq!(config.jobs[0].source, etc.join("../jobs/a.yaml"));
}

#[test]
fn a_github_app_key_file_resolves_like_a_token_file() {
    let parse = |yaml: &str| Config::parse(yaml, Path::new("/etc/prm/c.yaml")).unwrap();
    let config = parse("github:\n  app:\n    id: 12345\n    private_key_file: keys/app.pem\n");
    let app = config.github.app.unwrap();
    assert_eq!(app.id, 12345);
    assert_eq!(
        app.private_key_file,
        Some(PathBuf::from("/etc/prm/keys/app.pem"))
    );
    let config = parse(
        "github:\n  app:\n    id: 1\n    private_key_file: ${CREDENTIALS_DIRECTORY}/app.pem\n",
    );
    assert_eq!(
        config.github.app.unwrap().private_key_file,
        Some(PathBuf::from("${CREDENTIALS_DIRECTORY}/app.pem"))
    );
    let config = parse("github:\n  app:\n    id: 1\n    private_key_env: PRM_APP_KEY\n");
    assert_eq!(
        config.github.app.unwrap().private_key_env.as_deref(),
        Some("PRM_APP_KEY")
    );
    assert_eq!(parse("").github.app, None);
}

#[test]
fn a_github_app_key_is_read_when_needed_and_errors_name_only_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.pem");
    let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIsecretbody\n-----END RSA PRIVATE KEY-----";
    std::fs::write(&file, format!("{pem}\n")).unwrap();
    let app = |file: Option<PathBuf>, env: Option<&str>| GitHubAppConfig {
        id: 1,
        private_key_file: file,
        private_key_env: env.map(str::to_owned),
    };
    let key = app(Some(file), None).read_private_key().unwrap();
    assert_eq!(key.expose(), pem);
    assert_eq!(crate::secrets::mask(pem), crate::secrets::MASK);
    let missing = app(Some(dir.path().join("nope.pem")), None)
        .read_private_key()
        .unwrap_err();
    assert!(
        missing.starts_with("GitHub App private key file `")
            && missing.ends_with("cannot be read: no such file or directory"),
        "{missing}"
    );
    let unset = app(None, Some("PRM_TEST_SURELY_UNSET_APP_KEY"))
        .read_private_key()
        .unwrap_err();
    assert_eq!(
        unset,
        "GitHub App private key: environment variable `PRM_TEST_SURELY_UNSET_APP_KEY` is not set"
    );
}

#[test]
fn search_order_explicit_then_local_then_system_then_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("work");
    let system = dir.path().join("system/config.yaml");
    std::fs::create_dir_all(&cwd).unwrap();
    let candidates = [cwd.join(LOCAL_CONFIG), system.clone()];
    let state = dir.path().join("home/.local/state/pr-monitor");
    let load = |explicit: Option<&Path>| {
        Config::load_searching(explicit, &cwd, &candidates, Some(state.clone()))
    };

    // Nothing anywhere: built-in defaults, database in the user's state folder, no jobs.
    let config = load(None).unwrap();
    assert_eq!(config.source(), None);
    assert_eq!(config.database, state.join("pr-monitor.db"));
    assert_eq!(config.state_dir.as_deref(), Some(state.as_path()));
    let no_home = Config::load_searching(None, &cwd, &candidates, None).unwrap();
    assert_eq!(
        (no_home.database, no_home.state_dir),
        (PathBuf::new(), None)
    );
    assert_eq!(config.jobs_dir, None);
    assert!(config.jobs.is_empty());

    write(dir.path(), "system/config.yaml", "database: system.db\n");
    assert_eq!(
        load(None).unwrap().database,
        dir.path().join("system/system.db")
    );

    write(&cwd, LOCAL_CONFIG, "database: local.db\n");
    assert_eq!(load(None).unwrap().database, cwd.join("config/local.db"));

    write(&cwd, "mine.yaml", "database: mine.db\n");
    assert_eq!(
        load(Some(Path::new("mine.yaml"))).unwrap().database,
        cwd.join("mine.db")
    );
    let absolute = cwd.join("mine.yaml");
    assert_eq!(
        load(Some(&absolute)).unwrap().source.as_deref(),
        Some(absolute.as_path())
    );

    // An explicit path must exist, even when the others do.
    let err = load(Some(Path::new("missing.yaml"))).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot read config `{}`: no such file or directory",
            cwd.join("missing.yaml").display()
        )
    );
    assert!(matches!(err, ConfigError::Read { what: "config", .. }));

    // load_from searches cwd/config/pr-monitor.yaml.
    assert_eq!(
        Config::load_from(None, &cwd).unwrap().database,
        cwd.join("config/local.db")
    );
}

#[test]
fn jobs_folder_rules() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();

    // Default `jobs` beside the config: missing means no jobs.
    let path = write(root, "a/config.yaml", "database: x.db\n");
    let config = Config::from_file(&path).unwrap();
    assert_eq!(config.jobs_dir, None);
    assert!(config.jobs.is_empty());

    // Present: read, sorted, dotfiles and other extensions skipped.
    write(root, "a/jobs/b.yml", "name: b\n");
    write(root, "a/jobs/a.yaml", "name: a\n");
    write(root, "a/jobs/.hidden.yaml", "not: a job\n");
    write(root, "a/jobs/notes.txt", "whatever");
    let config = Config::from_file(&path).unwrap();
    assert_eq!(config.jobs_dir, Some(root.join("a/jobs")));
    let names: Vec<&str> = config.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);

    // Named explicitly but missing: an error at `jobs_dir`, naming the folder.
    let path = write(root, "b/config.yaml", "database: x.db\njobs_dir: nowhere\n");
    let err = Config::from_file(&path).unwrap_err().to_string();
    let want = format!(
        "{}:2:11: jobs_dir: jobs folder `{}` does not exist",
        path.display(),
        root.join("b/nowhere").display()
    );
    assert_eq!(err, want);

    // Duplicate names: an error at the second file's `name`, naming the first.
    write(root, "c/jobs/one.yaml", "name: same\n");
    write(root, "c/jobs/two.yaml", "# second\nname: same\n");
    let path = write(root, "c/config.yaml", "");
    let err = Config::from_file(&path).unwrap_err().to_string();
    let want = format!(
        "{}:2:7: name: job `same` is already defined in `{}`",
        root.join("c/jobs/two.yaml").display(),
        root.join("c/jobs/one.yaml").display()
    );
    assert_eq!(err, want);

    // A bad job file fails the load with its own position.
    write(
        root,
        "d/jobs/bad.yaml",
        "name: x\npolicy:\n  agent: ghost\n",
    );
    let path = write(root, "d/config.yaml", "");
    let err = Config::from_file(&path).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "{}:3:10: policy.agent:",
            root.join("d/jobs/bad.yaml").display()
        )),
        "{err}"
    );
}

/// The config [`a_policy_without_a_job_is_the_configs`] and the job tests resolve against:
/// `pr` settings, an agent and a Slack channel.
fn policy_config() -> Config {
    Config::parse(
        "pr:\n  auto_fix: false\n  max_attempts: 5\n  merge_method: rebase\n  stuck_after_sec: 7200\n  infra_patterns: [runner lost]\n\
         agents:\n  fixer:\n    inbox: i\nnotify:\n  slack: {webhook_url_env: HOOK}\n",
        Path::new("/c.yaml"),
    )
    .unwrap()
}

#[test]
fn a_policy_without_a_job_is_the_configs() {
    let config = policy_config();
    let none = config.policy(None);
    assert_eq!(none.job, None);
    assert_eq!(none.agent, None);
    assert!(!none.auto_fix);
    assert_eq!(none.max_attempts, 5);
    assert_eq!(none.merge_method, Some(MergeMethod::Rebase));
    assert_eq!(
        (none.poll_sec, none.idle_poll_sec, none.fix_timeout_sec),
        (30, 300, 1800)
    );
    assert_eq!(none.no_checks_grace_sec, 600);
    assert_eq!(none.stuck_after_sec, Some(7200));
    assert_eq!((none.log_tail_lines, none.log_tail_bytes), (80, 16384));
    assert_eq!(none.infra_patterns, ["runner lost"]);
    assert!(!none.merge_when_ready);
    assert_eq!(
        (none.reviews, none.conflicts),
        (Handler::Owner, Handler::Owner)
    );
    assert_eq!(
        (none.update_branch, none.update_method),
        (UpdateBranch::Armed, UpdateMethod::Merge)
    );
    assert!(none.required_labels.is_empty() && none.trust.is_empty());
    assert!(!none.allow_non_default_base);
    assert_eq!(none.edits, Edits::Author);
    assert_eq!(none.agent_messages_per_hour, Some(6));
    assert_eq!(
        none.notify,
        [NotifyChannel::Slack],
        "every configured channel"
    );
    assert_eq!(none.notify_on, NotifyKind::DEFAULT);
    assert!(none.notifies(NotifyKind::Ci));
    assert!(!none.notifies(NotifyKind::Review));
    assert!(
        none.self_merge,
        "merges itself where the forge cannot, by default"
    );
    assert_eq!(none.checks, ChecksScope::All);
}

#[test]
fn a_jobs_policy_overrides_the_config_key_by_key() {
    let config = policy_config();
    let job = Job::parse(
        "name: j\npolicy:\n  agent: fixer\n  auto_fix: true\n  max_attempts: 1\n  merge_method: \"\"\n  \
         reviews: agent\n  conflicts: agent\n  update_branch: never\n  update_method: rebase\n  \
         required_labels: [ready]\n  trust: [alice]\n  allow_non_default_base: true\n  merge_when_ready: true\n  \
         poll_sec: 120\n  idle_poll_sec: 900\n  self_merge: false\n  checks: required\n\
         \x20 edits: never\n  agent_messages_per_hour: 0\n\
         notify: []\nnotify_on: [review, conflict, review]\n",
        Path::new("/j.yaml"),
        &config,
    )
    .unwrap();
    let p = config.policy(Some(&job));
    assert_eq!(p.job.as_deref(), Some("j"));
    assert_eq!(p.agent.as_deref(), Some("fixer"));
    assert!(p.auto_fix);
    assert_eq!(p.max_attempts, 1);
    assert_eq!(
        p.merge_method, None,
        "\"\" in a job unsets the config's method"
    );
    assert_eq!((p.reviews, p.conflicts), (Handler::Agent, Handler::Agent));
    assert_eq!(
        (p.update_branch, p.update_method),
        (UpdateBranch::Never, UpdateMethod::Rebase)
    );
    assert_eq!(p.required_labels, ["ready"]);
    assert_eq!(
        (p.poll_sec, p.idle_poll_sec),
        (120, 900),
        "the job's own cadence"
    );
    assert!(!p.self_merge);
    assert_eq!(p.trust, ["alice"]);
    assert!(p.allow_non_default_base && p.merge_when_ready);
    assert_eq!(p.edits, Edits::Never);
    assert_eq!(p.checks, ChecksScope::Required);
    assert_eq!(p.agent_messages_per_hour, None, "0: no cap");
    assert_eq!(p.notify, []);
    assert_eq!(p.notify_on, [NotifyKind::Review, NotifyKind::Conflict]);
    assert!(
        !p.notifies(NotifyKind::Review),
        "no channels, no notifications"
    );
}

#[test]
fn a_job_that_sets_nothing_inherits_everything() {
    let config = policy_config();
    let none = config.policy(None);
    let plain = Job::parse("name: plain\n", Path::new("/p.yaml"), &config).unwrap();
    let inherited = config.policy(Some(&plain));
    assert_eq!(
        Policy {
            job: None,
            ..inherited
        },
        none
    );
    assert_eq!(plain.schedule, None, "the sweep's schedule applies");
}

#[test]
fn graphql_url_is_derived_from_api_url() {
    let cases = [
        (
            "https://api.github.com",
            None,
            "https://api.github.com/graphql",
        ),
        (
            "https://ghe.example.com/api/v3",
            None,
            "https://ghe.example.com/api/graphql",
        ),
        (
            "https://ghe.example.com/api/v3/",
            None,
            "https://ghe.example.com/api/graphql",
        ),
        (
            "http://127.0.0.1:8080",
            None,
            "http://127.0.0.1:8080/graphql",
        ),
        (
            "https://api.github.com",
            Some("https://gql.example.com/q"),
            "https://gql.example.com/q",
        ),
    ];
    for (api_url, graphql_url, want) in cases {
        let github = GitHubConfig {
            api_url: api_url.into(),
            graphql_url: graphql_url.map(Into::into),
            ..GitHubConfig::default()
        };
        assert_eq!(github.graphql_url(), want, "{api_url}");
    }
    // Through the parser, which also drops the trailing slash.
    let config =
        Config::parse("github:\n  api_url: http://localhost:9/\n", Path::new("c")).unwrap();
    assert_eq!(config.github.api_url, "http://localhost:9");
    assert_eq!(config.github.graphql_url(), "http://localhost:9/graphql");
}

#[test]
fn agent_deliveries() {
    let config = Config::parse(
        "agents:\n  a: {inbox: in}\n  b: {webhook_url: \"http://127.0.0.1:7/hook\"}\n  \
         c: {command: \"agent-run --pr\", timeout_sec: 5, env: [AGENT_TOKEN]}\n",
        Path::new("/x/c.yaml"),
    )
    .unwrap();
    assert_eq!(
        config.agents["a"].delivery(),
        Some(AgentDelivery::Inbox(Path::new("/x/in")))
    );
    assert_eq!(
        config.agents["b"].delivery(),
        Some(AgentDelivery::Webhook {
            url: "http://127.0.0.1:7/hook",
            timeout_sec: 60
        })
    );
    assert_eq!(
        config.agents["c"].delivery(),
        Some(AgentDelivery::Command {
            command: "agent-run --pr",
            timeout_sec: 5,
            env: &["AGENT_TOKEN".to_owned()],
        })
    );
    assert_eq!(
        config.agent("zz").unwrap_err(),
        "no agent `zz` in the config (defined: `a`, `b`, `c`)"
    );
}

#[test]
fn tokens_never_reach_debug_display_or_errors() {
    const TOKEN: &str = "glpat-VerySecret987";
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "gl-token", &format!("{TOKEN}\n"));
    let path = write(dir.path(), "c.yaml", "gitlab:\n  token_file: gl-token\n");
    let config = Config::from_file(&path).unwrap();
    let secret = config.gitlab.token().resolve().unwrap();
    assert_eq!(secret.expose(), TOKEN);
    for shown in [
        format!("{secret}"),
        format!("{secret:?}"),
        format!("{config:?}"),
    ] {
        assert!(!shown.contains(TOKEN), "{shown}");
    }
    // A config error quoting a bad value never quotes the token file's contents.
    let bad = write(
        dir.path(),
        "bad.yaml",
        "gitlab:\n  token_file: gl-token\n  token_env: X\n",
    );
    let err = Config::from_file(&bad).unwrap_err().to_string();
    assert!(
        err.contains("gitlab.token_env") && !err.contains(TOKEN),
        "{err}"
    );
    let missing = TokenSource::File(dir.path().join("nope"))
        .resolve()
        .unwrap_err();
    assert!(format!("{missing:#}").contains("cannot read token file"));
}

#[test]
fn strips_only_the_leading_position() {
    let cases = [
        ("x at line 3 column 1", 3, 1, "x"),
        (
            "x at line 3 column 12, y at line 3 column 1",
            3,
            1,
            "x at line 3 column 12, y",
        ),
        (
            "x at line 2 column 5, while parsing at line 1 column 1",
            2,
            5,
            "x, while parsing at line 1 column 1",
        ),
        ("no position", 1, 1, "no position"),
    ];
    for (message, line, column, want) in cases {
        assert_eq!(strip_location(message, line, column), want);
    }
}

#[test]
fn io_reasons_read_like_sentences() {
    let e = std::fs::read("/surely/not/here").unwrap_err();
    assert_eq!(io_reason(&e), "no such file or directory");
}

#[test]
fn invalid_utf8_is_reported_at_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.yaml");
    std::fs::write(&path, b"pr:\n  poll_sec: 3\xe9\xff0\n").unwrap();
    let err = Config::load_from(Some(&path), dir.path()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}:2:14: the file is not valid UTF-8 here", path.display())
    );
}

#[test]
fn agent_env_lists_variable_names_for_commands_only() {
    let cases = [
        (
            "agents:\n  a:\n    command: run\n    env: [OK_NAME, \"bad name\"]\n",
            "/x/c.yaml:4:20: agents.a.env[1]: ",
        ),
        (
            "agents:\n  a:\n    inbox: in\n    env: [AGENT_TOKEN]\n",
            "/x/c.yaml:4:5: agents.a.env: `env` goes with `command` only",
        ),
    ];
    for (yaml, want) in cases {
        let err = Config::parse(yaml, Path::new("/x/c.yaml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(want), "{yaml}: {err}");
    }
}

#[test]
fn report_mode_is_an_octal_string_of_read_and_write_bits() {
    let ok = Config::parse("report:\n  mode: \"0640\"\n", Path::new("/x/c.yaml")).unwrap();
    assert_eq!(ok.report.file_mode(), 0o640);
    let default = Config::parse("", Path::new("/x/c.yaml")).unwrap();
    assert_eq!(default.report.file_mode(), 0o600);
    for bad in ["\"0755\"", "\"0400\"", "\"rw\"", "\"12345\""] {
        let err = Config::parse(&format!("report:\n  mode: {bad}\n"), Path::new("/x/c.yaml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("/x/c.yaml:2:9: report.mode: "),
            "{bad}: {err}"
        );
    }
}

/// Job files generated from pieces of real ones mixed with hostile text (accents, bidi marks,
/// zero-width characters, tabs, stray quotes): each parses or is refused with a position,
/// never panics.
#[test]
fn no_generated_job_file_panics() {
    let config = contract_config();
    let keys = [
        "name: ",
        "watch:\n  - pr: ",
        "watch:\n  - repo: ",
        "  - pr: ",
        "policy:\n  agent: ",
        "notify: [",
        "schedule: \"",
        "\n",
        "  ",
        "forge: gitlab\n",
        "authors: [",
        "labels: [",
    ];
    let values = [
        "a",
        "éxyz/app#1",
        "o/é.git#1",
        "\u{202e}o/r#1",
        "\u{200b}o/r#1",
        "g/p!57",
        "日本/x",
        "https://github.com/é/r/pull/1",
        "https://gitlab.com/g/ä.atom/-/merge_requests/1",
        "\"",
        "'",
        "]",
        "#",
        "!",
        ":",
        "\t",
        "🦀",
        "fixer",
        "email",
        "*/1 * * * *",
        "\u{feff}",
    ];
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        usize::try_from(seed % n as u64).unwrap()
    };
    for _ in 0..3_000 {
        let mut text = String::from("name: j\n");
        for _ in 0..next(6) {
            text.push_str(keys[next(keys.len())]);
            text.push_str(values[next(values.len())]);
            if next(2) == 0 {
                text.push('\n');
            }
        }
        let _ = Job::parse(&text, Path::new("j.yaml"), &config);
    }
}

#[test]
fn serve_is_off_by_default_and_takes_the_contracts_keys() {
    let off = Config::parse("", Path::new("/x/c.yaml")).unwrap();
    assert_eq!(off.serve, None);
    let contract = Config::parse(
        "serve: { listen: \"127.0.0.1:8080\", github_webhook_secret_env: GITHUB_WEBHOOK_SECRET, \
         gitlab_webhook_token_env: GITLAB_WEBHOOK_TOKEN }\n",
        Path::new("/x/c.yaml"),
    )
    .unwrap();
    assert_eq!(contract.serve, Some(ServeConfig::default()));
    let defaults = Config::parse("serve: {}\n", Path::new("/x/c.yaml")).unwrap();
    assert_eq!(defaults.serve, Some(ServeConfig::default()));
    let any = Config::parse("serve:\n  listen: \"[::]:0\"\n", Path::new("/x/c.yaml")).unwrap();
    assert_eq!(any.serve.unwrap().listen.to_string(), "[::]:0");
    for (bad, at) in [
        (
            "serve:\n  listen: localhost:8080\n",
            "/x/c.yaml:2:11: serve.listen: ",
        ),
        (
            "serve:\n  listen: \"127.0.0.1\"\n",
            "/x/c.yaml:2:11: serve.listen: ",
        ),
        (
            "serve:\n  github_webhook_secret_env: \"A B\"\n",
            "/x/c.yaml:2:30: serve.github_webhook_secret_env: ",
        ),
        (
            "serve:\n  port: 8080\n",
            "/x/c.yaml:2:3: serve: unknown field `port`",
        ),
    ] {
        let err = Config::parse(bad, Path::new("/x/c.yaml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(at), "{bad}: {err}");
    }
}

#[test]
fn an_agent_names_its_own_token_relative_to_the_config() {
    let config = Config::parse(
        "agents:\n  a: {inbox: i, token_env: A_TOKEN}\n  b: {inbox: i, token_file: b.token}\n  \
         c: {inbox: i, token_file: \"${CREDENTIALS_DIRECTORY}/c\"}\n  d: {inbox: i}\n",
        Path::new("/srv/c.yaml"),
    )
    .unwrap();
    let token = |name| config.agent(name).unwrap().token();
    assert_eq!(token("a"), Some(TokenSource::Env("A_TOKEN".into())));
    assert_eq!(
        token("b"),
        Some(TokenSource::File(PathBuf::from("/srv/b.token")))
    );
    assert_eq!(
        token("c"),
        Some(TokenSource::File(PathBuf::from(
            "${CREDENTIALS_DIRECTORY}/c"
        )))
    );
    assert_eq!(token("d"), None, "no token of its own: never the owner's");
}

#[test]
fn a_mention_gate_is_at_and_a_login() {
    let config = Config::parse("agents:\n  fixer: {inbox: in}\n", Path::new("/c.yaml")).unwrap();
    let job = |mention: &str| {
        Job::parse(
            &format!("name: j\npolicy:\n  mention: {mention}\n"),
            Path::new("/j.yaml"),
            &config,
        )
    };
    assert_eq!(
        config
            .policy(Some(&job("\"@fixer\"").unwrap()))
            .mention
            .as_deref(),
        Some("@fixer")
    );
    for bad in ["fixer", "\"@\"", "\"@fix er\""] {
        let err = job(bad).unwrap_err().to_string();
        assert!(
            err.starts_with("/j.yaml:3:12: policy.mention: "),
            "{bad}: {err}"
        );
    }
}
