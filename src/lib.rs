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
//!   [`logging`], [`malloc`], [`private`], [`secrets`], [`stdout`], [`terminal`], [`tls`].
//!
//! Only the modules the end-to-end tests and benchmarks name are `pub`; the rest are
//! `pub(crate)`, and `unreachable_pub` keeps every item's visibility as narrow as its use.

#![warn(unreachable_pub)]

pub mod model;

pub(crate) mod core;

pub mod view;

pub mod tick;

pub(crate) mod app;
pub mod cli;
pub mod commands;

pub mod config;
pub mod forge;
pub mod notify;
pub mod store;

pub(crate) mod address;
pub(crate) mod checkout;
pub(crate) mod clock;
pub(crate) mod holder;
pub(crate) mod http;
pub(crate) mod locked;
pub mod logging;
pub(crate) mod malloc;
pub(crate) mod private;
pub(crate) mod secrets;
pub(crate) mod stdout;
pub(crate) mod terminal;
pub(crate) mod tls;
pub(crate) mod web_roots;
