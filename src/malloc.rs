//! The C allocator's settings for this process. glibc gives each thread that allocates while
//! another holds the arena an arena of its own (the read pool's threads each get one), and
//! after the first large block is freed it raises the size from which blocks are mapped on
//! their own to that block's, and lets every arena keep twice that much free memory. A run
//! whose pool threads parse answers of a few hundred KiB then holds about 2 MiB of freed
//! memory per thread. One arena for every thread, and blocks of [`MAP_FROM`] or more always
//! mapped on their own (so returned when freed), keep the process's peak near what it uses.

/// Blocks of at least this many bytes are mapped on their own and unmapped when freed:
/// glibc's starting value, kept instead of raised.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MAP_FROM: libc::c_int = 128 * 1024;

/// Applies the settings; whether the allocator took them (only glibc's has them).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[expect(
    unsafe_code,
    reason = "mallopt is a C function; the only unsafe code in pr-monitor"
)]
pub(crate) fn tune() -> bool {
    // SAFETY: mallopt changes allocator parameters under the allocator's own lock and takes no
    // pointer; any thread may call it at any time. Both parameters exist in every glibc
    // since 2.10.
    let arenas = unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) };
    // SAFETY: as above.
    let mapped = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, MAP_FROM) };
    arenas == 1 && mapped == 1
}

/// Applies the settings; whether the allocator took them (only glibc's has them).
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn tune() -> bool {
    false
}

#[cfg(test)]
mod tests {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn glibc_takes_one_arena_and_a_fixed_mapping_threshold() {
        assert!(super::tune());
    }
}
