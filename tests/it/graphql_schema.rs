//! Every GraphQL document the GitHub client sends must validate against GitHub's public schema
//! (`tests/fixtures/github/schema.docs.graphql`, see `SOURCES.md` next to it).

use std::sync::OnceLock;

use apollo_compiler::validation::Valid;
use apollo_compiler::{ExecutableDocument, Schema};

/// GitHub's schema, parsed once per test process.
///
/// The published SDL defines `EnterpriseOwnerInfo.repositoryDeployKeySetting` and
/// `repositoryDeployKeySettingOrganizations` twice, so strict SDL validation refuses it; the
/// partial schema it builds is complete and validates queries normally.
fn github_schema() -> &'static Valid<Schema> {
    static SCHEMA: OnceLock<Valid<Schema>> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/github/schema.docs.graphql"
        );
        let sdl = std::fs::read_to_string(path).expect("read the GitHub schema fixture");
        Schema::parse_and_validate(sdl, "schema.docs.graphql")
            .unwrap_or_else(|e| Valid::assume_valid(e.partial))
    })
}

/// Validation errors of `source` against GitHub's schema, rendered for a person; `None` when valid.
fn validation_errors(name: &str, source: &str) -> Option<String> {
    match ExecutableDocument::parse_and_validate(github_schema(), source, format!("{name}.graphql"))
    {
        Ok(_) => None,
        Err(e) => Some(e.errors.to_string()),
    }
}

#[test]
fn every_client_document_validates_against_githubs_schema() {
    let mut failures = Vec::new();
    for (name, source) in pr_monitor::forge::github::queries::all_documents() {
        if let Some(errors) = validation_errors(&name, &source) {
            failures.push(format!("── {name} ──\n{errors}"));
        }
    }
    assert!(
        failures.is_empty(),
        "documents that GitHub would refuse:\n{}",
        failures.join("\n")
    );
}

#[test]
fn a_misspelled_field_fails_validation() {
    let doc = "query { viewer { login } repository(owner: \"o\", name: \"r\") { pullRequest(number: 1) { isDraftt } } }";
    let errors =
        validation_errors("misspelled", doc).expect("a misspelled field must not validate");
    assert!(errors.contains("isDraftt"), "{errors}");
}

#[test]
fn the_schema_knows_the_types_the_client_reads() {
    let schema = github_schema();
    for ty in [
        "PullRequest",
        "PullRequestReviewThread",
        "CheckSuite",
        "CheckRun",
        "StatusContext",
        "WorkflowRun",
    ] {
        assert!(
            schema.get_object(ty).is_some(),
            "{ty} missing from the schema fixture"
        );
    }
}
