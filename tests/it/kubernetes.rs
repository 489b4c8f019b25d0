//! The Kubernetes manifests in config/kubernetes/ and the Containerfile. Each manifest is read
//! into the Kubernetes API type of its kind (the 1.30 schema, through `k8s-openapi`) and written
//! back: a field the schema does not know, or a value of the wrong type, shows as a difference.
//! Then the fields that matter: one bounded tick at a time, a locked-down pod, the token from a
//! Secret folder read through `token_file`, the state on the claim; and the ConfigMap's config
//! passes `config check` in a folder laid out as the pod sees it. The daemon overlay
//! (config/kubernetes/daemon) is checked the same way: its Deployment runs the CronJob's pod
//! as one replica, its Service reaches the port the config listens on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Parser as _;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::CronJob;
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, Namespace, PersistentVolumeClaim, PodSpec, PodTemplateSpec, Service,
    Volume,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config/kubernetes")
}

fn yaml(name: &str) -> Value {
    let text = std::fs::read_to_string(folder().join(name)).unwrap();
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The first place where `a` and `b` differ, as a path; `None` when they are equal.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<_> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                let here = format!("{at}.{k}");
                match (x.get(k), y.get(k)) {
                    (Some(x), Some(y)) => first_difference(x, y, &here),
                    (Some(_), None) => Some(format!("{here}: not in the schema")),
                    (None, _) => Some(format!("{here}: added by the schema")),
                }
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(x, y, &format!("{at}[{i}]"))),
        _ if a == b => None,
        _ => Some(format!("{at}: {a} became {b}")),
    }
}

/// `name` read as a `T` with nothing dropped or changed on the way.
fn strict<T: DeserializeOwned + Serialize>(name: &str) -> T {
    let value = yaml(name);
    let typed: T = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("{name} is not a valid {}: {e}", std::any::type_name::<T>()));
    let back = serde_json::to_value(&typed).unwrap();
    if let Some(diff) = first_difference(&value, &back, "") {
        panic!("{name}: {diff}");
    }
    typed
}

fn resources() -> Vec<String> {
    let kustomization = yaml("kustomization.yaml");
    kustomization["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_owned())
        .collect()
}

fn cronjob() -> CronJob {
    strict("cronjob.yaml")
}

fn pod(cronjob: &CronJob) -> PodSpec {
    let spec = cronjob.spec.clone().unwrap();
    spec.job_template.spec.unwrap().template.spec.unwrap()
}

fn container(pod: &PodSpec) -> Container {
    assert_eq!(pod.containers.len(), 1);
    pod.containers[0].clone()
}

fn config_map() -> ConfigMap {
    strict("configmap.yaml")
}

/// Where each volume is mounted in the container, by volume name.
fn mounts(container: &Container) -> BTreeMap<String, String> {
    container
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| {
            assert!(
                m.sub_path.is_none(),
                "{}: a subPath mount never updates",
                m.name
            );
            (m.name.clone(), m.mount_path.clone())
        })
        .collect()
}

fn volume<'a>(pod: &'a PodSpec, name: &str) -> &'a Volume {
    pod.volumes
        .iter()
        .flatten()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no volume {name}"))
}

/// The seconds between two runs of a `*/N * * * *` schedule.
fn period_secs(schedule: &str) -> i64 {
    let fields: Vec<&str> = schedule.split_whitespace().collect();
    assert_eq!(fields.len(), 5, "{schedule}");
    assert!(fields[1..].iter().all(|f| *f == "*"), "{schedule}");
    let minutes = match fields[0] {
        "*" => 1,
        f => f.strip_prefix("*/").unwrap().parse::<i64>().unwrap(),
    };
    minutes * 60
}

#[test]
fn every_manifest_is_its_kind_in_the_kubernetes_schema() {
    let mut listed = resources();
    for name in &listed {
        let kind = yaml(name)["kind"].as_str().unwrap().to_owned();
        match kind.as_str() {
            "Namespace" => drop(strict::<Namespace>(name)),
            "PersistentVolumeClaim" => drop(strict::<PersistentVolumeClaim>(name)),
            "ConfigMap" => drop(strict::<ConfigMap>(name)),
            "CronJob" => drop(strict::<CronJob>(name)),
            other => panic!("{name}: no check for kind {other}"),
        }
    }
    // Every manifest in the folder is applied: none is left out of the kustomization.
    listed.push("kustomization.yaml".to_owned());
    listed.sort();
    let mut present: Vec<String> = std::fs::read_dir(folder())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    present.sort();
    assert_eq!(present, listed);
}

#[test]
fn the_cronjob_runs_one_bounded_tick_at_a_time() {
    let cronjob = cronjob();
    let spec = cronjob.spec.clone().unwrap();
    assert_eq!(spec.concurrency_policy.as_deref(), Some("Forbid"));
    let period = period_secs(&spec.schedule);
    let starting = spec.starting_deadline_seconds.unwrap();
    assert!(starting > 0 && starting < period, "{starting}");
    assert!(spec.successful_jobs_history_limit.is_some());
    assert!(spec.failed_jobs_history_limit.is_some());
    let job = spec.job_template.spec.unwrap();
    assert!(job.backoff_limit.is_some());
    // The deadline lies above the longest a tick waits by design: its GitHub budget plus the
    // wait under way when the budget runs out (a request's timeout, or the longest rate-limit
    // wait), with 30 s for the outbox and the reports.
    let deadline = job.active_deadline_seconds.unwrap();
    let config: Value = serde_yaml::from_str(&config_map().data.unwrap()["config.yaml"]).unwrap();
    let budget = config["github"]["run_budget_sec"].as_i64().unwrap();
    let timeout = config["github"]["timeout_sec"].as_i64().unwrap();
    let rate_limit_wait =
        i64::try_from(pr_monitor::forge::wait::MAX_RATE_LIMIT_WAIT.as_secs()).unwrap();
    let longest = budget + timeout.max(rate_limit_wait);
    assert_eq!(
        deadline,
        longest + 30,
        "activeDeadlineSeconds {deadline}: the longest wait is {longest} s"
    );
    assert!(period > 0);
    assert_eq!(pod(&cronjob).restart_policy.as_deref(), Some("Never"));
}

#[test]
fn the_pod_runs_locked_down_within_the_benchmarked_resources() {
    let pod = pod(&cronjob());
    let context = pod.security_context.clone().unwrap();
    assert_eq!(context.run_as_non_root, Some(true));
    assert!(context.run_as_user.is_some_and(|u| u != 0));
    assert_eq!(context.seccomp_profile.unwrap().type_, "RuntimeDefault");
    assert_eq!(pod.automount_service_account_token, Some(false));

    let container = container(&pod);
    let context = container.security_context.clone().unwrap();
    assert_eq!(context.run_as_non_root, Some(true));
    assert_eq!(context.read_only_root_filesystem, Some(true));
    assert_eq!(context.allow_privilege_escalation, Some(false));
    assert_eq!(
        context.capabilities.unwrap().drop,
        Some(vec!["ALL".to_owned()])
    );
    assert_eq!(context.seccomp_profile.unwrap().type_, "RuntimeDefault");

    // The benchmark's largest tick (200 PRs) peaks at 12 MiB resident: the request covers it,
    // and the limit leaves room.
    let resources = container.resources.unwrap();
    let mebibytes = |q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity| {
        q.0.strip_suffix("Mi").unwrap().parse::<u32>().unwrap()
    };
    let requests = resources.requests.unwrap();
    let limits = resources.limits.unwrap();
    assert!(mebibytes(&requests["memory"]) >= 16);
    assert!(mebibytes(&limits["memory"]) >= 4 * mebibytes(&requests["memory"]));
    assert!(requests.contains_key("cpu") && limits.contains_key("cpu"));
}

#[test]
fn the_token_comes_from_a_secret_folder_and_the_state_from_the_claim() {
    let pod = pod(&cronjob());
    let container = container(&pod);
    let mounts = mounts(&container);
    let config: Value = serde_yaml::from_str(&config_map().data.unwrap()["config.yaml"]).unwrap();

    let tokens = volume(&pod, "tokens").secret.clone().unwrap();
    assert_eq!(tokens.secret_name.as_deref(), Some("pr-monitor-tokens"));
    assert!(tokens.items.is_none(), "every key of the Secret is a file");
    let token_file = config["github"]["token_file"].as_str().unwrap();
    assert!(
        token_file.starts_with(&format!("{}/", mounts["tokens"])),
        "{token_file}"
    );

    let claim = volume(&pod, "state")
        .persistent_volume_claim
        .clone()
        .unwrap();
    let pvc: PersistentVolumeClaim = strict("persistentvolumeclaim.yaml");
    assert_eq!(claim.claim_name, pvc.metadata.name.unwrap());
    assert_eq!(
        pvc.spec.unwrap().access_modes,
        Some(vec!["ReadWriteOnce".to_owned()])
    );
    let state = format!("{}/", mounts["state"]);
    for path in [
        &config["database"],
        &config["agents"]["fixer"]["inbox"],
        &config["report"]["html_path"],
        &config["report"]["metrics_path"],
    ] {
        let path = path.as_str().unwrap();
        assert!(path.starts_with(&state), "{path} is not on the claim");
    }

    // The root filesystem is read-only: SQLite's temporary files go to a writable /tmp.
    assert_eq!(mounts["tmp"], "/tmp");
    assert!(volume(&pod, "tmp").empty_dir.is_some());
}

/// Lays out the pod's files under `root`: the ConfigMap's items under the config mount, a token
/// under the Secret's mount, the claim's folder. Returns the config file, with every mount path
/// in it moved under `root`.
fn pod_files(root: &Path) -> PathBuf {
    let pod = pod(&cronjob());
    let mounts = mounts(&container(&pod));
    let under = |mount: &str| root.join(mount.trim_start_matches('/'));
    let data = config_map().data.unwrap();
    let moved = |text: &str| {
        ["config", "state", "tokens"]
            .iter()
            .fold(text.to_owned(), |text, name| {
                let mount = &mounts[*name];
                text.replace(mount.as_str(), &under(mount).display().to_string())
            })
    };
    let items = volume(&pod, "config").config_map.clone().unwrap().items;
    for item in items.unwrap() {
        let file = under(&mounts["config"]).join(&item.path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, moved(&data[&item.key])).unwrap();
    }
    std::fs::create_dir_all(under(&mounts["tokens"])).unwrap();
    std::fs::write(under(&mounts["tokens"]).join("github-token"), "ghp_x\n").unwrap();
    std::fs::create_dir_all(under(&mounts["state"])).unwrap();
    under(&mounts["config"]).join("config.yaml")
}

#[test]
fn the_config_map_passes_config_check_where_the_pod_mounts_it() {
    let env = crate::support::env::TestEnv::new();
    let root = tempfile::tempdir().unwrap();
    let config = pod_files(root.path());
    let out = env.run_with_config(&config, &["config", "check"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("(1 job file(s))"), "{}", out.stdout);

    // The container's arguments are a valid command line naming that config.
    let args = container(&pod(&cronjob())).args.unwrap();
    let cli =
        pr_monitor::cli::Cli::try_parse_from(std::iter::once("pr-monitor".to_owned()).chain(args))
            .unwrap();
    assert_eq!(
        cli.config.as_deref(),
        Some(Path::new("/etc/pr-monitor/config.yaml"))
    );
    assert!(matches!(cli.command, pr_monitor::cli::Command::Run(_)));
    assert_eq!(cli.log_format, pr_monitor::logging::LogFormat::Json);
    assert!(cli.json, "results as JSON lines beside the JSON log");
}

#[test]
fn the_containerfile_builds_in_two_stages_into_a_non_root_image() {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Containerfile"))
        .unwrap();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let froms: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("FROM "))
        .collect();
    assert_eq!(froms.len(), 2, "{text}");
    let (build, last) = (&lines[froms[0]..froms[1]], &lines[froms[1]..]);
    assert!(build[0].ends_with(" AS build"), "{}", build[0]);
    assert!(
        build
            .iter()
            .any(|l| l.starts_with("RUN cargo build --release --locked"))
    );
    // Distroless: glibc and CA certificates, no shell; its `nonroot` user is 65532.
    assert!(last[0].contains("distroless/cc") && last[0].ends_with(":nonroot"));
    assert!(
        last.iter()
            .any(|l| l.starts_with("COPY --from=build /src/target/release/pr-monitor "))
    );
    assert!(last.contains(&"USER 65532:65532"), "{text}");
    let pod = pod(&cronjob());
    assert_eq!(pod.security_context.unwrap().run_as_user, Some(65532));
}

// ── the daemon overlay (config/kubernetes/daemon) ──────────────────────────────────────────

fn daemon_yaml(name: &str) -> String {
    format!("daemon/{name}")
}

fn deployment() -> Deployment {
    strict(&daemon_yaml("deployment.yaml"))
}

fn service() -> Service {
    strict(&daemon_yaml("service.yaml"))
}

fn daemon_pod() -> PodSpec {
    deployment().spec.unwrap().template.spec.unwrap()
}

#[test]
fn the_daemon_overlay_is_the_base_with_a_deployment_and_a_service_in_place_of_the_cronjob() {
    let kustomization = yaml(&daemon_yaml("kustomization.yaml"));
    let resources: Vec<&str> = kustomization["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(resources, ["..", "deployment.yaml", "service.yaml"]);
    drop(deployment());
    drop(service());
    let mut present: Vec<String> = std::fs::read_dir(folder().join("daemon"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    present.sort();
    assert_eq!(
        present,
        ["deployment.yaml", "kustomization.yaml", "service.yaml"]
    );
    assert_eq!(
        kustomization["namespace"],
        yaml("kustomization.yaml")["namespace"]
    );
    assert_eq!(
        kustomization["images"],
        yaml("kustomization.yaml")["images"]
    );
    // One database, one writer: the CronJob is deleted, whatever its base says.
    let patches = kustomization["patches"].as_array().unwrap();
    assert_eq!(patches.len(), 1);
    let patch: Value = serde_yaml::from_str(patches[0]["patch"].as_str().unwrap()).unwrap();
    let base = yaml("cronjob.yaml");
    assert_eq!(patch["$patch"], "delete");
    assert_eq!(patch["kind"], base["kind"]);
    assert_eq!(patch["metadata"]["name"], base["metadata"]["name"]);
    assert_eq!(patches[0]["target"]["name"], base["metadata"]["name"]);
}

#[test]
fn the_daemon_runs_one_replica_in_the_cronjobs_pod() {
    let spec = deployment().spec.unwrap();
    assert_eq!(spec.replicas, Some(1));
    assert_eq!(spec.strategy.unwrap().type_.as_deref(), Some("Recreate"));
    let (daemon, tick) = (daemon_pod(), pod(&cronjob()));
    assert_eq!(daemon.security_context, tick.security_context);
    assert_eq!(daemon.automount_service_account_token, Some(false));
    assert_eq!(daemon.volumes, tick.volumes);
    let (d, t) = (container(&daemon), container(&tick));
    assert_eq!(d.image, t.image);
    assert_eq!(d.security_context, t.security_context);
    assert_eq!(d.resources, t.resources);
    assert_eq!(d.volume_mounts, t.volume_mounts);
    let cli = pr_monitor::cli::Cli::try_parse_from(
        std::iter::once("pr-monitor".to_owned()).chain(d.args.clone().unwrap()),
    )
    .unwrap();
    assert!(matches!(cli.command, pr_monitor::cli::Command::Daemon));
    assert_eq!(
        cli.config,
        Some(PathBuf::from("/etc/pr-monitor/config.yaml"))
    );
    assert_eq!(cli.log_format, pr_monitor::logging::LogFormat::Json);
    // The pod's selector labels are its own, so the Service never picks a tick's pod.
    let selector = spec.selector.match_labels.unwrap();
    let daemon = deployment().spec.unwrap().template;
    let tick = cronjob().spec.unwrap().job_template.spec.unwrap().template;
    let selects = |pod: PodTemplateSpec| {
        let labels = pod.metadata.unwrap().labels.unwrap();
        selector.iter().all(|(k, v)| labels.get(k) == Some(v))
    };
    assert!(selects(daemon));
    assert!(!selects(tick));
}

#[test]
fn the_service_reaches_the_port_the_config_listens_on_with_the_secrets_it_names() {
    let config: Value = serde_yaml::from_str(&config_map().data.unwrap()["config.yaml"]).unwrap();
    let serve: pr_monitor::config::ServeConfig =
        serde_json::from_value(config["serve"].clone()).unwrap();
    let listen = serve.listen;
    assert!(
        listen.ip().is_unspecified(),
        "{listen}: reachable from the Service"
    );
    let container = container(&daemon_pod());
    let ports = container.ports.clone().unwrap();
    assert_eq!(ports.len(), 1);
    assert_eq!(ports[0].container_port, i32::from(listen.port()));
    let service = service().spec.unwrap();
    let target = service.ports.unwrap()[0].target_port.clone().unwrap();
    assert_eq!(
        target,
        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(
            ports[0].name.clone().unwrap()
        )
    );
    assert_eq!(
        service.selector,
        deployment().spec.unwrap().selector.match_labels
    );
    let probe = container.readiness_probe.unwrap().http_get.unwrap();
    assert_eq!(probe.path.as_deref(), Some("/metrics"));
    // The webhook secrets: optional keys of the token Secret, in the variables the config names.
    let env = container.env.unwrap();
    for name in [
        &serve.github_webhook_secret_env,
        &serve.gitlab_webhook_token_env,
    ] {
        let var = env
            .iter()
            .find(|e| &e.name == name)
            .unwrap_or_else(|| panic!("{name}"));
        let key = var.value_from.clone().unwrap().secret_key_ref.unwrap();
        assert_eq!(key.name, "pr-monitor-tokens");
        assert_eq!(key.optional, Some(true));
    }
}

// ── what the pod writes: JSON lines only ───────────────────────────────────────────────────

/// Lays out the pod's files under `root` with the fake GitHub in place of api.github.com and
/// its token in the Secret's folder; returns the config file.
fn pod_files_on_the_fake(env: &crate::support::env::TestEnv, root: &Path) -> PathBuf {
    let config = pod_files(root);
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("https://api.github.com", &env.gh.url()),
    )
    .unwrap();
    let tokens = root.join("run/secrets/pr-monitor/github-token");
    std::fs::write(tokens, format!("{}\n", env.gh.token())).unwrap();
    config
}

/// `pr-monitor ARGS` as the pod runs it: `args` with the mounted config's path replaced by
/// `config`, `HOME` as the manifest sets it, the test's clock.
fn pod_command(
    env: &crate::support::env::TestEnv,
    root: &Path,
    config: &Path,
    args: &[String],
) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_pr-monitor"));
    command
        .current_dir(root)
        .args(
            args.iter()
                .map(|a| a.replace("/etc/pr-monitor/config.yaml", &config.display().to_string())),
        )
        .env("HOME", root)
        .env("PR_MONITOR_NOW", &env.now)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("PR_MONITOR_CONFIG")
        .env_remove("PR_MONITOR_DB")
        .env_remove("RUST_LOG");
    command
}

/// Every line of `text` is one flat JSON object (no value an object); returns them.
fn json_lines(text: &str, what: &str) -> Vec<serde_json::Map<String, Value>> {
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {l}\n{text}"));
            v.as_object()
                .unwrap_or_else(|| panic!("{what}: not an object: {l}"))
                .clone()
        })
        .collect()
}

/// Each stderr line has the fixed keys, flat, and one run id across the lines; returns it.
fn flat_log(lines: &[serde_json::Map<String, Value>]) -> String {
    let mut ids = std::collections::BTreeSet::new();
    for line in lines {
        for key in ["timestamp", "level", "target", "message", "run_id"] {
            assert!(line[key].is_string(), "{key} in {line:?}");
        }
        assert!(
            chrono::DateTime::parse_from_rfc3339(line["timestamp"].as_str().unwrap()).is_ok(),
            "{line:?}"
        );
        assert!(
            line.values().all(|v| !v.is_object() && !v.is_array()),
            "nested: {line:?}"
        );
        ids.insert(line["run_id"].as_str().unwrap().to_owned());
    }
    assert_eq!(ids.len(), 1, "one run id: {ids:?}");
    ids.pop_first().unwrap()
}

#[test]
fn the_cronjobs_own_arguments_write_only_json_lines() {
    let env = crate::support::env::TestEnv::new();
    env.gh.world(|w| {
        w.pr("octo/app", 1);
        w.check_run("octo/app", 1, "lint").failure();
        w.pr("octo/app", 2);
    });
    let root = tempfile::tempdir().unwrap();
    let config = pod_files_on_the_fake(&env, root.path());
    let add: Vec<String> = [
        "--config",
        "/etc/pr-monitor/config.yaml",
        "watch",
        "add",
        "octo/app#1",
        "octo/app#2",
    ]
    .map(String::from)
    .to_vec();
    let added = pod_command(&env, root.path(), &config, &add)
        .output()
        .unwrap();
    assert!(added.status.success(), "{added:?}");

    // Everything at debug, so every kind of line the run can write is written.
    let args = container(&pod(&cronjob())).args.unwrap();
    let out = pod_command(&env, root.path(), &config, &args)
        .env("RUST_LOG", "debug")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        !stderr.is_empty() && !stdout.is_empty(),
        "{stdout}\n{stderr}"
    );
    let log = json_lines(&stderr, "stderr");
    let run_id = flat_log(&log);
    assert!(
        log.iter()
            .any(|l| l["message"] == "forge call" && l["path"] == "/graphql"),
        "{stderr}"
    );

    let results = json_lines(&stdout, "stdout");
    let (last, prs) = results.split_last().unwrap();
    assert!(!prs.is_empty(), "{stdout}");
    for pr in prs {
        assert_eq!(pr["run_id"], run_id.as_str(), "{pr:?}");
        let url = pr["pr"].as_str().unwrap();
        assert!(url.contains("/octo/app/pull/"), "{url}");
    }
    assert_eq!(last["run_id"], run_id.as_str());
    assert_eq!(last["summary"]["ticked"], prs.len());
    assert_eq!(last["summary"]["exit_code"], out.status.code().unwrap());
}
