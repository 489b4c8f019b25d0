//! pr-monitor drives open pull requests (GitHub) and merge requests (GitLab) to merged.
//!
//! Each tick loads every watched PR that is due from SQLite and runs
//! **detect → remediate → reconcile merge → report**: a forge client reads a [`model::Snapshot`]
//! of each PR, the pure [`decide`] core turns stored state + snapshot + policy + clock into a
//! [`plan::Plan`], the shell applies the plan's actions and records the PR's new state,
//! history and next tick in one transaction.

pub mod agent_cli;
pub mod app;
pub mod budget;
pub mod check;
pub mod checks;
pub mod chip;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod decide;
pub mod deferral;
pub mod detect;
pub mod execute;
pub mod feedback;
pub mod flake;
pub mod focus;
pub mod forge;
pub mod holder;
pub mod html;
pub mod intent;
pub mod jobs;
pub mod logging;
pub mod logs;
pub mod message;
pub mod metrics;
pub mod model;
pub mod notify;
pub mod output;
pub mod owner;
pub mod pages;
pub mod palette;
pub mod plan;
pub mod pool;
pub mod private;
pub mod progress;
pub mod read;
pub mod report;
pub mod schedule;
pub mod secrets;
pub mod status_page;
pub mod status_view;
pub mod stdout;
pub mod store;
pub mod terminal;
pub mod text;
pub mod tick;
pub mod watch;
pub mod web;
pub mod when;
