//! pr-monitor drives open pull requests (GitHub) and merge requests (GitLab) to merged.
//!
//! Each tick loads every watched PR that is due from SQLite and runs
//! **detect → remediate → reconcile merge → report**: a forge client reads a [`model::Snapshot`]
//! of each PR, the pure [`core::decide`] core turns stored state + snapshot + policy + clock into
//! a [`model::plan::Plan`], the shell applies the plan's actions and records the PR's new state,
//! history and next tick in one transaction.
//!
//! The modules by layer:
//! - [`model`]: the vocabulary the core and the shell exchange (snapshots, watches, the plan,
//!   intents). Plain data.
//! - [`core`]: the functional core. Decisions and words as pure functions: nothing there reads
//!   the clock, the environment, a file or the network.
//! - [`view`]: what a person sees (chips, status lines, the status page, times, links), as pure
//!   functions of stored state.
//! - [`tick`]: one run, imperative: due watches → leases → reads → detect → decide → execute →
//!   record → deliver.
//! - [`commands`]: the program and one module per command family; [`app`] is the context they
//!   run in and [`cli`] the command line.
//! - The edges: [`config`], [`forge`] (the clients), [`store`] (SQLite), [`notify`] (the
//!   channels), and the process's own plumbing: [`address`], [`clock`], [`holder`], [`http`], [`locked`],
//!   [`logging`], [`private`], [`secrets`], [`stdout`], [`terminal`], [`tls`].

pub mod model;

pub mod core;

pub mod view;

pub mod tick;

pub mod app;
pub mod cli;
pub mod commands;

pub mod config;
pub mod forge;
pub mod notify;
pub mod store;

pub mod address;
pub mod checkout;
pub mod clock;
pub mod holder;
pub mod http;
pub mod locked;
pub mod logging;
pub mod private;
pub mod secrets;
pub mod stdout;
pub mod terminal;
pub mod tls;
pub mod web_roots;
