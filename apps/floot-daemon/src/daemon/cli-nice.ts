/**
 * The CLIs run at the daemon's own priority unless `--cli-nice` lowers them: at nice 10 a CLI starved
 * on a loaded machine (issue 35). Measured on 2 cores beside 4 busy processes (BENCHMARKS.md,
 * cliNiceUnderLoad, 2026-12-07 05:39): a one-line turn of Claude Code 2.1.332 took 80 s (median) at
 * nice 10, 8.7 s at nice 0, 3.9 s for `claude -p` run directly.
 * Its own module: the command table reads it without loading the daemon.
 */
export const defaultCliNice = 0;
