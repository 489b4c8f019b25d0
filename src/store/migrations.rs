//! The database schema, as an append-only list of migrations. `PRAGMA user_version` records
//! how many have been applied; a database from a newer pr-monitor is refused, never altered.

/// Migration `i` brings the schema from version `i` to `i + 1`. Append only; never edit one
/// that has shipped.
pub(super) const MIGRATIONS: &[&str] = &[
    // 1: watches, seen items, audit history.
    "
    CREATE TABLE watches (
        id            INTEGER PRIMARY KEY,
        forge         TEXT NOT NULL,
        repo          TEXT NOT NULL,
        number        INTEGER NOT NULL,
        job           TEXT,
        agent         TEXT,
        auto_fix      INTEGER,
        paused        INTEGER NOT NULL DEFAULT 0,
        added_at      TEXT NOT NULL,
        state         TEXT NOT NULL DEFAULT 'open',
        title         TEXT,
        head_sha      TEXT,
        head_seen_at  TEXT,
        head_ref      TEXT,
        base_ref      TEXT,
        pill_ci       INTEGER NOT NULL DEFAULT 0,
        pill_ci_fixing INTEGER NOT NULL DEFAULT 0,
        pill_cnf      INTEGER NOT NULL DEFAULT 0,
        pill_cmt      INTEGER NOT NULL DEFAULT 0,
        why           TEXT,
        attempts      INTEGER NOT NULL DEFAULT 0,
        merge_armed   INTEGER NOT NULL DEFAULT 0,
        merge_via     TEXT,
        armed_at      TEXT,
        memory        TEXT NOT NULL DEFAULT '{}',
        next_tick_at  TEXT,
        last_tick_at  TEXT,
        last_error    TEXT,
        lease_owner   TEXT,
        lease_until   INTEGER,
        UNIQUE (forge, repo, number)
    ) STRICT;
    CREATE INDEX watches_due ON watches (next_tick_at) WHERE paused = 0 AND next_tick_at IS NOT NULL;

    CREATE TABLE seen (
        pr          TEXT NOT NULL,
        source      TEXT NOT NULL,
        item_id     TEXT NOT NULL,
        updated_at  TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (pr, source, item_id)
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE history (
        id        INTEGER PRIMARY KEY,
        pr        TEXT NOT NULL,
        at        TEXT NOT NULL,
        what      TEXT NOT NULL,
        why       TEXT
    ) STRICT;
    CREATE INDEX history_pr ON history (pr, id);
    ",
    // 2: the durable outbox, and the log-tail cache.
    "
    CREATE TABLE outbox (
        id            TEXT PRIMARY KEY,
        pr            TEXT NOT NULL,
        channel       TEXT NOT NULL,
        kind          TEXT NOT NULL,
        subject       TEXT NOT NULL,
        payload       TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        attempts      INTEGER NOT NULL DEFAULT 0,
        next_attempt  INTEGER NOT NULL DEFAULT 0,
        delivered_at  TEXT,
        last_error    TEXT,
        permanent     INTEGER NOT NULL DEFAULT 0
    ) STRICT;
    CREATE INDEX outbox_pending ON outbox (next_attempt) WHERE delivered_at IS NULL AND permanent = 0;

    CREATE TABLE meta (
        key    TEXT PRIMARY KEY,
        value  TEXT NOT NULL
    ) STRICT;

    CREATE TABLE log_cache (
        forge          TEXT NOT NULL,
        job_id         INTEGER NOT NULL,
        completed_at   TEXT NOT NULL,
        tail           TEXT NOT NULL,
        classification TEXT NOT NULL,
        PRIMARY KEY (forge, job_id, completed_at)
    ) STRICT, WITHOUT ROWID;
    ",
    // 3: metrics that survive across runs (counters and last-known gauges), by name and labels.
    "
    CREATE TABLE metrics (
        name    TEXT NOT NULL,
        labels  TEXT NOT NULL,
        kind    TEXT NOT NULL,
        value   REAL NOT NULL,
        PRIMARY KEY (name, labels)
    ) STRICT, WITHOUT ROWID;
    ",
    // 4: who claimed an outbox row for delivery (a lease holder's key), so a run whose
    // process is gone has its claims taken over at once rather than at their expiry.
    "
    ALTER TABLE outbox ADD COLUMN claim_owner TEXT;
    ",
    // 5: intents: each forge write recorded before it is made, reconciled by the next read.
    "
    CREATE TABLE intents (
        id          INTEGER PRIMARY KEY,
        watch_id    INTEGER NOT NULL REFERENCES watches (id) ON DELETE CASCADE,
        kind        TEXT NOT NULL,
        head        TEXT NOT NULL,
        detail      TEXT NOT NULL DEFAULT '',
        created_at  TEXT NOT NULL,
        resolved_at TEXT
    ) STRICT;
    CREATE INDEX intents_open ON intents (watch_id) WHERE resolved_at IS NULL;
    ",
    // 6: each watch's last full read and the summary fingerprint seen just before it, so an
    // unchanged summary reuses the read instead of paying for it again.
    "
    CREATE TABLE last_reads (
        watch_id  INTEGER PRIMARY KEY REFERENCES watches (id) ON DELETE CASCADE,
        summary   TEXT NOT NULL,
        snapshot  TEXT NOT NULL
    ) STRICT;
    ",
    // 7: the forge's rate-limit budget as its last answer told it, per host, token
    // fingerprint and resource, with what a PR read cost on it last run (milli-points).
    "
    CREATE TABLE rate_limits (
        host         TEXT NOT NULL,
        identity     TEXT NOT NULL,
        resource     TEXT NOT NULL,
        lim          INTEGER,
        remaining    INTEGER NOT NULL,
        used         INTEGER,
        reset_at     INTEGER,
        seen_at      INTEGER NOT NULL,
        milli_per_pr INTEGER,
        PRIMARY KEY (host, identity, resource)
    ) STRICT, WITHOUT ROWID;
    ",
    // 8: the armed watches in line to update their branch (the last tick saw them behind, or
    // holding the turn), so each chunk of a tick finds them without reading every armed
    // watch. A damaged memory is never in line. `Store::armed_in_line` repeats this WHERE.
    "
    CREATE INDEX watches_in_line ON watches (id)
        WHERE merge_armed = 1 AND paused = 0 AND state = 'open'
          AND CASE WHEN json_valid(memory)
                   THEN json_extract(memory, '$.behind') OR json_extract(memory, '$.holds_update_turn')
                   ELSE 0 END;
    ",
    // 9: beside each kept read, what a summary read needs of it (`store::reads::KeptHints`):
    // a group of PRs is summarised without loading its snapshots. NULL: worked out from the
    // snapshot (reads kept before this column).
    "
    ALTER TABLE last_reads ADD COLUMN hints TEXT;
    ",
    // 10: the due index covers the due query (its order, each watch's id and forge, the job it
    // may be narrowed to), so choosing among ten thousand watches reads no table row.
    "
    DROP INDEX watches_due;
    CREATE INDEX watches_due ON watches (next_tick_at, id, forge, job)
        WHERE paused = 0 AND next_tick_at IS NOT NULL;
    ",
    // 11: watched branches (a job's `branch:` entries): the head and its checks at the last
    // look, what was sent about them (`memory`: `model::branch::BranchMemory`), and when to
    // look again.
    "
    CREATE TABLE branch_watches (
        id            INTEGER PRIMARY KEY,
        forge         TEXT NOT NULL,
        repo          TEXT NOT NULL,
        branch        TEXT NOT NULL,
        job           TEXT NOT NULL,
        head_sha      TEXT,
        memory        TEXT NOT NULL DEFAULT '{}',
        next_tick_at  TEXT,
        last_tick_at  TEXT,
        last_error    TEXT,
        UNIQUE (forge, repo, branch)
    ) STRICT;
    ",
    // 12: a kept read's summary fingerprint is a digest of the summary (`core::hash::Fingerprint`),
    // no longer its whole text. SQLite cannot make the digest, so upgrading past this turns the
    // texts kept before into their digests in Rust (`store::reads::digest_kept_summaries`, run
    // when the version was below `SUMMARY_DIGESTS`): a read kept before still matches.
    "
    -- kept summaries become digests (see above)
    ",
    // 13: a kept read's hints (`store::reads::KeptHints`, with the quiet decision settled on
    // it) in a table of their own, keyed like `last_reads`: a group's hints are loaded, and a
    // chunk's settled decisions written, without reading or writing the snapshots beside them
    // (a row's later columns sit behind its snapshot's overflow pages, and an update rewrites
    // the whole row). The hints kept move over as they are (`last_reads.hints` is read no
    // more); a read without hints still has none, and they are worked out from its snapshot.
    "
    CREATE TABLE read_hints (
        watch_id  INTEGER PRIMARY KEY REFERENCES last_reads (watch_id) ON DELETE CASCADE,
        hints     TEXT NOT NULL
    ) STRICT;
    INSERT INTO read_hints (watch_id, hints)
        SELECT watch_id, hints FROM last_reads WHERE hints IS NOT NULL;
    ",
    // 14: a kept read's hints as columns (`store::reads::KeptHints`), the fingerprint they go
    // with beside them: a group's hints are read without a JSON text to parse or an instant to
    // read from text. The settled decision's instants are nanoseconds since the Unix epoch, its
    // digests their 64 bits signed; all five NULL: none. `threads`: the unresolved threads'
    // ids, one per line. Upgrading past this moves each read's hints over in Rust, as the last
    // build read them (`store::reads::move_kept_hints`, run when the version was below
    // `HINT_COLUMNS`, which then drops `read_hints`): every kept read has its hints after it.
    "
    CREATE TABLE kept_hints (
        watch_id         INTEGER PRIMARY KEY REFERENCES last_reads (watch_id) ON DELETE CASCADE,
        summary          TEXT NOT NULL,
        behind_by        INTEGER,
        threads          TEXT NOT NULL,
        settled_at       INTEGER,
        settled_until    INTEGER,
        settled_row      INTEGER,
        settled_context  INTEGER,
        settled_every    INTEGER
    ) STRICT;
    ",
    // 15: each watch's cross-repository flag (`memory.cross_repository`: its head is a fork's)
    // in a column of its own, written with `memory` by the store (`Store::record`,
    // `Store::update_memory`; its other writes of `memory` leave the flag as it is): a group's
    // glance tells which branches a read compares without parsing every `memory`. A new watch's
    // `memory` (`{}`) is no fork's; NULL: the `memory` was no JSON at upgrade.
    "
    ALTER TABLE watches ADD COLUMN cross_repository INTEGER DEFAULT 0;
    UPDATE watches SET cross_repository = CASE WHEN json_valid(memory)
        THEN COALESCE(memory ->> '$.cross_repository', 0) END;
    ",
];

/// The version from which kept summaries are digests (migration 12).
pub(super) const SUMMARY_DIGESTS: i64 = 12;

/// The version from which kept hints are columns (migration 14).
pub(super) const HINT_COLUMNS: i64 = 14;

/// The schema version this build writes.
pub(super) fn latest() -> i64 {
    i64::try_from(MIGRATIONS.len()).unwrap_or(i64::MAX)
}
