//! `TestEnv`: a temporary folder with a config pointing at a fresh fake GitHub, and a runner
//! for the real `pr-monitor` binary with `--config` and `--now`. Tests read as scenarios:
//!
//! ```ignore
//! let env = TestEnv::new();
//! env.gh.world(|w| { w.pr("octo/app", 1); });
//! env.ok(&["watch", "add", "octo/app#1"]);
//! env.ok(&["run"]);
//! assert_eq!(env.status("octo/app#1")["state"], "open");
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use super::fake_github::{DEFAULT_NOW, FakeGitHub};

/// What a run of the binary printed.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

impl From<Output> for Out {
    fn from(o: Output) -> Self {
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// A temporary pr-monitor installation talking to a fake GitHub.
pub struct TestEnv {
    pub gh: FakeGitHub,
    pub dir: tempfile::TempDir,
    /// The instant passed as `--now`.
    pub now: String,
    /// Extra YAML appended to the config file.
    extra: String,
    /// Extra environment variables for every run.
    pub vars: Vec<(String, String)>,
    /// `github.web_url`: where links and PR addresses point (the API is the fake's).
    github_web_url: String,
    /// `github.api_url`, when not the fake's own (e.g. a TLS front of it).
    github_api_url: Option<String>,
    /// The agent `fixer`'s own forge token (`token_env: PRM_TEST_AGENT_TOKEN`), once given.
    agent_token: Option<String>,
    /// More keys of the `github:` block (indented YAML lines).
    github_keys: String,
}

impl TestEnv {
    /// A fake GitHub, and a config with one agent `fixer` (logins `fixer-bot`, a folder inbox).
    pub fn new() -> Self {
        Self::with_config("")
    }

    /// Like [`TestEnv::new`], with `extra` YAML appended to the config (e.g. a `notify:` block).
    pub fn with_config(extra: &str) -> Self {
        let env = TestEnv {
            gh: FakeGitHub::start(),
            dir: tempfile::tempdir().expect("a temp dir"),
            now: DEFAULT_NOW.to_owned(),
            extra: extra.to_owned(),
            vars: Vec::new(),
            github_web_url: "https://github.com".to_owned(),
            github_api_url: None,
            agent_token: None,
            github_keys: String::new(),
        };
        env.write_config();
        env
    }

    /// Like [`TestEnv::with_config`], with the owner's notices posted to the Slack webhook
    /// `slack_url` (an `HttpSink`'s) and `agents` (more agents' YAML, indented under
    /// `agents:`) beside `fixer`.
    pub fn with_slack(slack_url: &str, agents: &str) -> Self {
        let mut env = Self::with_config(&format!(
            "{agents}notify:\n  slack:\n    webhook_url_env: PRM_TEST_SLACK\n"
        ));
        env.vars
            .push(("PRM_TEST_SLACK".into(), slack_url.to_owned()));
        env
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("config.yaml")
    }

    pub fn inbox(&self) -> PathBuf {
        self.dir.path().join("inbox/fixer")
    }

    fn write_config(&self) {
        let agent_token = if self.agent_token.is_some() {
            "    token_env: PRM_TEST_AGENT_TOKEN\n"
        } else {
            ""
        };
        let yaml = format!(
            "database: state.db\n\
             github:\n  api_url: {}\n  web_url: {}\n  token_env: PRM_TEST_GITHUB_TOKEN\n{}\
             agents:\n  fixer:\n    inbox: inbox/fixer\n    logins: [fixer-bot]\n{agent_token}{}",
            self.github_api_url.clone().unwrap_or_else(|| self.gh.url()),
            self.github_web_url,
            self.github_keys,
            self.extra
        );
        std::fs::write(self.config_path(), yaml).expect("write the config");
    }

    /// Makes `url` the GitHub web address (`github.web_url`) from the next run on.
    pub fn set_github_web_url(&mut self, url: &str) {
        url.clone_into(&mut self.github_web_url);
        self.write_config();
    }

    /// Adds `yaml` (lines indented two spaces) to the `github:` block from the next run on.
    pub fn set_github_keys(&mut self, yaml: &str) {
        yaml.clone_into(&mut self.github_keys);
        self.write_config();
    }

    /// Makes `url` the GitHub API address (`github.api_url`) from the next run on.
    pub fn set_github_api_url(&mut self, url: &str) {
        self.github_api_url = Some(url.to_owned());
        self.write_config();
    }

    /// Gives the agent `fixer` its own forge token (`token_env`), in the config and in every
    /// run's environment.
    pub fn set_agent_token(&mut self, token: &str) {
        self.agent_token = Some(token.to_owned());
        self.write_config();
    }

    /// Writes `jobs/<name>.yaml`.
    pub fn job(&self, name: &str, yaml: &str) {
        let dir = self.dir.path().join("jobs");
        std::fs::create_dir_all(&dir).expect("jobs dir");
        std::fs::write(dir.join(format!("{name}.yaml")), yaml).expect("write a job");
    }

    /// Watches `prs` for the agent `fixer`, merge armed: `watch add --agent fixer
    /// --merge-when-ready PR…`.
    pub fn watch_armed_for_fixer(&self, prs: &[&str]) {
        let mut args = vec!["watch", "add", "--agent", "fixer", "--merge-when-ready"];
        args.extend_from_slice(prs);
        self.ok(&args);
    }

    /// Makes the database refuse every new intent, as a full disk would (`false`: accept them
    /// again).
    pub fn refuse_intents(&self, refuse: bool) {
        let db =
            rusqlite::Connection::open(self.dir.path().join("state.db")).expect("the database");
        let sql = if refuse {
            "CREATE TRIGGER refuse_intents BEFORE INSERT ON intents
             BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;"
        } else {
            "DROP TRIGGER refuse_intents"
        };
        db.execute_batch(sql).expect("the refusing trigger");
    }

    /// Writes the job `agentic`: agent `fixer`, review feedback sent to the agent.
    pub fn agentic_job(&self) {
        self.job(
            "agentic",
            "name: agentic\npolicy:\n  agent: fixer\n  reviews: agent\n",
        );
    }

    /// Makes PR `number` of `repo` on the fake GitHub with its defaults (open, mergeable, one
    /// head commit by the viewer, no checks): `w.pr(repo, number)`.
    pub fn with_pr(&self, repo: &str, number: u64) {
        self.gh.world(|w| {
            w.pr(repo, number);
        });
    }

    /// Moves both clocks (ours and the fake's) by `secs`.
    pub fn advance(&mut self, secs: i64) {
        let t = chrono::DateTime::parse_from_rfc3339(&self.now).expect("now")
            + chrono::Duration::seconds(secs);
        self.now = t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let now = self.now.clone();
        self.gh.world(|w| w.set_now(&now));
    }

    /// Runs `pr-monitor --config … --now … ARGS`.
    pub fn run(&self, args: &[&str]) -> Out {
        self.run_in(self.dir.path(), args)
    }

    /// Runs with another config file.
    pub fn run_with_config(&self, config: &Path, args: &[&str]) -> Out {
        self.command(self.dir.path(), config, args)
    }

    pub fn run_in(&self, cwd: &Path, args: &[&str]) -> Out {
        self.command(cwd, &self.config_path(), args)
    }

    fn command(&self, cwd: &Path, config: &Path, args: &[&str]) -> Out {
        self.prepared(cwd, config, args)
            .output()
            .expect("run pr-monitor")
            .into()
    }

    /// Starts `pr-monitor --config … --now … ARGS` and returns at once, for runs that overlap.
    pub fn spawn(&self, args: &[&str]) -> std::process::Child {
        self.prepared(self.dir.path(), &self.config_path(), args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start pr-monitor")
    }

    /// Starts `pr-monitor ARGS` and kills it with SIGKILL once `done` says it got far enough.
    pub fn run_killed_when(&self, args: &[&str], done: impl Fn() -> bool) {
        let mut child = self.spawn(args);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !done() {
            assert!(
                std::time::Instant::now() < deadline,
                "{args:?} never got that far"
            );
            std::thread::yield_now();
        }
        child.kill().expect("SIGKILL the run");
        child.wait().expect("reap the run");
    }

    /// `pr-monitor --config … --now … ARGS`, ready to run, for a test that wires its own
    /// standard streams (a pseudo-terminal).
    pub fn command_for(&self, args: &[&str]) -> Command {
        self.prepared(self.dir.path(), &self.config_path(), args)
    }

    fn prepared(&self, cwd: &Path, config: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_pr-monitor"));
        command
            .current_dir(cwd)
            .arg("--config")
            .arg(config)
            .arg("--now")
            .arg(&self.now)
            .args(args)
            .env("PRM_TEST_GITHUB_TOKEN", self.gh.token())
            .envs(self.agent_token.iter().map(|t| ("PRM_TEST_AGENT_TOKEN", t)))
            .env("RUST_BACKTRACE", "0")
            .env("NO_PROXY", "127.0.0.1,localhost")
            .envs(self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env_remove("PR_MONITOR_CONFIG")
            .env_remove("PR_MONITOR_DB")
            .env_remove("PR_MONITOR_NOW");
        command
    }

    /// Runs and expects exit 0.
    pub fn ok(&self, args: &[&str]) -> Out {
        let out = self.run(args);
        assert_eq!(
            out.code, 0,
            "pr-monitor {args:?} failed:\n{}\n{}",
            out.stdout, out.stderr
        );
        out
    }

    /// `status --json` of one PR (from the list, so it has the contract's shape).
    pub fn status(&self, pr: &str) -> Value {
        let all = self.ok(&["status", "--json"]).json();
        let want = pr
            .parse::<pr_monitor::model::PrRef>()
            .expect("a PR reference");
        all.as_array()
            .and_then(|a| {
                a.iter()
                    .find(|s| {
                        s["forge"] == want.forge.as_str()
                            && s["repo"] == want.repo.as_str()
                            && s["number"] == want.number
                    })
                    .cloned()
            })
            .unwrap_or_else(|| panic!("{pr} is not in status: {all}"))
    }

    /// The pills of one PR's `status --json` (`ci`, `ci_fixing`, `cnf`, `cmt`, …).
    pub fn pills(&self, pr: &str) -> Value {
        self.status(pr)["pills"].clone()
    }

    /// The `what` of each entry of one PR's history (`status PR --json`), in its order.
    pub fn history(&self, pr: &str) -> Vec<String> {
        let history = self.ok(&["status", pr, "--json"]).json()["history"].clone();
        history
            .as_array()
            .unwrap_or_else(|| panic!("{pr}: no history array: {history}"))
            .iter()
            .map(|h| {
                h["what"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{pr}: a history entry without `what`: {h}"))
                    .to_owned()
            })
            .collect()
    }

    /// One PR's history (`status PR --json`) as JSON text, for "it says X somewhere" checks.
    pub fn history_text(&self, pr: &str) -> String {
        self.ok(&["status", pr, "--json"]).json()["history"].to_string()
    }

    /// The messages in the fixer's inbox `new/` folder, oldest name first.
    pub fn inbox_messages(&self) -> Vec<Value> {
        Self::messages_in(&self.inbox())
    }

    /// The messages in the `new/` folder of the inbox at `inbox` (relative to the test's
    /// folder: `inbox/claude`), oldest name first.
    pub fn inbox_messages_of(&self, inbox: &str) -> Vec<Value> {
        Self::messages_in(&self.dir.path().join(inbox))
    }

    fn messages_in(inbox: &Path) -> Vec<Value> {
        let dir = inbox.join("new");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        files
            .iter()
            .map(|f| {
                serde_json::from_str(&std::fs::read_to_string(f).expect("read message"))
                    .expect("message JSON")
            })
            .collect()
    }
}
