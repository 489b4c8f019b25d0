//! Accounts as the forges' own command-line tools keep them: `github.gh_user` takes the token
//! from `gh auth token --user NAME` (a fake `gh` on `PATH`), `gitlab.glab_config_dir` from
//! glab's `config.yml` for the API's host (a fixture shaped like glab's).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::support::env::TestEnv;
use crate::support::fake_gitlab::FakeGitLab;

/// A folder holding a `gh` that prints `token` for `auth token --user alice` only.
fn fake_gh(dir: &Path, token: &str) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let gh = bin.join("gh");
    std::fs::write(
        &gh,
        format!(
            "#!/bin/sh\nif [ \"$*\" = \"auth token --user alice\" ]; then echo {token}; else echo \"no account: $*\" >&2; exit 1; fi\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn gh_user_takes_the_token_of_that_gh_account() {
    let mut env = TestEnv::new();
    env.with_pr("octo/app", 1);
    let path = fake_gh(env.dir.path(), &env.gh.token());
    env.vars.push(("PATH".into(), path));
    let write = |user: &str| {
        let config = env.dir.path().join(format!("{user}.yaml"));
        std::fs::write(
            &config,
            format!(
                "database: state.db\ngithub:\n  api_url: {}\n  gh_user: {user}\n",
                env.gh.url()
            ),
        )
        .unwrap();
        config
    };
    let out = env.run_with_config(
        &write("alice"),
        &["check", "octo/app#1", "--json", "--no-state"],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.json()["pr"]["number"], 1);
    let out = env.run_with_config(
        &write("bob"),
        &["check", "octo/app#1", "--json", "--no-state"],
    );
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("`gh auth token --user bob` failed"),
        "{}",
        out.stderr
    );
    // One way to the token: gh_user beside token_env is a config error.
    let both = env.dir.path().join("both.yaml");
    std::fs::write(
        &both,
        "github:\n  token_env: GITHUB_TOKEN\n  gh_user: alice\n",
    )
    .unwrap();
    let out = env.run_with_config(&both, &["config", "check"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("gh_user"), "{}", out.stderr);
}

#[test]
fn glab_config_dir_takes_the_token_glab_keeps_for_the_api_host() {
    let env = TestEnv::new();
    let gl = FakeGitLab::start();
    gl.world(|w| {
        w.mr("g/p", 1);
    });
    let host = gl
        .url()
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let glab = env.dir.path().join("glab-cli");
    std::fs::create_dir_all(&glab).unwrap();
    // Shaped like glab's own config.yml: a host per entry, the token beside its settings.
    std::fs::write(
        glab.join("config.yml"),
        format!(
            "git_protocol: ssh\neditor:\nhosts:\n    gitlab.com:\n        token: glpat-not-this-one\n        api_protocol: https\n    {host}:\n        token: {}\n        api_host: {host}\n        git_protocol: ssh\n        api_protocol: http\n        user: owner\n",
            gl.token()
        ),
    )
    .unwrap();
    let config = env.dir.path().join("glab.yaml");
    std::fs::write(
        &config,
        format!(
            "database: state.db\ngitlab:\n  api_url: {}\n  glab_config_dir: glab-cli\n",
            gl.url()
        ),
    )
    .unwrap();
    let out = env.run_with_config(&config, &["check", "g/p!1", "--json", "--no-state"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.json()["pr"]["number"], 1);
    assert!(
        gl.requests()
            .entries
            .iter()
            .all(|r| r.authorization.as_deref() == Some(format!("Bearer {}", gl.token()).as_str()))
    );
    // A host glab has no token for is said, with the file.
    std::fs::write(
        glab.join("config.yml"),
        "hosts:\n    gitlab.com:\n        token: x\n",
    )
    .unwrap();
    let out = env.run_with_config(&config, &["check", "g/p!1", "--json", "--no-state"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains(&format!("has no token for `{host}`")),
        "{}",
        out.stderr
    );
    // `config check` reads it as a run would, and says the same before any run.
    let out = env.run_with_config(&config, &["config", "check"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("gitlab token")
            && out.stderr.contains(&format!("has no token for `{host}`")),
        "{}",
        out.stderr
    );
}

#[test]
fn config_check_reads_the_gh_account_it_names_without_printing_the_token() {
    let mut env = TestEnv::new();
    let token = env.gh.token();
    let path = fake_gh(env.dir.path(), &token);
    env.vars.push(("PATH".into(), path));
    let write = |user: &str| {
        let config = env.dir.path().join(format!("{user}.yaml"));
        std::fs::write(
            &config,
            format!("database: state.db\ngithub:\n  gh_user: {user}\n"),
        )
        .unwrap();
        config
    };
    let out = env.run_with_config(&write("alice"), &["config", "check"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("github token: `gh auth token --user alice` (readable)"),
        "{}",
        out.stdout
    );
    let out = env.run_with_config(&write("bob"), &["config", "check"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("`gh auth token --user bob`"),
        "{}",
        out.stderr
    );
    for out in [&out.stdout, &out.stderr] {
        assert!(!out.contains(&token), "{out}");
    }
}
