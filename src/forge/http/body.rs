//! A request's JSON body, written once: the bytes sent (sent again as they are when a read is
//! resent), and what the log says of it (a GraphQL document's operation, whether it is a
//! mutation). A GraphQL query is written straight into its body, with no copy of it in a
//! `serde_json::Value` first.

use serde_json::Value;

use crate::forge::call;

/// A request's JSON body (see the module doc).
#[derive(Debug, Clone)]
pub struct Body {
    bytes: Vec<u8>,
    /// The operation the GraphQL document it carries runs: the one named in the body, else
    /// the document's first, if that one is named.
    operation: Option<String>,
    /// Whether that operation is a mutation.
    mutation: bool,
}

impl Body {
    /// The body of `value`; a `query` member in it is read as a GraphQL document.
    pub fn json(value: &Value) -> Body {
        let mut bytes = Vec::new();
        // Infallible: a `Value` always serializes, and a vector always takes it.
        let _ = serde_json::to_writer(&mut bytes, value);
        let query = value.get("query").and_then(Value::as_str);
        Body {
            bytes,
            operation: query.and_then(call::operation),
            mutation: query.is_some_and(call::is_mutation),
        }
    }

    /// The body of a GraphQL request: `query` with its `variables` and, when given, the name of
    /// the `operation` to run.
    pub fn graphql(query: &str, variables: &Value, operation: Option<&str>) -> Body {
        // The escapes of a document's quotes and line ends take about an eighth more.
        let mut bytes = Vec::with_capacity(query.len() + query.len() / 8 + 64);
        bytes.push(b'{');
        if let Some(op) = operation {
            bytes.extend_from_slice(b"\"operationName\":");
            // Infallible: a string always serializes, and a vector always takes it.
            let _ = serde_json::to_writer(&mut bytes, op);
            bytes.push(b',');
        }
        bytes.extend_from_slice(b"\"query\":");
        let _ = serde_json::to_writer(&mut bytes, query);
        bytes.extend_from_slice(b",\"variables\":");
        let _ = serde_json::to_writer(&mut bytes, variables);
        bytes.push(b'}');
        Body {
            bytes,
            operation: operation.map_or_else(|| call::operation(query), |op| Some(op.to_owned())),
            mutation: operation.map_or_else(
                || call::is_mutation(query),
                |op| call::defines_mutation(query, op),
            ),
        }
    }

    /// The bytes sent.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The operation the body runs: its `operationName`, else the first of its document, if
    /// that one is named (as the log says it).
    pub fn operation(&self) -> Option<&str> {
        self.operation.as_deref()
    }

    /// Whether the body carries a GraphQL mutation.
    pub fn is_mutation(&self) -> bool {
        self.mutation
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_graphql_body_is_the_json_of_its_document() {
        let query = "query PullRequestSummaries {\n  s0: repository(owner: \"o\", name: \"r\\\\x\") { id }\n}\n";
        let body = Body::graphql(query, &json!({"a": [1, "é"]}), None);
        let read: Value = serde_json::from_slice(body.bytes()).unwrap();
        assert_eq!(read, json!({"query": query, "variables": {"a": [1, "é"]}}));
        assert_eq!(body.operation(), Some("PullRequestSummaries"));
        assert!(!body.is_mutation());
        let named = Body::graphql("mutation A { x } query B { y }", &json!({}), Some("B"));
        let read: Value = serde_json::from_slice(named.bytes()).unwrap();
        assert_eq!(read["operationName"], "B");
        assert_eq!(read["query"], "mutation A { x } query B { y }");
        assert_eq!(named.operation(), Some("B"), "the one named is run");
        assert!(!named.is_mutation());
        let named = Body::graphql(
            "# fixed\nquery B { y }\nmutation A { x }",
            &json!({}),
            Some("A"),
        );
        assert_eq!(named.operation(), Some("A"));
        assert!(
            named.is_mutation(),
            "a named mutation costs a mutation's points"
        );
        // A body given as a value is read the same way.
        let value = json!({"query": "\n mutation EnableAutoMerge { y }", "variables": {}});
        let body = Body::json(&value);
        assert_eq!(
            serde_json::from_slice::<Value>(body.bytes()).unwrap(),
            value
        );
        assert_eq!(body.operation(), Some("EnableAutoMerge"));
        assert!(body.is_mutation());
        let rest = Body::json(&json!({"merge_method": "squash"}));
        assert_eq!(rest.operation(), None);
        assert!(!rest.is_mutation());
    }
}
