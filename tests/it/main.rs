//! pr-monitor's integration tests, one binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agreement;
mod check;
mod economy;
mod fake_github_selftest;
mod fixtures;
mod gitlab;
mod graphql_schema;
mod hardening;
mod kubernetes;
mod logging;
mod merge;
mod metrics_file;
mod notify_transports;
mod page_browser;
mod paths;
mod queue;
mod reliability;
mod remediate;
mod report;
mod rotation;
mod status;
mod support;
mod systemd_units;
mod tick;
mod train;
