use encbench::app::{self, Stdout};
use encbench::cli;
use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
    install_panic_hook();
    let cli = match cli::parse(std::env::args_os()) {
        Ok(cli) => cli,
        Err((0, text)) => return exit(app::out(&mut std::io::stdout(), &text)),
        Err((code, line)) => {
            encbench::stderr::say(format_args!("{line}"));
            return ExitCode::from(code);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_start(encbench_wire::timing::tighten_timer_slack)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            encbench::stderr::say(format_args!("error: cannot start the async runtime: {e}"));
            return ExitCode::from(1);
        }
    };
    let mut out = std::io::stdout();
    let mut stdout = Stdout {
        is_terminal: out.is_terminal(),
        writer: &mut out,
    };
    // A panic on this thread (a front-end's own code) unwinds to here: still one line and
    // exit 1. One on another thread is found by the app through `failure`.
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runtime.block_on(app::main(cli, &mut stdout))
    }));
    exit(ran.unwrap_or_else(|_| {
        Err(app::AppError::Failed(
            encbench_core::failure::describe(None).unwrap_or_else(|| "internal failure".into()),
        ))
    }))
}

/// Replaces the default hook (a multi-line message and backtrace, printed over the live
/// screen where nobody can read it) with a record of the first panic: the run's export and
/// its one line on stderr say it once the terminal is restored.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        encbench_core::failure::record(format!("{}{at}", what.replace('\n', " ")));
    }));
}

fn exit(result: Result<(), app::AppError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if !e.is_quiet() {
                encbench::stderr::say(format_args!("{}", e.line()));
            }
            ExitCode::from(e.exit_code())
        }
    }
}
