//! Test support: fakes of the forges and helpers shared by the integration tests.

pub mod chromium;
pub mod daemon;
pub mod env;
pub mod fake_github;
pub mod fake_gitlab;
pub mod fake_server;
pub mod forge;
pub mod http_server;
pub mod http_sink;
pub mod meet;
pub mod smtp;
pub mod tools;

/// The JSON type of `v` in one word (`null`, `bool`, `number`, `string`, `array`, `object`).
pub fn json_type(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
