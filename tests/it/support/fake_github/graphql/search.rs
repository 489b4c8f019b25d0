//! GitHub's `search` over pull requests, for the qualifiers pr-monitor sends: `is:pr`,
//! `is:open` / `is:closed` / `is:merged`, `author:LOGIN` (`@me`: the token's user) and
//! `repo:OWNER/NAME`. Any other word is refused, so a query this fake would misread fails
//! loudly instead of matching everything.

use super::super::world::{PrState, World};

/// The pull requests `query` finds, as (repository, number), ordered by repository then
/// number; `Err` names the qualifier this fake does not model.
pub fn pull_requests(w: &World, query: &str) -> Result<Vec<(String, u64)>, String> {
    let mut is_pr = false;
    let mut state: Option<PrState> = None;
    let mut author: Option<String> = None;
    let mut repo: Option<String> = None;
    for word in query.split_whitespace() {
        match word.split_once(':') {
            Some(("is", "pr")) => is_pr = true,
            Some(("is", "open")) => state = Some(PrState::Open),
            Some(("is", "closed")) => state = Some(PrState::Closed),
            Some(("is", "merged")) => state = Some(PrState::Merged),
            Some(("author", "@me")) => author = Some(w.actor()),
            Some(("author", login)) => author = Some(login.to_owned()),
            Some(("repo", r)) => repo = Some(r.to_owned()),
            _ => return Err(format!("the fake GitHub's search does not model `{word}`")),
        }
    }
    if !is_pr {
        return Err("the fake GitHub's search finds pull requests only: add `is:pr`".into());
    }
    Ok(w.repos
        .values()
        .filter(|r| {
            repo.as_deref()
                .is_none_or(|want| want.eq_ignore_ascii_case(&r.full_name))
        })
        .flat_map(|r| r.prs.values().map(move |p| (r, p)))
        .filter(|(_, p)| state.is_none_or(|s| s == p.state))
        .filter(|(_, p)| {
            author.as_deref().is_none_or(|a| {
                p.author
                    .as_deref()
                    .is_some_and(|pa| pa.eq_ignore_ascii_case(a))
            })
        })
        .map(|(r, p)| (r.full_name.clone(), p.number))
        .collect())
}
