fn main() -> std::process::ExitCode {
    pr_monitor::commands::main()
}
