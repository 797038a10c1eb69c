/**
 * The CLIs are the daemon's background work: under contention the daemon, which answers every page and
 * follower of every session, runs first, and the CLIs share the rest; an idle core is still theirs.
 * Its own module: the command table reads it without loading the daemon.
 */
export const defaultCliNice = 10;
