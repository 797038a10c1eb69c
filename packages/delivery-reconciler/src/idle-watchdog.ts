import type { Clock } from "./clock.js";
import { streamIdleTimeoutMessage } from "./stall-message.js";

export interface StreamStall {
  /** The error text for Pi; it matches Pi's auto-retry pattern (see `streamIdleTimeoutMessage`). */
  readonly message: string;
  readonly timeoutMs: number;
  readonly idleMs: number;
}

export interface IdleWatchdogOptions {
  readonly clock: Clock;
  /** 0 turns the watchdog off. */
  readonly timeoutMs: number;
  /** True while silence from Claude is expected (a call is pending somewhere). */
  readonly isSuppressed: () => boolean;
  readonly onStall: (stall: StreamStall) => void;
}

/**
 * Fires once when Claude has been silent for `timeoutMs` during an active turn while nothing is
 * pending. Silence counts from the latest of: the last activity, the turn (re)start, and the moment
 * suppression ended, so the time a tool takes never eats into the model's own allowance.
 */
export class IdleWatchdog {
  private active = false;
  private fired = false;
  private monitoring = false;
  private idleSince = 0;
  private timer: unknown;

  constructor(private readonly options: IdleWatchdogOptions) {}

  /** A turn starts, or continues on a new Pi stream: silence counts from now. */
  restart(): void {
    this.active = true;
    this.fired = false;
    this.idleSince = this.options.clock.now();
    this.reevaluate();
  }

  stop(): void {
    this.active = false;
    this.reevaluate();
  }

  /** Any output from Claude. Cheap: it moves a timestamp and leaves the timer alone. */
  noteActivity(): void {
    this.idleSince = this.options.clock.now();
    this.fired = false;
    this.reevaluate();
  }

  /** Call after anything that may change `isSuppressed()`. */
  reevaluate(): void {
    const shouldMonitor =
      this.active && this.options.timeoutMs > 0 && !this.fired && !this.options.isSuppressed();
    if (shouldMonitor === this.monitoring) return;
    this.monitoring = shouldMonitor;
    if (shouldMonitor) {
      // Monitoring starts at a restart, after activity, or when the last pending call settled: in each
      // case the model's silence begins now.
      this.idleSince = this.options.clock.now();
      this.schedule(this.options.timeoutMs);
    } else {
      this.options.clock.clearTimeout(this.timer);
    }
  }

  dispose(): void {
    this.active = false;
    this.reevaluate();
  }

  private schedule(delayMs: number): void {
    this.timer = this.options.clock.setTimeout(() => this.onTimer(), delayMs);
  }

  private onTimer(): void {
    if (!this.monitoring) return;
    const idleMs = this.options.clock.now() - this.idleSince;
    if (idleMs < this.options.timeoutMs) {
      this.schedule(this.options.timeoutMs - idleMs);
      return;
    }
    this.fired = true;
    this.monitoring = false;
    this.options.onStall({
      message: streamIdleTimeoutMessage(this.options.timeoutMs),
      timeoutMs: this.options.timeoutMs,
      idleMs,
    });
  }
}
