//! PURE: where a conflict lies. Neither forge's API names the files of a conflict; both compare
//! a branch with its base from where they parted. The files both sides changed since then are
//! where the conflict is (a file changed on both sides in parts that merge cleanly is listed
//! too). Known only when each side's list is whole and a conflict leaves at least one file.

/// The files both sides changed (each side's whole list), sorted and without repeats; `None`
/// when they share no file (the conflict is then somewhere the lists do not show, such as two
/// renames of one file).
pub(crate) fn files(branch: &[String], base: &[String]) -> Option<Vec<String>> {
    let mut both: Vec<String> = branch
        .iter()
        .filter(|f| base.contains(f))
        .cloned()
        .collect();
    both.sort();
    both.dedup();
    (!both.is_empty()).then_some(both)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(files: &[&str]) -> Vec<String> {
        files.iter().map(|f| (*f).to_owned()).collect()
    }

    #[test]
    fn the_files_both_sides_changed_are_where_the_conflict_lies() {
        let rows = [
            (
                list(&["src/b.rs", "src/a.rs", "src/only_here.rs"]),
                list(&["src/a.rs", "docs/x.md", "src/b.rs"]),
                Some(list(&["src/a.rs", "src/b.rs"])),
            ),
            (list(&["a", "a"]), list(&["a"]), Some(list(&["a"]))),
            (list(&["a"]), list(&["b"]), None),
            (Vec::new(), list(&["a"]), None),
        ];
        for (branch, base, want) in rows {
            assert_eq!(files(&branch, &base), want, "{branch:?} {base:?}");
        }
    }
}
