//! The page as written: piece after piece from the store, the same bytes as the page of the
//! watches held whole.

use std::collections::BTreeMap;

use chrono::Duration;

use super::*;
use crate::core::decide::tests::{t0, watch};
use crate::model::branch::BranchRef;
use crate::model::watch::{Ci, HistoryEntry, Merge, Watch, Why};
use crate::model::{ForgeKind, PrRef, PrState, Sha};
use crate::store::OutboxMessage;

/// Watches of every need, in several repositories and both forges (two in the same place:
/// need, repository and number), some with history.
fn gallery() -> Vec<(Watch, Vec<HistoryEntry>)> {
    let at = |m: i64| t0() - Duration::minutes(m);
    let entry = |m: i64, what: &str| HistoryEntry {
        at: at(m),
        what: what.into(),
        why: None,
    };
    let mut out = Vec::new();
    for (i, repo) in ["octo/b", "octo/a", "group/c"].iter().enumerate() {
        for number in [3_u64, 1, 2] {
            let mut w = watch();
            w.pr = PrRef::github(repo, number);
            w.status.title = Some(format!("<{repo}> #{number} & more"));
            w.last_tick_at = Some(at(2));
            w.next_tick_at = Some(t0() + Duration::minutes(i64::try_from(number).unwrap()));
            w.status.head_sha = Some(Sha(format!("abcdef{number}{i}")));
            match (3 * i + usize::try_from(number).unwrap()) % 7 {
                0 => w.status.pills.ci = Ci::Lit,
                1 => w.status.pills.cmt = 2,
                2 => w.last_error = Some("not authorized".into()),
                3 => {
                    w.status.pills.ci = Ci::Fixing;
                    w.status.why = Some(Why::FixSent);
                    w.status.attempts = 1;
                }
                4 => w.status.state = PrState::Merged,
                5 => w.paused = true,
                _ => {
                    w.status.merge = Merge::Armed {
                        at: at(9),
                        via: None,
                    };
                }
            }
            let history = if number == 2 {
                vec![
                    entry(9, "first"),
                    entry(5, "ci lit"),
                    entry(4, "sent"),
                    entry(3, "again"),
                ]
            } else {
                Vec::new()
            };
            out.push((w, history));
        }
    }
    let mut gitlab = watch();
    gitlab.pr = PrRef {
        forge: ForgeKind::GitLab,
        repo: "octo/a".into(),
        number: 1,
    };
    // In the same place as GitHub's octo/a#1 (merged too): the older watch first.
    gitlab.status.state = PrState::Merged;
    out.push((gitlab, vec![entry(1, "read")]));
    out
}

fn store_of(gallery: &[(Watch, Vec<HistoryEntry>)]) -> Store {
    let mut store = Store::open_in_memory().unwrap();
    for (w, history) in gallery {
        store.keep_watch(w, history).unwrap();
    }
    store
}

fn config() -> crate::config::Config {
    crate::config::Config::default()
}

/// The page of the store's watches loaded whole, as one string.
fn whole_page(store: &Store) -> String {
    let watches = store.watches().unwrap();
    let prs: Vec<&PrRef> = watches.iter().map(|w| &w.pr).collect();
    let history: BTreeMap<i64, Vec<HistoryEntry>> = watches
        .iter()
        .map(|w| w.id)
        .zip(
            store
                .recent_history(&prs, status_page::LAST_ACTIONS)
                .unwrap(),
        )
        .collect();
    status_page::tests::render(&status_page::tests::PageInput {
        watches: &watches,
        branches: &store.branch_watches().unwrap(),
        undelivered: &store.outbox_problems().unwrap(),
        history: &history,
        web: &config().web_roots(),
        now: t0(),
    })
}

fn streamed(store: &Store, chunk: usize) -> String {
    let mut out = Vec::new();
    page(
        &config(),
        store,
        &store.standings().unwrap(),
        t0(),
        chunk,
        &mut out,
    )
    .unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_page_written_piece_by_piece_is_the_page_of_the_watches_held_whole() {
    let mut store = store_of(&gallery());
    store
        .sync_branch_watches(
            &[(
                BranchRef {
                    forge: ForgeKind::GitHub,
                    repo: "octo/a".into(),
                    name: "main".into(),
                },
                "nightly".into(),
            )],
            t0(),
        )
        .unwrap();
    store
        .enqueue(&[OutboxMessage {
            id: "m1".into(),
            pr: PrRef::github("octo/a", 1).url(),
            channel: "slack".into(),
            kind: "notice".into(),
            subject: "CI <failed>".into(),
            payload: "{}".into(),
            created_at: t0(),
        }])
        .unwrap();
    store.mark_failed(&["m1"], "HTTP 500", 0, false).unwrap();
    let whole = whole_page(&store);
    assert!(whole.contains("Undelivered messages") && whole.contains("class=\"pr branch"));
    for chunk in [1, 2, 4, 100] {
        assert_eq!(streamed(&store, chunk), whole, "chunks of {chunk}");
    }
    assert_eq!(text(&config(), &store, t0()).unwrap(), whole);
    let cards: Vec<usize> = (0..7)
        .map(|need| {
            whole
                .find(&format!("class=\"pr need-{need}\""))
                .expect("a card of each need")
        })
        .collect();
    assert!(cards.is_sorted(), "by need: {cards:?}");
    let (github, gitlab) = (
        whole.find("pr-octo-a-1\"").unwrap(),
        whole.rfind("pr-octo-a-1\"").unwrap(),
    );
    assert!(
        github < gitlab && whole[github..gitlab].contains("PR #1 merged"),
        "{whole}"
    );
}

#[test]
fn an_empty_store_pages_as_nothing_watched() {
    let store = Store::open_in_memory().unwrap();
    let page = streamed(&store, 2);
    assert_eq!(page, whole_page(&store));
    assert!(page.contains("Nothing is watched."), "{page}");
}

#[test]
fn the_page_file_is_written_in_place_with_its_mode_and_secrets_masked() {
    let secret = "page-secret-7f3a9c1e5b";
    crate::secrets::hold(secret);
    let mut gallery = gallery();
    gallery[0].0.status.title = Some(format!("leaks {secret} here"));
    let store = store_of(&gallery);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out/status.html");
    let mut config = config();
    config.report.html_path = Some(path.clone());
    write(&config, &store, &store.standings().unwrap(), t0()).unwrap();
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(written, crate::secrets::mask(&whole_page(&store)));
    assert!(!written.contains(secret) && written.contains("leaks *** here"));
    assert!(!path.with_extension("tmp").exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, config.report.file_mode());
}
