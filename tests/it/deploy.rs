//! What docs/sharding.md (loading one endpoint from several hosts) ships, the image
//! (`Dockerfile`) and the Indexed Job (`deploy/kubernetes/encbench-job.yaml`), read as files
//! and checked against the real command line: neither docker nor a cluster is needed to know
//! they fit the binary.

use encbench::cli;
use encbench_core::shard::Shard;
use serde_json::Value;
use std::collections::BTreeMap;

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn help() -> String {
    match cli::parse(["encbench-tui", "--help"]) {
        Err((0, text)) => text,
        _ => panic!("--help prints the help"),
    }
}

/// Every `--flag` of `argv` is one `--help` documents.
fn assert_documented(argv: &[String], help: &str) {
    for a in argv.iter().filter(|a| a.starts_with("--")) {
        let flag = a.split('=').next().unwrap();
        assert!(
            help.contains(&format!("{flag} ")) || help.contains(&format!("{flag}\n")),
            "{flag} is not in --help"
        );
    }
}

/// The Dockerfile's instructions (keyword, rest), continuation lines joined, comments out.
fn instructions(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('#') || (t.is_empty() && pending.is_empty()) {
            continue;
        }
        if let Some(head) = t.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(t);
        let (k, rest) = pending.split_once(' ').unwrap_or((&pending, ""));
        out.push((k.to_uppercase(), rest.trim().to_string()));
        pending.clear();
    }
    out
}

/// The final stage's ENTRYPOINT and CMD, both in exec form.
fn entrypoint_and_cmd() -> (Vec<String>, Vec<String>) {
    let ins = instructions(&read("Dockerfile"));
    let exec = |k: &str| {
        let (_, v) = ins.iter().rev().find(|(i, _)| i == k).expect(k);
        serde_json::from_str::<Vec<String>>(v)
            .unwrap_or_else(|_| panic!("{k} {v}: exec form, so signals reach the binary"))
    };
    (exec("ENTRYPOINT"), exec("CMD"))
}

/// The UID the image runs as.
fn image_user() -> u64 {
    let ins = instructions(&read("Dockerfile"));
    let (_, user) = ins.iter().rev().find(|(k, _)| k == "USER").expect("USER");
    user.split(':')
        .next()
        .unwrap()
        .parse()
        .expect("a numeric USER")
}

#[test]
fn the_image_is_multi_stage_and_non_root_and_runs_the_binary_with_the_assets() {
    let ins = instructions(&read("Dockerfile"));
    let froms: Vec<usize> = (0..ins.len()).filter(|&i| ins[i].0 == "FROM").collect();
    assert!(
        froms.len() >= 2,
        "multi-stage: a build stage and a runtime stage"
    );
    let (build_stage, runtime) = (&ins[froms[0]..froms[1]], &ins[*froms.last().unwrap()..]);
    let alias = build_stage[0]
        .1
        .split_whitespace()
        .last()
        .unwrap()
        .to_string();
    assert!(
        build_stage[0].1.to_lowercase().contains(" as "),
        "the build stage is named"
    );
    assert!(
        build_stage
            .iter()
            .any(|(k, v)| k == "RUN" && v.contains("cargo build --release --locked")),
        "the build stage builds the locked release binary"
    );
    assert!(
        !runtime[0].1.contains("rust"),
        "the runtime image is small, not the toolchain: {}",
        runtime[0].1
    );
    // Docker is not on the test machines: what the build needs must be seen to be copied.
    let sources: Vec<&str> = build_stage
        .iter()
        .filter(|(k, _)| k == "COPY")
        .flat_map(|(_, v)| {
            let words: Vec<&str> = v.split_whitespace().collect();
            words[..words.len() - 1].to_vec()
        })
        .collect();
    let manifest = read("Cargo.toml");
    let members = manifest
        .lines()
        .find_map(|l| l.strip_prefix("members = "))
        .expect("[workspace] members");
    let needed = members
        .split('"')
        .skip(1)
        .step_by(2)
        .chain(["src", "assets"]);
    for dir in needed {
        assert!(
            sources
                .iter()
                .any(|s| dir == *s || dir.starts_with(&format!("{s}/"))),
            "the build stage copies {dir} (copied: {sources:?})"
        );
    }
    let copies: Vec<&String> = runtime
        .iter()
        .filter(|(k, _)| k == "COPY")
        .map(|(_, v)| v)
        .collect();
    let binary = copies
        .iter()
        .find(|v| {
            v.starts_with(&format!("--from={alias} ")) && v.contains("target/release/encbench-tui")
        })
        .expect("the binary copied from the build stage");
    let installed = binary.split_whitespace().last().unwrap();
    assert!(
        copies.iter().any(|v| v.starts_with("assets ")),
        "assets/ shipped"
    );
    assert_ne!(image_user(), 0, "not root");

    let (entry, cmd) = entrypoint_and_cmd();
    assert!(
        entry[0] == installed
            || (installed == format!("/usr/local/bin/{}", entry[0]) && !entry[0].contains('/')),
        "the entrypoint {entry:?} is the installed binary {installed}"
    );
    // The image run bare shows the help, and everything it passes is a real flag.
    let argv: Vec<String> = std::iter::once("encbench-tui".to_string())
        .chain(entry[1..].iter().cloned())
        .chain(cmd.iter().cloned())
        .collect();
    assert_documented(&argv, &help());
    match cli::parse(&argv) {
        Err((0, text)) => assert!(text.contains("--shard"), "the help of this binary"),
        Ok(_) => {}
        Err((code, e)) => panic!("{argv:?}: exit {code}: {e}"),
    }
}

/// `$(NAME)` references, as Kubernetes expands them in a container's args.
fn expand(arg: &str, env: &BTreeMap<String, String>) -> String {
    env.iter().fold(arg.to_string(), |a, (k, v)| {
        a.replace(&format!("$({k})"), v)
    })
}

#[test]
fn the_job_runs_one_shard_per_pod_from_its_index_through_the_real_command_line() {
    let job: Value = serde_yaml_ng::from_str(&read("deploy/kubernetes/encbench-job.yaml"))
        .expect("the manifest is YAML");
    assert_eq!(
        (job["apiVersion"].as_str(), job["kind"].as_str()),
        (Some("batch/v1"), Some("Job"))
    );
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    let hosts = spec["completions"].as_u64().expect("completions");
    assert_eq!(
        spec["parallelism"].as_u64(),
        Some(hosts),
        "every pod at once"
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["runAsUser"].as_u64(),
        Some(image_user())
    );
    let container = &pod["containers"][0];
    assert!(
        container.get("command").is_none(),
        "the image's entrypoint runs"
    );
    let args: Vec<String> = serde_json::from_value(container["args"].clone()).expect("args");
    let mounts: Vec<&str> = container["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["mountPath"].as_str().unwrap())
        .collect();
    let mut env: BTreeMap<String, String> = container["env"]
        .as_array()
        .map(|vars| {
            vars.iter()
                .map(|v| {
                    (
                        v["name"].as_str().unwrap().into(),
                        v["value"].as_str().unwrap_or_default().into(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let (entry, _) = entrypoint_and_cmd();
    let help = help();
    let mut exports = Vec::new();
    for index in 0..hosts {
        env.insert("JOB_COMPLETION_INDEX".into(), index.to_string());
        let argv: Vec<String> = entry
            .iter()
            .cloned()
            .chain(args.iter().map(|a| expand(a, &env)))
            .collect();
        assert!(
            argv.iter().all(|a| !a.contains("$(")),
            "every reference set: {argv:?}"
        );
        assert_documented(&argv, &help);
        let cli = cli::parse(&argv).unwrap_or_else(|(c, e)| panic!("{argv:?}: exit {c}: {e}"));
        let run = &cli.run;
        assert_eq!(
            run.hosts.shard(Some(&index.to_string())),
            Ok(Some(Shard {
                index: index as u32,
                count: hosts as u32
            })),
            "pod {index} runs shard {index}/{hosts}"
        );
        assert!(run.seed.is_some(), "one seed on every pod: one schedule");
        assert!(run.hosts.start_at.is_some(), "a common start");
        assert!(run.headless);
        let export = run.export.clone().expect("an export per pod");
        assert!(
            mounts.iter().any(|m| export.starts_with(m)),
            "{export:?} is on the results volume {mounts:?}"
        );
        exports.push(export);
    }
    exports.dedup();
    assert_eq!(exports.len() as u64, hosts, "one export file per pod");
}

#[test]
fn the_sharding_page_ships_the_files_and_its_commands_parse() {
    // The several-hosts section, once README's, is a page of its own: all of it after the title.
    let page = read("docs/sharding.md");
    let section = page
        .split_once("# Loading one endpoint from several hosts\n")
        .map(|(_, s)| s)
        .expect("the several-hosts page");
    for file in ["Dockerfile", "deploy/kubernetes/encbench-job.yaml"] {
        assert!(section.contains(file), "the section uses {file}");
    }
    assert!(
        !section.contains("kind: Job"),
        "no inline copy of the manifest"
    );
    let help = help();
    let mut commands = 0;
    for block in section.split("```").skip(1).step_by(2) {
        let text = block.replace("\\\n", " ");
        for line in text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("encbench-tui "))
        {
            let argv: Vec<String> = line
                .split_whitespace()
                .take_while(|w| !w.starts_with('#'))
                .map(String::from)
                .collect();
            if argv.get(1).is_none_or(|a| a.starts_with('-')) {
                assert_documented(&argv, &help);
            }
            match cli::parse(&argv) {
                Ok(_) | Err((0, _)) => commands += 1,
                Err((code, e)) => panic!("docs/sharding.md: {line}: exit {code}: {e}"),
            }
        }
    }
    assert!(
        commands >= 2,
        "the section shows a host's command and the merge"
    );
}
