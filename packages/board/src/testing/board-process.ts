import type { ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import type { Board } from "../board.js";
import { BoardError } from "../errors.js";
import type { RemoteMethod, RpcReady, RpcRequest, RpcResponse } from "./rpc.js";

type Call<M extends RemoteMethod> = (...args: Parameters<Board[M]>) => ReturnType<Board[M]>;

/** A board served by another OS process (`serveBoardOverStdio`), driven from a test. */
export class BoardProcess {
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;
  readonly #waiting = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  #nextId = 1;

  private constructor(child: ChildProcess) {
    this.#child = child;
    this.#exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("exit", () => resolve());
    });
  }

  /** Waits for the process to open its board; refuses a process without piped stdin and stdout. */
  static async start(child: ChildProcess): Promise<BoardProcess> {
    const { stdin, stdout } = child;
    if (stdin === null || stdout === null) throw new Error("a board process needs piped stdin and stdout");
    // A write to a process that died surfaces as its exit, which fails every pending call.
    stdin.on("error", () => {});
    const remote = new BoardProcess(child);
    const lines = createInterface({ input: stdout, crlfDelay: Number.POSITIVE_INFINITY });
    const ready = new Promise<void>((resolve, reject) => {
      lines.once("line", (line) => {
        const message = JSON.parse(line) as RpcReady;
        if (message.ready === true) resolve();
        else reject(new Error(`board process ${child.pid} did not start: ${line}`));
        lines.on("line", (next) => remote.#settle(JSON.parse(next) as RpcResponse));
      });
      child.once("exit", (code, signal) => {
        reject(new Error(`board process ${child.pid} exited (${code ?? signal}) before it was ready`));
        remote.#failAll(new Error(`board process ${child.pid} exited (${code ?? signal})`));
      });
    });
    await ready;
    return remote;
  }

  get pid(): number {
    return this.#child.pid!;
  }

  call<M extends RemoteMethod>(method: M, ...args: Parameters<Call<M>>): ReturnType<Call<M>> {
    const id = this.#nextId++;
    const request: RpcRequest = { id, method, args };
    const answered = new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#child.stdin!.write(`${JSON.stringify(request)}\n`);
    });
    return answered as ReturnType<Call<M>>;
  }

  /** Ends the process by pid, whatever state it is in, and waits for it to be gone. */
  async kill(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      try {
        process.kill(this.pid, "SIGKILL");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
      }
    }
    await this.#exited;
  }

  #settle(response: RpcResponse): void {
    const waiter = this.#waiting.get(response.id);
    if (waiter === undefined) return;
    this.#waiting.delete(response.id);
    if ("result" in response) waiter.resolve(response.result);
    else if ("refusal" in response) waiter.reject(BoardError.fromPayload(response.refusal));
    else waiter.reject(Object.assign(new Error(response.failure.message), { name: response.failure.name }));
  }

  #failAll(error: Error): void {
    for (const waiter of this.#waiting.values()) waiter.reject(error);
    this.#waiting.clear();
  }
}
