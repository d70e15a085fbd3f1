use encbench::app::{self, Stdout};
use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match app::parse(std::env::args_os()) {
        Ok(cli) => cli,
        Err((0, text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Err((code, line)) => {
            eprintln!("{line}");
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
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let mut out = std::io::stdout();
    let mut stdout = Stdout {
        is_terminal: out.is_terminal(),
        writer: &mut out,
    };
    match runtime.block_on(app::main(cli, &mut stdout)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", e.line());
            ExitCode::from(e.exit_code())
        }
    }
}
