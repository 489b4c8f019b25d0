//! `--log-format json`: every event as one flat JSON object a line, the shape log collectors
//! (Loki, Fluent Bit, Cloud Logging) index without a parser of their own: `timestamp` (RFC
//! 3339, UTC, milliseconds), `level`, `target`, `message`, `run_id` (one per process, so a
//! run's lines can be picked out of a shared stream), then the event's own fields (`pr`,
//! `path`, `status` …) beside them, never nested.

use std::fmt;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The keys every line has; an event field of the same name gives way to them.
const FIXED: [&str; 5] = ["timestamp", "level", "target", "message", "run_id"];

/// The formatter: one flat object per event, tagged with this process's run id.
#[derive(Debug)]
pub struct FlatJson {
    pub run_id: &'static str,
}

impl<S, N> FormatEvent<S, N> for FlatJson
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let meta = event.metadata();
        let timestamp = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let object = line(
            &timestamp,
            meta.level().as_str(),
            meta.target(),
            self.run_id,
            fields.0,
        );
        writeln!(writer, "{object}")
    }
}

/// One line's object: the fixed keys, then the event's fields beside them.
pub fn line(
    timestamp: &str,
    level: &str,
    target: &str,
    run_id: &str,
    mut fields: Map<String, Value>,
) -> Value {
    let message = fields
        .remove("message")
        .unwrap_or(Value::String(String::new()));
    for key in FIXED {
        fields.remove(key);
    }
    let mut object = Map::new();
    object.insert("timestamp".into(), timestamp.into());
    object.insert("level".into(), level.into());
    object.insert("target".into(), target.into());
    object.insert("message".into(), message);
    object.insert("run_id".into(), run_id.into());
    object.extend(fields);
    Value::Object(object)
}

/// An event's fields as JSON values: numbers and booleans as themselves, the rest as text.
#[derive(Debug, Default)]
struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.0.insert(field.name().into(), value.to_string().into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().into(), format!("{value:?}").into());
    }
}

/// A fresh run id: 16 hex digits from the system's random source (the wall clock and the
/// process id if it cannot answer).
pub fn new_run_id() -> String {
    let mut bytes = [0u8; 8];
    if ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        #[allow(clippy::cast_possible_truncation)]
        let mixed = (nanos as u64) ^ (u64::from(std::process::id()) << 32);
        bytes = mixed.to_be_bytes();
    }
    format!("{:016x}", u64::from_be_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_line_is_flat_with_the_fixed_keys_winning() {
        let mut fields = Map::new();
        fields.insert("message".into(), json!("tick failed"));
        fields.insert("pr".into(), json!("https://github.com/o/r/pull/1"));
        fields.insert("status".into(), json!(401));
        fields.insert("level".into(), json!("spoofed"));
        let got = line(
            "2026-12-01T20:00:00.000Z",
            "WARN",
            "pr_monitor::tick",
            "ab12",
            fields,
        );
        assert_eq!(
            got,
            json!({
                "timestamp": "2026-12-01T20:00:00.000Z",
                "level": "WARN",
                "target": "pr_monitor::tick",
                "message": "tick failed",
                "run_id": "ab12",
                "pr": "https://github.com/o/r/pull/1",
                "status": 401,
            })
        );
        let bare = line("t", "INFO", "x", "r", Map::new());
        assert_eq!(bare["message"], "");
    }

    #[test]
    fn run_ids_are_sixteen_hex_digits_and_differ() {
        let (a, b) = (new_run_id(), new_run_id());
        assert_eq!(a.len(), 16);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b);
    }
}
