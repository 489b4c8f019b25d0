//! What one forge call is, for the debug log and the metrics: its path template (the path with
//! owners, repositories, projects, numbers and commit ids replaced by placeholders, so lines
//! group and no name is spelled out), its GraphQL operation, and the points it costs against
//! the forge's secondary limits (a GraphQL query 1, a mutation 5; a REST read 1, a write 5).

/// `/repos/octo/app/pulls/7/merge` → `/repos/{o}/{r}/pulls/{n}/merge`.
pub fn template(path: &str) -> String {
    let mut out = Vec::new();
    let mut segments = path.split('/').peekable();
    let mut after = "";
    while let Some(seg) = segments.next() {
        let placeholder = match after {
            "repos" => {
                out.push("{o}".to_owned());
                if segments.next().is_some() {
                    out.push("{r}".to_owned());
                }
                after = "";
                continue;
            }
            "projects" | "users" | "groups" => Some("{id}"),
            "compare" => Some("{basehead}"),
            _ if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) => Some("{n}"),
            _ if seg.len() == 40 && seg.bytes().all(|b| b.is_ascii_hexdigit()) => Some("{sha}"),
            _ => None,
        };
        out.push(placeholder.map_or_else(|| seg.to_owned(), str::to_owned));
        after = seg;
    }
    out.join("/")
}

/// A GraphQL document without its comments (`#` to the line's end) at its start.
fn document_start(query: &str) -> &str {
    let mut rest = query.trim_start();
    while let Some(comment) = rest.strip_prefix('#') {
        rest = comment
            .split_once('\n')
            .map_or("", |(_, next)| next)
            .trim_start();
    }
    rest
}

/// The operation name of a GraphQL document (`query PullRequestSnapshots(…)`), if any: that
/// of its first operation.
pub fn operation(query: &str) -> Option<String> {
    let query = document_start(query);
    let rest = query
        .strip_prefix("query")
        .or_else(|| query.strip_prefix("mutation"))?;
    let name: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// Whether a GraphQL document's first operation is a mutation.
pub fn is_mutation(query: &str) -> bool {
    document_start(query).starts_with("mutation")
}

/// Whether the operation `name` that a document of several operations defines is a mutation
/// (`mutation name`, the name ending there); `false` when the document defines no such one.
pub fn defines_mutation(query: &str, name: &str) -> bool {
    query.match_indices("mutation").any(|(at, _)| {
        let rest = query[at + "mutation".len()..].trim_start();
        rest.strip_prefix(name)
            .is_some_and(|after| !after.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
    })
}

/// The points a call costs against the secondary rate limit.
pub fn points(method: &str, graphql: bool, mutation: bool) -> u64 {
    let read = if graphql {
        !mutation
    } else {
        matches!(method, "GET" | "HEAD" | "OPTIONS")
    };
    if read { 1 } else { 5 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_hide_names_numbers_and_commits() {
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let cases = [
            ("/graphql", "/graphql".to_owned()),
            (
                "/repos/octo/app/pulls/7/merge",
                "/repos/{o}/{r}/pulls/{n}/merge".to_owned(),
            ),
            (
                "/repos/octo/app/actions/jobs/991/logs",
                "/repos/{o}/{r}/actions/jobs/{n}/logs".to_owned(),
            ),
            (
                &format!("/repos/octo/app/commits/{sha}/check-runs"),
                "/repos/{o}/{r}/commits/{sha}/check-runs".to_owned(),
            ),
            (
                "/api/v4/projects/group%2Fapp/merge_requests/57/pipelines",
                "/api/v4/projects/{id}/merge_requests/{n}/pipelines".to_owned(),
            ),
            (
                "/repos/octo/app/compare/main...fix",
                "/repos/{o}/{r}/compare/{basehead}".to_owned(),
            ),
            ("/user", "/user".to_owned()),
        ];
        for (path, want) in cases {
            assert_eq!(template(path), want, "{path}");
        }
    }

    #[test]
    fn graphql_operations_and_points() {
        let query = "query PullRequestSnapshots($a: ID!) { x }";
        let mutation = "\n mutation EnableAutoMerge { y }";
        assert_eq!(operation(query).as_deref(), Some("PullRequestSnapshots"));
        assert_eq!(operation(mutation).as_deref(), Some("EnableAutoMerge"));
        assert_eq!(operation("{ viewer { login } }"), None);
        assert!(is_mutation(mutation) && !is_mutation(query));
        // A document of several operations that opens with comments: the one named is run.
        let document = "# Every fixed document.\n# Picked by name.\n\nquery Viewer { v }\nmutation EnableAutoMerge { y }\nmutation EnableAutoMerges { z }\n";
        assert_eq!(operation(document).as_deref(), Some("Viewer"));
        assert!(!is_mutation(document));
        assert!(defines_mutation(document, "EnableAutoMerge"));
        assert!(defines_mutation(document, "EnableAutoMerges"));
        assert!(!defines_mutation(document, "Viewer"));
        assert!(!defines_mutation(document, "EnableAuto"));
        assert_eq!(points("POST", true, false), 1);
        assert_eq!(points("POST", true, true), 5);
        assert_eq!(points("GET", false, false), 1);
        assert_eq!(points("PUT", false, false), 5);
    }
}
