//! Temporary stand-in until the configuration module lands.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
#[derive(Debug, Clone)]
pub struct Policy {
    pub poll_sec: u64,
    pub idle_poll_sec: u64,
    pub no_checks_grace_sec: u64,
    pub agent: Option<String>,
    pub auto_fix: bool,
}
#[derive(Debug, Clone)]
pub struct Secret(String);
impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}
#[derive(Debug, Clone)]
pub struct GitHubConfig {
    pub api_url: String,
}
impl GitHubConfig {
    pub fn token(&self) -> anyhow::Result<Secret> {
        Ok(Secret(std::env::var("GITHUB_TOKEN")?))
    }
    pub fn graphql_url(&self) -> String {
        format!("{}/graphql", self.api_url)
    }
}
#[derive(Debug, Clone)]
pub struct Job {
    pub name: String,
}
impl Default for Config { fn default() -> Self { Config::load(None).unwrap() } }
#[derive(Debug, Clone)]
pub struct Config {
    pub database: PathBuf,
    pub github: GitHubConfig,
    pub agents: BTreeMap<String, ()>,
    pub jobs: Vec<Job>,
}
impl Config {
    pub fn load(_p: Option<&Path>) -> Result<Config, String> {
        Ok(Config {
            database: "pr-monitor.db".into(),
            github: GitHubConfig {
                api_url: std::env::var("GH_API").unwrap_or_default(),
            },
            agents: BTreeMap::new(),
            jobs: vec![],
        })
    }
    pub fn job(&self, name: &str) -> Option<&Job> {
        self.jobs.iter().find(|j| j.name == name)
    }
    pub fn policy(&self, _job: Option<&Job>) -> Policy {
        Policy {
            poll_sec: 30,
            idle_poll_sec: 300,
            no_checks_grace_sec: 600,
            agent: None,
            auto_fix: true,
        }
    }
    pub fn source(&self) -> Option<&Path> {
        None
    }
}
