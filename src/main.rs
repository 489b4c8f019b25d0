fn main() -> std::process::ExitCode {
    pr_monitor::app::main()
}
