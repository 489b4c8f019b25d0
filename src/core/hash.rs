//! Stable hashing: fingerprints and idempotency ids that must match across builds and machines.

/// A stable 64-bit FNV-1a hash of `text`, in hex: the same across builds and machines (unlike
/// std's hasher), for fingerprints and idempotency ids.
pub(crate) fn fnv64(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}
