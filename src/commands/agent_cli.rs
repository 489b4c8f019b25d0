//! Commands for agents, so an agent needs no other client: `inbox done`, `thread reply` and
//! `thread resolve`. pr-monitor never posts as a person: every reply is prefixed
//! `🤖 <agent> on behalf of <owner>`. None of these can arm or trigger a merge.

use std::path::Path;

use anyhow::{Context, Result, anyhow};

use crate::app::{App, usage};
use crate::config::AgentDelivery;
use crate::core::memory;
use crate::forge::agent::AgentForge;
use crate::model::PrRef;
use crate::notify::inbox;

/// `inbox done ID [--note TEXT]`: moves the message from `new/` to `cur/` and ends the fix in
/// flight; the next tick judges whether the agent pushed a new commit.
pub fn inbox_done(app: &mut App, id: &str, note: Option<&str>) -> Result<u8> {
    let mut moved = None;
    for (name, agent) in &app.config.agents {
        if let Some(AgentDelivery::Inbox(dir)) = agent.delivery()
            && inbox::holds(dir, id)
        {
            let path = inbox::mark_done(dir, id).map_err(|e| anyhow!(e.message))?;
            moved = Some((name.clone(), path));
            break;
        }
    }
    let pr = fix_done(app, id, note)?;
    if moved.is_none() && pr.is_none() {
        return Err(usage(format!("no message `{id}` in any agent's inbox")));
    }
    if let Some(pr) = &pr {
        let what = match note {
            Some(n) => format!(
                "the agent finished message {id}: {}",
                n.chars().take(memory::NOTE_CHARS).collect::<String>()
            ),
            None => format!("the agent finished message {id}"),
        };
        app.log(pr, what)?;
    }
    if !app.json {
        match &moved {
            Some((agent, path)) => crate::outln!("done: {id} ({agent}) → {}", path.display())?,
            None => crate::outln!("done: {id}")?,
        }
    }
    Ok(0)
}

/// Ends the fix or review feedback in flight sent as message `id`, making its PR due: the
/// next tick judges what the agent did. Returns the PR, if any watch had it in flight.
fn fix_done(app: &mut App, id: &str, note: Option<&str>) -> Result<Option<PrRef>> {
    let Some(watch) = app.store.watch_with_fix(id)? else {
        return Ok(None);
    };
    let at = app.now;
    if app
        .store
        .update_memory(watch.id, |m| memory::message_done(m, id, at, note))?
        != Some(true)
    {
        return Ok(None);
    }
    app.store.make_due(watch.id, at)?;
    Ok(Some(watch.pr))
}

/// The agent that acts on `pr`: the watch's, else its job's, else `agent`.
fn agent_name(app: &App, pr: &PrRef) -> Result<String> {
    let watch = app.store.watch(pr)?;
    Ok(watch
        .and_then(|w| app.policy_for(&w).agent)
        .unwrap_or_else(|| "agent".to_owned()))
}

/// `🤖 <agent> on behalf of <owner>` and the body.
pub fn prefixed(agent: &str, owner: &str, body: &str) -> String {
    format!("🤖 {agent} on behalf of {owner}\n\n{}", body.trim_end())
}

/// `thread reply PR THREAD --body-file F [--agent NAME]`: with `--agent`, on that agent's
/// own token ([`App::agent_forge`]); without, the owner's, signed with the watch's agent.
pub fn reply(
    app: &mut App,
    pr: &PrRef,
    thread: &str,
    body_file: &Path,
    agent: Option<&str>,
) -> Result<u8> {
    let hands = agent
        .map(|name| app.agent_forge(name, pr.forge))
        .transpose()?;
    let body = if body_file == Path::new("-") {
        std::io::read_to_string(std::io::stdin())
            .context("cannot read the reply from standard input")?
    } else {
        std::fs::read_to_string(body_file)
            .with_context(|| format!("cannot read `{}`", body_file.display()))?
    };
    if let Some(hands) = &hands {
        agent_reply(app, hands, pr, thread, &body)?;
    } else {
        if body.trim().is_empty() {
            return Err(usage("the reply is empty"));
        }
        let agent = agent_name(app, pr)?;
        let owner = app.owner(pr.forge).map_err(|e| anyhow!(e))?;
        let text = prefixed(&agent, &owner, &body);
        app.forge(pr.forge)?
            .reply_to_thread(pr, thread, &text)
            .with_context(|| format!("{}: cannot reply to {thread}", pr.url()))?;
        log_if_watched(app, pr, format!("{agent} replied to {thread}"))?;
    }
    if !app.json {
        crate::outln!("replied to {thread} on {}", pr.url())?;
    }
    Ok(0)
}

/// `thread resolve PR THREAD [--agent NAME]` (tokens as for [`reply`]).
pub fn resolve(app: &mut App, pr: &PrRef, thread: &str, agent: Option<&str>) -> Result<u8> {
    if let Some(name) = agent {
        let hands = app.agent_forge(name, pr.forge)?;
        agent_resolve(app, &hands, pr, thread)?;
    } else {
        let agent = agent_name(app, pr)?;
        app.forge(pr.forge)?
            .resolve_thread(pr, thread)
            .with_context(|| format!("{}: cannot resolve {thread}", pr.url()))?;
        log_if_watched(app, pr, format!("{agent} resolved {thread}"))?;
    }
    if !app.json {
        crate::outln!("resolved {thread} on {}", pr.url())?;
    }
    Ok(0)
}

/// The agent answers `thread` on `pr` with its own token, signed `🤖 <agent> on behalf of
/// <owner>` (the owner as the last run recorded them: no owner token is read); a watched PR's
/// history records it. An empty body is a usage error.
pub fn agent_reply(
    app: &mut App,
    hands: &AgentForge,
    pr: &PrRef,
    thread: &str,
    body: &str,
) -> Result<()> {
    if body.trim().is_empty() {
        return Err(usage("the reply is empty"));
    }
    let owner = app.recorded_owner(pr.forge)?;
    hands
        .reply(pr, thread, &prefixed(hands.agent(), &owner, body))
        .with_context(|| format!("{}: cannot reply to {thread}", pr.url()))?;
    log_if_watched(app, pr, format!("{} replied to {thread}", hands.agent()))
}

/// The agent resolves `thread` on `pr` with its own token; a watched PR's history records it.
pub fn agent_resolve(app: &mut App, hands: &AgentForge, pr: &PrRef, thread: &str) -> Result<()> {
    hands
        .resolve(pr, thread)
        .with_context(|| format!("{}: cannot resolve {thread}", pr.url()))?;
    log_if_watched(app, pr, format!("{} resolved {thread}", hands.agent()))
}

fn log_if_watched(app: &mut App, pr: &PrRef, what: String) -> Result<()> {
    if app.store.watch(pr)?.is_some() {
        app.log(pr, what)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn replies_never_pose_as_a_person() {
        assert_eq!(
            super::prefixed("fixer", "octocat", "Done.\n"),
            "🤖 fixer on behalf of octocat\n\nDone."
        );
    }
}
