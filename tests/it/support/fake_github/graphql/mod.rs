//! A small GraphQL executor over the fake's [`World`].
//!
//! Documents are parsed and validated with `apollo_compiler` against GitHub's public schema
//! (`tests/fixtures/github/schema.docs.graphql`, loaded once per process), so a document GitHub
//! would refuse is refused here too, with GitHub's wording for the common mistakes (unknown
//! field, unused fragment). Execution uses `apollo_compiler`'s resolver engine (aliases,
//! fragments, inline fragments, `__typename`, variables, null propagation, result coercion)
//! with one resolver per GitHub type (`resolve.rs`). A field the schema has but this fake does not
//! model answers a loud `FAKE_NOT_IMPLEMENTED` error: add it here.
//!
//! Before execution a static pass checks GitHub's limits the way GitHub does: every connection
//! needs `first` or `last` in 0..=100, and the whole query may ask for at most 500,000 nodes.
//! The same pass computes the query's [`Cost`] with GitHub's documented formula: for each
//! connection, one request per parent object it can appear under (every enclosing connection
//! assumed full), summed, divided by 100, rounded, at least 1 point. `rateLimit { cost
//! nodeCount }` answers it and the fake charges it to the world's GraphQL budget.
//!
//! One deliberate schema change: every `databaseId: Int` is served as an unchecked number, so
//! job and workflow-run ids beyond 32 bits (as on real GitHub) reach the client.

use std::sync::OnceLock;

use apollo_compiler::collections::HashMap;
use apollo_compiler::response::JsonMap;
use apollo_compiler::schema::Implementers;
use apollo_compiler::validation::Valid;
use apollo_compiler::{ExecutableDocument, Name, Schema};
use serde_json::Value;

mod prepare;
mod resolve;
mod search;

pub use prepare::prepare;

/// Where GitHub's schema lives in the crate.
pub const SCHEMA_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/github/schema.docs.graphql"
);

/// GitHub's most nodes per query.
pub const MAX_NODES: u64 = 500_000;

struct Loaded {
    schema: Valid<Schema>,
    implementers: HashMap<Name, Implementers>,
}

fn loaded() -> &'static Loaded {
    static LOADED: OnceLock<Loaded> = OnceLock::new();
    LOADED.get_or_init(|| {
        let sdl = std::fs::read_to_string(SCHEMA_PATH)
            .expect("read tests/fixtures/github/schema.docs.graphql");
        // Serve `databaseId` unchecked (see the module doc); the SDL's duplicate fields in
        // EnterpriseOwnerInfo make strict validation fail, the partial schema is complete.
        let sdl = sdl.replace("databaseId: Int\n", "databaseId: FakeUncheckedInt\n")
            + "\nscalar FakeUncheckedInt\n";
        let schema = Schema::parse_and_validate(sdl, "schema.docs.graphql")
            .unwrap_or_else(|e| Valid::assume_valid(e.partial));
        let implementers = schema.implementers_map();
        Loaded {
            schema,
            implementers,
        }
    })
}

/// Loads the schema now (it takes about half a second in a debug build), so the first request
/// of a test does not pay for it inside a client's timeout.
pub fn warm_up() {
    loaded();
}

/// Whether GitHub's schema lets `ty.field` be null (`None`: no such field).
pub fn nullable(ty: &str, field: &str) -> Option<bool> {
    let def = loaded().schema.type_field(ty, field).ok()?;
    Some(!def.ty.is_non_null())
}

// ── request preparation ─────────────────────────────────────────────────────────────────────

/// What a query costs on GitHub's GraphQL budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cost {
    /// Points: connection requests / 100, rounded, at least 1.
    pub points: u64,
    /// The most nodes the query can return (every connection full).
    pub nodes: u64,
}

impl Cost {
    /// GitHub's rounding of a query's connection requests to points.
    pub fn from_requests(requests: u64, nodes: u64) -> Cost {
        Cost {
            points: (requests.saturating_add(50) / 100).max(1),
            nodes,
        }
    }
}

/// A GraphQL request parsed and checked, ready to execute (or already answered with errors).
#[derive(Debug)]
pub struct Prepared {
    /// The operation's name (from `operationName`, else the document's only operation).
    pub operation_name: Option<String>,
    pub is_mutation: bool,
    /// What it costs; `None` when it was refused before execution (GitHub charges nothing).
    pub cost: Option<Cost>,
    outcome: Result<Ready, Value>,
}

#[derive(Debug)]
struct Ready {
    doc: Valid<ExecutableDocument>,
    variables: JsonMap,
    variables_json: serde_json::Map<String, Value>,
    cost: Cost,
}
