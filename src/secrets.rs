//! Every secret this process holds (forge tokens, the SMTP user's password, webhook URLs),
//! gathered in one place as it is read, and masked by value in everything pr-monitor writes:
//! the database (history, `last_error`, outbox messages), log tails, feedback bodies, and the
//! errors it prints.

use std::sync::{Mutex, OnceLock};

/// What a masked value reads as.
pub const MASK: &str = "***";

/// Values shorter than this are not masked by value (they would mask ordinary words).
const MIN_LEN: usize = 6;

fn held() -> &'static Mutex<Vec<String>> {
    static HELD: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    HELD.get_or_init(|| Mutex::new(Vec::new()))
}

/// Remembers `value` as a secret, to be masked wherever it appears.
pub fn hold(value: &str) {
    let value = value.trim();
    if value.len() < MIN_LEN {
        return;
    }
    let mut list = held()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !list.iter().any(|v| v == value) {
        list.push(value.to_owned());
        // Longest first, so a secret containing another is masked whole.
        list.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }
}

/// Holds the value of each environment variable in `names` that is set.
pub fn hold_env<'a>(names: impl IntoIterator<Item = &'a str>) {
    for name in names {
        if let Ok(value) = std::env::var(name) {
            hold(&value);
        }
    }
}

/// `text` with every held secret replaced by [`MASK`].
pub fn mask(text: &str) -> String {
    let list = held()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut out = text.to_owned();
    for secret in list.iter() {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), MASK);
        }
    }
    out
}

/// [`mask`] on an optional text.
pub fn mask_opt(text: Option<&str>) -> Option<String> {
    text.map(mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_values_are_masked_wherever_they_appear() {
        let token = "0123456789abcdef0123456789abcdef01234567";
        hold(token);
        hold("hunter2-smtp-sentinel");
        hold("abc");
        assert_eq!(
            mask(&format!(
                "Authorization: token {token}\nproxy said hunter2-smtp-sentinel"
            )),
            "Authorization: token ***\nproxy said ***"
        );
        assert_eq!(mask("abc stays"), "abc stays", "too short to mask by value");
        assert_eq!(mask_opt(None), None);
    }
}
