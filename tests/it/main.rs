//! pr-monitor's integration tests, one binary.

mod fake_github_selftest;
mod graphql_schema;
mod merge;
mod remediate;
mod support;
mod tick;
