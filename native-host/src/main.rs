//! Entry point of `kapture`: picks the face (native-messaging host when Chrome starts it,
//! else the command line), sets up logging to stderr, and hands over to the library.

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use native_host::cli::{Cli, Command};
use native_host::{doctor, extension, install, manual_pairing, native_messaging, pairing};

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("KAPTURE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // The WebSocket library traces whole frames (the `hello` token among them) and the MCP
    // library logs whole requests and answers at debug (typed passwords among them): they
    // stay above that, whatever KAPTURE_LOG asks for.
    let filter = ["tungstenite=debug", "tokio_tungstenite=debug", "rmcp=info"]
        .iter()
        .filter_map(|d| d.parse().ok())
        .fold(filter, |f, d| f.add_directive(d));
    // stdout carries MCP (or native messaging): logs go to stderr only.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("kapture: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<ExitCode> {
    let first = std::env::args().nth(1).unwrap_or_default();
    if native_messaging::is_native_messaging_call(&first) {
        // Chrome started us to ask which servers run; answer and exit.
        let id = extension::extension_id()?;
        native_messaging::serve(
            &first,
            &id,
            &pairing::runtime_dir(None)?,
            (
                native_messaging::launched_by_from_env(),
                native_messaging::browser_run(),
            ),
            &mut std::io::stdin().lock(),
            &mut std::io::stdout().lock(),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Install(args)) => {
            install::run(&args, &mut std::io::stdout().lock())?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Doctor(args)) => {
            let problems = doctor::run(&args, &mut std::io::stdout().lock())?;
            Ok(if problems == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Some(Command::Pair(args)) => {
            manual_pairing::run(&args, &mut std::io::stdout().lock())?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::PanelTools) => {
            use std::io::Write;
            std::io::stdout()
                .lock()
                .write_all(&native_host::panel_tools_json())?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Mcp(args)) => serve(*args),
        None => serve(cli.serve),
    }
}

fn serve(args: native_host::cli::ServeArgs) -> anyhow::Result<ExitCode> {
    init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(native_host::serve(args))?;
    Ok(ExitCode::SUCCESS)
}
