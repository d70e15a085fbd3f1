//! `tune`'s flags, and each configuration's command line: the server's command and the run's
//! flags with the configuration's values filled in, the run's flags parsed by the run's own
//! definition. Every configuration is parsed before any server starts, so a value that one
//! configuration makes bad is one line naming it, never a failure an hour in.
// Doc comments here are `--help` text, read in a terminal: no Markdown in them.
#![allow(clippy::doc_markdown)]

use super::RunArgs;
use super::values::non_negative_secs;
use clap::Args;
use encbench_core::tune::{self as grid, Assignment, FillError, Param};
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Every other flag is a run's (encbench-tui --help): the load each \
configuration gets, with --url where the started server answers. A run flag's value may hold \
placeholders too (--concurrency '{workers}*2': integers and + - * / are computed where a \
placeholder was), as may --url (http://127.0.0.1:{port}). {port} with no --param port is a \
free port picked for each configuration. The command must keep the server in the foreground \
(as a container's entrypoint does): when it exits, its server is taken for dead.

Example: encbench-tui tune --serve 'WORKERS={workers} ./serve_local.sh' --param workers=1,2,4 \
--url http://localhost:8080 --find-capacity --slo p99=100ms --instance-type ml.c6i.2xlarge"
)]
pub struct TuneArgs {
    /// The command that starts the server, run by sh -c in a process group of its own;
    /// {name} takes each configuration's value of --param name (each value also reaches it
    /// as ENCBENCH_PARAM_NAME). Its output is kept per configuration.
    #[arg(long, value_name = "COMMAND")]
    pub serve: String,
    /// A setting of the server and its values, as name=v1,v2,...; repeat for each. The
    /// configurations are every combination of them (or with --zip, the values in step).
    #[arg(long = "param", value_name = "NAME=V1,V2,...", required = true, value_parser = param)]
    pub params: Vec<Param>,
    /// Pair the --param values in step (the first of each, the second of each, ...)
    /// instead of trying every combination; every --param needs as many values.
    #[arg(long)]
    pub zip: bool,
    /// A run flag that follows a parameter, as FLAG=EXPR (concurrency=workers*2): the same
    /// as --FLAG '{workers}*2' among the run's flags. Repeatable.
    #[arg(long = "link", value_name = "FLAG=EXPR", value_parser = link)]
    pub links: Vec<(String, String)>,
    /// An earlier tune's export: configurations it measured (same values, same workload)
    /// are taken from it and not started again.
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
    /// How long a server has to exit after SIGTERM before its process group gets SIGKILL
    /// (units accepted; a bare number is seconds).
    #[arg(long, default_value = "10", value_parser = non_negative_secs, allow_negative_numbers = true)]
    pub stop_grace: f64,
    /// Where each configuration's server output is kept, one file per configuration
    /// (default: beside --export as NAME.logs/, else under the temporary directory).
    #[arg(long, value_name = "DIR")]
    pub server_logs: Option<PathBuf>,
    /// The run's flags (every flag tune does not take itself goes here).
    #[arg(last = true, value_name = "RUN FLAGS", allow_hyphen_values = true)]
    pub run: Vec<String>,
}

fn param(s: &str) -> Result<Param, String> {
    s.parse()
}

/// `concurrency=workers*2`: the run flag, and its value with each name as a placeholder.
fn link(s: &str) -> Result<(String, String), String> {
    let (flag, expr) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' has no '=': write FLAG=EXPR (concurrency=workers*2)"))?;
    let flag = flag.trim().trim_start_matches("--");
    let flag_ok = !flag.is_empty()
        && flag
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !flag_ok {
        return Err(format!("'{flag}' is not a run flag's name (concurrency)"));
    }
    let mut value = String::new();
    let mut word = String::new();
    for c in expr.trim().chars().chain([' ']) {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if grid::is_name(&word) {
            value.push('{');
            value.push_str(&word);
            value.push('}');
        } else {
            value.push_str(&word);
        }
        word.clear();
        if c != ' ' {
            value.push(c);
        }
    }
    if grid::placeholders(&value).is_empty() {
        return Err(format!(
            "{s}: the value names no parameter (concurrency=workers*2)"
        ));
    }
    Ok((flag.to_string(), value))
}

/// One configuration, ready to start.
#[derive(Debug, Clone)]
pub struct Configuration {
    pub values: Assignment,
    /// `--serve` filled.
    pub serve: String,
    /// The environment the server gets besides ours: ENCBENCH_PARAM_NAME for each value.
    pub env: Vec<(String, String)>,
    /// The run, parsed from its flags filled.
    pub run: RunArgs,
}

/// Flags a tune gives every configuration alike: one export, one report, one front-end.
const SHARED: [&str; 5] = ["--export", "-o", "--report", "--fail-on", "--seed"];

impl TuneArgs {
    /// The run's flags with the links added.
    fn run_template(&self) -> Vec<String> {
        let mut args = self.run.clone();
        for (flag, value) in &self.links {
            args.extend([format!("--{flag}"), value.clone()]);
        }
        args
    }

    /// Whether `{port}` is a free port picked for each configuration.
    pub fn picks_port(&self) -> bool {
        !self.params.iter().any(|p| p.name == "port")
            && std::iter::once(&self.serve)
                .chain(&self.run_template())
                .any(|t| grid::placeholders(t).iter().any(|n| n == "port"))
    }

    /// Every configuration's values, in the order they run.
    pub fn grid(&self) -> Result<Vec<Assignment>, String> {
        grid::grid(&self.params, self.zip).map_err(|e| format!("error: --param: {e}"))
    }

    /// `{name}` in `flag` is no parameter's: said with the parameters there are.
    fn names_no_param(&self, flag: &str, name: &str) -> String {
        let given: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
        format!(
            "{flag}: {{{name}}} names no --param (given: {})",
            given.join(", ")
        )
    }

    /// What is wrong with the command line as a whole, before any configuration.
    pub fn check(&self) -> Result<(), String> {
        let run = self.run_template();
        // A placeholder that names no parameter first: a typo there also leaves the
        // parameter it meant unused, and that is not the mistake to name.
        let given = |name: &String| name == "port" || self.params.iter().any(|p| &p.name == name);
        let flags = std::iter::once("--serve").chain(run.iter().map(String::as_str));
        let mut flag = "--serve";
        for (said, template) in flags.zip(std::iter::once(&self.serve).chain(&run)) {
            if said.starts_with('-') {
                flag = said.split('=').next().unwrap_or(said);
            }
            if let Some(name) = grid::placeholders(template).iter().find(|n| !given(n)) {
                return Err(format!("error: {}", self.names_no_param(flag, name)));
            }
        }
        let used: Vec<String> = std::iter::once(&self.serve)
            .chain(&run)
            .flat_map(|t| grid::placeholders(t))
            .collect();
        if let Some(p) = self.params.iter().find(|p| !used.contains(&p.name)) {
            return Err(format!(
                "error: --param {}: no placeholder {{{}}} in --serve or the run's flags uses it, so every configuration would run alike",
                p.name, p.name
            ));
        }
        if !run.iter().any(|a| a == "--url" || a.starts_with("--url=")) {
            return Err(
                "error: tune: --url: say where the started server answers (http://127.0.0.1:{port})"
                    .into(),
            );
        }
        for flag in SHARED {
            let holds = run.windows(2).any(|w| {
                (w[0] == flag || w[0].starts_with(&format!("{flag}=")))
                    && !grid::placeholders(&w.join(" ")).is_empty()
            });
            if holds {
                return Err(format!(
                    "error: {flag}: takes no placeholder in a tune: it is one for every configuration"
                ));
            }
        }
        Ok(())
    }

    /// The configuration of `values`, with `port` as `{port}` where the tool picks it.
    pub fn configuration(
        &self,
        values: &Assignment,
        port: Option<u16>,
    ) -> Result<Configuration, String> {
        let named = |why: &str| format!("error: tune {values}: {why}");
        let lookup = |name: &str| -> Option<String> {
            values.get(name).map(str::to_string).or_else(|| {
                (name == "port")
                    .then(|| port.map(|p| p.to_string()))
                    .flatten()
            })
        };
        let unknown = |where_: &str, name: &str| named(&self.names_no_param(where_, name));
        let serve = grid::fill(&self.serve, &lookup)
            .map_err(|n| unknown("--serve", &n))?
            .text;
        let mut args = Vec::new();
        for a in self.run_template() {
            args.push(grid::fill_arg(&a, &lookup).map_err(|e| match e {
                FillError::Unknown(n) => unknown(&a, &n),
                FillError::Arithmetic(why) => named(&why),
            })?);
        }
        let run = parse_run(&args).map_err(|why| named(&why))?;
        let h = &run.hosts;
        if h.shard.is_some() || h.shards.is_some() || h.start_at.is_some() || h.start_in.is_some() {
            return Err(named(
                "--shard, --shards, --start-at and --start-in split one run over several hosts; a tune runs on one",
            ));
        }
        let mut env: Vec<(String, String)> = values
            .0
            .iter()
            .map(|(n, v)| {
                (
                    format!("ENCBENCH_PARAM_{}", n.to_ascii_uppercase()),
                    v.clone(),
                )
            })
            .collect();
        if let Some(p) = port.filter(|_| self.picks_port()) {
            env.push(("ENCBENCH_PARAM_PORT".into(), p.to_string()));
        }
        Ok(Configuration {
            values: values.clone(),
            serve,
            env,
            run,
        })
    }

    /// Every configuration parsed (`{port}` a stand-in), and the flags shared by all
    /// given alike: checked while a tune settles, before anything runs.
    pub fn validate(&self) -> Result<(), String> {
        self.check()?;
        let mut first: Option<RunArgs> = None;
        for values in self.grid()? {
            let c = self.configuration(&values, Some(1))?;
            if let Some(f) = &first
                && (f.export != c.run.export
                    || f.report != c.run.report
                    || f.headless != c.run.headless
                    || f.fail_on.thresholds != c.run.fail_on.thresholds)
            {
                return Err(format!(
                    "error: tune {values}: --export, --report, --headless and --fail-on are one for every configuration"
                ));
            }
            first.get_or_insert(c.run);
        }
        Ok(())
    }
}

/// A run's flags parsed as `encbench-tui FLAGS` would be, its error in one line.
fn parse_run(args: &[String]) -> Result<RunArgs, String> {
    let all = std::iter::once("encbench-tui".to_string()).chain(args.iter().cloned());
    match super::parse(all) {
        Ok(cli) if cli.command.is_none() => Ok(cli.run),
        Ok(_) => Err("the run's flags name a subcommand: give only a run's flags".into()),
        Err((0, _)) => Err("--help and --version are not a run's flags here".into()),
        Err((_, text)) => Err(one_line(&text)),
    }
}

/// clap's report in one line: what is wrong, and its tip where it has one.
fn one_line(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines
        .next()
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ")
        .to_string();
    match lines.find(|l| l.starts_with("tip:")) {
        Some(tip) => format!("{first} ({tip})"),
        None => first,
    }
}

/// `tune`'s own flags first, then `--` and every other word: the run's flags may come
/// anywhere on the command line, and clap gives them to `TuneArgs::run` whole.
pub fn arrange(args: Vec<std::ffi::OsString>, own: &clap::Command) -> Vec<std::ffi::OsString> {
    let takes_value = |word: &str| -> Option<bool> {
        own.get_arguments().find_map(|a| {
            let long = a.get_long().map(|l| format!("--{l}"));
            let short = a.get_short().map(|s| format!("-{s}"));
            let name = word.split_once('=').map_or(word, |(n, _)| n);
            (long.as_deref() == Some(name) || short.as_deref() == Some(name))
                .then(|| a.get_action().takes_values() && !word.contains('='))
        })
    };
    let mut head: Vec<std::ffi::OsString> = args.iter().take(2).cloned().collect();
    let (mut mine, mut theirs) = (Vec::new(), Vec::new());
    let mut rest = args.into_iter().skip(2);
    while let Some(word) = rest.next() {
        let text = word.to_string_lossy().into_owned();
        if text == "--" {
            theirs.extend(rest.by_ref());
            break;
        }
        // tune's own help, not the run's: clap adds the flag after this looks.
        if text == "--help" || text == "-h" {
            mine.push(word);
            continue;
        }
        match takes_value(&text) {
            Some(value) => {
                mine.push(word);
                if value && let Some(v) = rest.next() {
                    mine.push(v);
                }
            }
            None => theirs.push(word),
        }
    }
    head.extend(mine);
    head.push("--".into());
    head.extend(theirs);
    head
}

#[cfg(test)]
mod tests {
    #[test]
    fn links_name_their_parameters_as_placeholders() {
        assert_eq!(
            super::link("concurrency=workers*2").unwrap(),
            ("concurrency".to_string(), "{workers}*2".to_string())
        );
        assert_eq!(
            super::link("--batch-size = threads").unwrap().1,
            "{threads}"
        );
        assert!(super::link("concurrency=8").is_err());
        assert!(super::link("concurrency").is_err());
        assert!(super::link("Conc!=w").is_err());
    }
}
