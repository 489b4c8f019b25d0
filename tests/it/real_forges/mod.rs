//! The forges as they really behave, beyond the happy path the other tests model: limits
//! that name no time, merged-results pipelines, queue removals on the timeline, logs on
//! another host, reopened PRs.

mod ids;
mod limits;
mod logs;
mod nulls;
mod pipelines;
mod queue;
mod rebase;
mod reopen;
