use encbench::app::{self, Stdout};
use encbench::cli;
use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
    encbench::failure::install_hook();
    let cli = match cli::parse(std::env::args_os()) {
        Ok(cli) => cli,
        Err((0, text)) => return exit(app::out(&mut std::io::stdout(), &text)),
        Err((code, line)) => {
            encbench::failure::say(format_args!("{line}"));
            return ExitCode::from(code);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_start(encbench::timing::tighten_timer_slack)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            encbench::failure::say(format_args!("error: cannot start the async runtime: {e}"));
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
            encbench::failure::describe(None).unwrap_or_else(|| "internal failure".into()),
        ))
    }))
}

fn exit(result: Result<(), app::AppError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if !e.is_quiet() {
                encbench::failure::say(format_args!("{}", e.line()));
            }
            ExitCode::from(e.exit_code())
        }
    }
}
