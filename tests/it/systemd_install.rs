//! The README's systemd install steps, followed in a scratch root (a temporary folder standing
//! for `/`): every command of the section's `sh` blocks runs, its absolute paths moved under
//! the root and the system tools pointed at it (`systemd-sysusers --root`, `systemd-tmpfiles
//! --root`, `systemctl --root`, `usermod -R`). Then one tick runs as the unit would start it
//! (its user, its umask, its state folder and credential), and the page and the metrics it
//! writes are read by a member of the report group, and by nobody else. The upgrade from the
//! old `DynamicUser=` units runs over such an install and keeps its state. As root the users
//! are real uids; otherwise only the modes are checked.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The commands of the README's "systemd" section's `sh` block number `n` (from 1): the
/// install, then the upgrade from the `DynamicUser=` units.
fn readme_steps(n: usize) -> Vec<String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let section = readme
        .split("\n### systemd\n")
        .nth(1)
        .and_then(|s| s.split("\n### ").next())
        .expect("the README has a systemd section");
    let block = section
        .split("```sh\n")
        .nth(n)
        .and_then(|s| s.split("\n```").next())
        .expect("the systemd section has an sh block");
    block
        .lines()
        .map(|l| l.split("   # ").next().unwrap_or(l).trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

/// `step` made to act on `root` instead of `/`, with the test's own binary for the release
/// build. A command the test does not know how to confine is a failure, never run.
fn confined(step: &str, root: &Path) -> String {
    let known = [
        "cargo build --release && install ",
        "install ",
        "(umask 077; ",
        "systemctl daemon-reload && systemctl enable --now ",
        "systemctl disable --now ",
        "if [ -L /var/lib/pr-monitor ]; then ",
        "rm -rf /var/lib/pr-monitor/",
        "usermod -aG ",
    ];
    assert!(
        known.iter().any(|k| step.starts_with(k)),
        "a README step this test cannot run in a scratch root: {step}"
    );
    let root = root.display().to_string();
    let moved = step.replace(" /", &format!(" {root}/"));
    moved
        .replace("cargo build --release && ", "")
        .replace(
            "target/release/pr-monitor",
            env!("CARGO_BIN_EXE_pr-monitor"),
        )
        .replace(
            "systemd-sysusers ",
            &format!("systemd-sysusers --root={root} "),
        )
        .replace(
            "systemd-tmpfiles --create ",
            &format!("systemd-tmpfiles --root={root} --create "),
        )
        .replace("systemctl daemon-reload && ", "")
        .replace(
            "systemctl enable --now ",
            &format!("systemctl --root={root} enable "),
        )
        .replace(
            "systemctl disable --now ",
            &format!("systemctl --root={root} disable "),
        )
        .replace("usermod -aG ", &format!("usermod -R {root} -aG "))
}

/// One line of a scratch `/etc/passwd` or `/etc/group`, by name: its fields.
fn entry(root: &Path, file: &str, name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root.join("etc").join(file)).unwrap();
    text.lines()
        .map(|l| l.split(':').map(str::to_owned).collect::<Vec<_>>())
        .find(|f| f[0] == name)
        .unwrap_or_else(|| panic!("no {name} in /etc/{file}:\n{text}"))
}

fn id(root: &Path, file: &str, name: &str) -> u32 {
    entry(root, file, name)[2].parse().unwrap()
}

/// A value the unit sets (`key=`), from the installed copy.
fn unit_value(root: &Path, unit: &str, key: &str) -> String {
    let text = std::fs::read_to_string(root.join("etc/systemd/system").join(unit)).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("{unit} sets no {key}="))
        .to_owned()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn tools_available() -> bool {
    crate::support::tools::present(
        &[
            "systemd-sysusers",
            "systemd-tmpfiles",
            "systemctl",
            "usermod",
            "setpriv",
        ],
        "systemd-sysusers, systemd-tmpfiles, systemctl, usermod or setpriv is not installed \
         (.ci/run installs the systemd package)",
    )
}

/// Runs `argv` as `uid` with the groups given (the first is the primary group).
fn as_user(uid: u32, groups: &[u32], argv: &[&str]) -> std::process::Output {
    let rest: Vec<String> = groups[1..].iter().map(u32::to_string).collect();
    let mut cmd = Command::new("setpriv");
    cmd.arg(format!("--reuid={uid}"))
        .arg(format!("--regid={}", groups[0]));
    if rest.is_empty() {
        cmd.arg("--clear-groups");
    } else {
        cmd.arg(format!("--groups={}", rest.join(",")));
    }
    cmd.args(argv)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap()
}

/// A scratch root standing for the system before the install: its folders, root, and
/// node_exporter's user from its package; and whether the test runs as root (real owners).
fn scratch_system() -> (tempfile::TempDir, bool) {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let as_root = std::fs::metadata(root).unwrap().uid() == 0;
    for folder in ["etc/systemd/system", "usr/local/bin", "var/lib", "run"] {
        std::fs::create_dir_all(root.join(folder)).unwrap();
    }
    std::fs::write(
        root.join("etc/passwd"),
        "root:x:0:0:root:/root:/bin/sh\nprometheus:x:120:120::/var/lib/prometheus:/usr/sbin/nologin\n",
    )
    .unwrap();
    std::fs::write(root.join("etc/group"), "root:x:0:\nprometheus:x:120:\n").unwrap();
    (scratch, as_root)
}

/// Runs every command of the README's `sh` block `n` in `root`, each confined to it.
fn run_steps(root: &Path, n: usize, as_root: bool) {
    for step in readme_steps(n) {
        let line = confined(&step, root);
        let out = Command::new("bash")
            .args(["-euc", &line])
            .current_dir(repo())
            .env("GITHUB_TOKEN", "ghp_scratch_root_token")
            .output()
            .unwrap();
        if !as_root && (step.starts_with("usermod") || step.contains("systemd-tmpfiles")) {
            // Changing owners and groups needs root; the modes are checked below.
            continue;
        }
        assert!(
            out.status.success(),
            "`{step}` (run as `{line}`) failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The tick's service as systemd starts it.
struct Unit {
    /// `User=`, and its uid and gid when the test runs as root.
    user: String,
    ids: Option<(u32, u32)>,
    state: PathBuf,
    credentials: PathBuf,
    config: PathBuf,
    report_dir: PathBuf,
    umask: String,
}

/// What systemd does when it starts the installed `pr-monitor.service`: the state folder
/// (StateDirectory=, with its mode, given to User= whoever owned it), the credential, the
/// umask; the report folder is the tmpfiles one. The config's paths move under the root.
fn started(root: &Path, as_root: bool) -> Unit {
    let service = "pr-monitor.service";
    let user = unit_value(root, service, "User");
    let state = root
        .join("var/lib")
        .join(unit_value(root, service, "StateDirectory"));
    let state_mode =
        u32::from_str_radix(&unit_value(root, service, "StateDirectoryMode"), 8).unwrap();
    let umask = unit_value(root, service, "UMask");
    let report_dir = root.join(unit_value(root, service, "ReadWritePaths").trim_start_matches('/'));
    std::fs::create_dir_all(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(state_mode)).unwrap();
    let credentials = root.join("run/credentials").join(service);
    std::fs::create_dir_all(&credentials).unwrap();
    std::fs::copy(
        root.join("etc/pr-monitor/github-token"),
        credentials.join("github-token"),
    )
    .unwrap();
    let config = root.join("etc/pr-monitor/config.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace(" /var/lib/", &format!(" {}/var/lib/", root.display())),
    )
    .unwrap();
    if !as_root {
        std::fs::create_dir_all(&report_dir).unwrap();
        std::fs::set_permissions(&report_dir, std::fs::Permissions::from_mode(0o2750)).unwrap();
    }
    let ids = as_root.then(|| (id(root, "passwd", &user), id(root, "group", &user)));
    if let Some((uid, gid)) = ids {
        for p in [&state, &credentials] {
            Command::new("chown")
                .arg("-R")
                .arg(format!("{uid}:{gid}"))
                .arg(p)
                .status()
                .unwrap();
        }
    }
    Unit {
        user,
        ids,
        state,
        credentials,
        config,
        report_dir,
        umask,
    }
}

/// `pr-monitor ARGS` (shell words) run as the unit runs it: its user, its umask, in its
/// state folder, with its credential.
fn as_unit(root: &Path, unit: &Unit, args: &str) -> std::process::Output {
    let line = format!(
        "umask {} && cd {} && exec {}/usr/local/bin/pr-monitor --config {} {args}",
        unit.umask,
        unit.state.display(),
        root.display(),
        unit.config.display()
    );
    let credentials = format!("CREDENTIALS_DIRECTORY={}", unit.credentials.display());
    let words = ["env", credentials.as_str(), "bash", "-c", line.as_str()];
    match unit.ids {
        Some((uid, gid)) => as_user(uid, &[gid], &words),
        None => Command::new(words[0]).args(&words[1..]).output().unwrap(),
    }
}

fn succeeded(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_readmes_systemd_steps_leave_the_page_and_metrics_readable_by_the_report_group_only() {
    if !tools_available() {
        return;
    }
    let (scratch, as_root) = scratch_system();
    let root = scratch.path();
    run_steps(root, 1, as_root);
    assert_eq!(mode(&root.join("etc/pr-monitor/github-token")), 0o600);
    assert!(
        root.join("etc/systemd/system/timers.target.wants/pr-monitor.timer")
            .symlink_metadata()
            .is_ok(),
        "the timer is enabled"
    );
    let unit = started(root, as_root);
    succeeded(&as_unit(root, &unit, "--now 2026-12-01T12:00:00Z run"));

    let (state, report_dir) = (&unit.state, &unit.report_dir);
    let page = report_dir.join("status.html");
    let metrics = report_dir.join("pr_monitor.prom");
    assert_eq!(mode(report_dir), 0o2750, "{}", report_dir.display());
    assert_eq!((mode(&page), mode(&metrics)), (0o640, 0o640));
    assert_eq!(mode(state), 0o700);
    assert_eq!(mode(&state.join("pr-monitor.db")), 0o600);
    if !as_root {
        return;
    }
    let report_gid = id(root, "group", "pr-monitor-report");
    let owner = id(root, "passwd", &unit.user);
    for p in [report_dir, &page, &metrics] {
        let m = std::fs::metadata(p).unwrap();
        assert_eq!((m.uid(), m.gid()), (owner, report_gid), "{}", p.display());
    }
    // node_exporter's user, in the group by the README's `usermod`, reads both files.
    let members = entry(root, "group", "pr-monitor-report")[3].clone();
    assert!(members.split(',').any(|m| m == "prometheus"), "{members}");
    let prometheus = id(root, "passwd", "prometheus");
    let reader = [id(root, "group", "prometheus"), report_gid];
    for file in [&page, &metrics] {
        let read = as_user(prometheus, &reader, &["cat", &file.display().to_string()]);
        assert!(
            read.status.success(),
            "{}: {}",
            file.display(),
            String::from_utf8_lossy(&read.stderr)
        );
    }
    let read = as_user(prometheus, &reader, &["cat", &page.display().to_string()]);
    assert!(String::from_utf8_lossy(&read.stdout).contains("<html"));
    // Not the database, and nobody outside the group reads the page.
    let db = state.join("pr-monitor.db").display().to_string();
    assert!(!as_user(prometheus, &reader, &["cat", &db]).status.success());
    let page = page.display().to_string();
    assert!(!as_user(65534, &[65534], &["cat", &page]).status.success());
}

/// An install of the old units, which ran under `DynamicUser=`: their state in
/// `/var/lib/private/pr-monitor` (a dynamic uid's, owner-only, in a folder only root enters),
/// reached through the symlink `/var/lib/pr-monitor` systemd leaves; a watched PR, a message
/// in the agent's inbox, and the page and metrics the old config wrote there. The timer
/// enabled.
fn old_dynamic_user_install(root: &Path, as_root: bool) {
    let private = root.join("var/lib/private");
    let old = private.join("pr-monitor");
    std::fs::create_dir_all(old.join("inbox/fixer/new")).unwrap();
    std::fs::create_dir_all(old.join("metrics")).unwrap();
    for (file, text) in [
        ("inbox/fixer/new/m-1.json", "{}"),
        ("status.html", "<html>old</html>"),
        ("metrics/pr_monitor.prom", "# old\n"),
    ] {
        std::fs::write(old.join(file), text).unwrap();
    }
    let config = root.join("old-config.yaml");
    std::fs::write(
        &config,
        format!(
            "database: {}/pr-monitor.db\ngithub:\n  token_env: OLD_TOKEN\n",
            old.display()
        ),
    )
    .unwrap();
    let added = Command::new(env!("CARGO_BIN_EXE_pr-monitor"))
        .args(["--config", &config.display().to_string(), "watch", "add"])
        .arg("octo/app#1")
        .env("OLD_TOKEN", "ghp_old")
        .output()
        .unwrap();
    succeeded(&added);
    for folder in [&private, &old] {
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    if as_root {
        let dynamic = "61184:61184";
        let chown = Command::new("chown")
            .args(["-R", dynamic])
            .arg(&old)
            .status();
        assert!(chown.unwrap().success());
    }
    std::os::unix::fs::symlink("private/pr-monitor", root.join("var/lib/pr-monitor")).unwrap();
    for unit in ["pr-monitor.service", "pr-monitor.timer"] {
        std::fs::copy(
            repo().join("systemd").join(unit),
            root.join("etc/systemd/system").join(unit),
        )
        .unwrap();
    }
    let root_arg = format!("--root={}", root.display());
    let enabled = Command::new("systemctl")
        .args([root_arg.as_str(), "enable", "pr-monitor.timer"])
        .output()
        .unwrap();
    succeeded(&enabled);
}

#[test]
fn the_readmes_upgrade_from_the_dynamic_user_units_keeps_their_state() {
    if !tools_available() {
        return;
    }
    let (scratch, as_root) = scratch_system();
    let root = scratch.path();
    old_dynamic_user_install(root, as_root);
    run_steps(root, 2, as_root);
    let state = root.join("var/lib/pr-monitor");
    assert!(
        state.symlink_metadata().unwrap().is_dir(),
        "a folder, no longer the symlink"
    );
    assert!(!root.join("var/lib/private/pr-monitor").exists());
    assert!(!state.join("status.html").exists() && !state.join("metrics").exists());
    run_steps(root, 1, as_root);
    let unit = started(root, as_root);
    // The unit's user reads and writes the database the dynamic user left.
    succeeded(&as_unit(root, &unit, "watch add octo/app#2"));
    let listed = succeeded(&as_unit(root, &unit, "status --json"));
    let rows: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let mut numbers: Vec<u64> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["number"].as_u64())
        .collect();
    numbers.sort_unstable();
    assert_eq!(numbers, [1, 2], "{listed}");
    assert!(
        state.join("inbox/fixer/new/m-1.json").exists(),
        "the agent's inbox kept"
    );
    if let Some((uid, _)) = unit.ids {
        let db = std::fs::metadata(state.join("pr-monitor.db")).unwrap();
        assert_eq!(db.uid(), uid);
    }
}
