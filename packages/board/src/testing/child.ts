import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { toError } from "@bridgeworks/runtime";
import type { Board } from "../board.js";
import { BoardError } from "../errors.js";
import { type RemoteMethod, type RpcReady, type RpcRequest, type RpcResponse, remoteMethods } from "./rpc.js";

/**
 * Serves `board` to a test in another process: one JSON request per input line, one JSON response
 * per output line, requests handled concurrently. Closes the board when the input ends.
 */
export async function serveBoardOverStdio(board: Board, input: Readable, output: Writable): Promise<void> {
  const send = (message: RpcResponse | RpcReady) => output.write(`${JSON.stringify(message)}\n`);
  const pending = new Set<Promise<void>>();
  send({ ready: true, pid: process.pid });
  for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    if (line.trim() === "") continue;
    const request = JSON.parse(line) as RpcRequest;
    const handled = answer(board, request).then((response) => {
      send(response);
    });
    pending.add(handled);
    void handled.finally(() => pending.delete(handled));
  }
  await Promise.all(pending);
  await board.close();
}

async function answer(board: Board, request: RpcRequest): Promise<RpcResponse> {
  try {
    if (!isRemoteMethod(request.method)) throw new Error(`unknown method ${String(request.method)}`);
    const method = board[request.method] as (...args: unknown[]) => Promise<unknown>;
    return { id: request.id, result: await method.apply(board, request.args) };
  } catch (error) {
    if (error instanceof BoardError) return { id: request.id, refusal: error.toPayload() };
    const { name, message } = toError(error);
    return { id: request.id, failure: { name, message } };
  }
}

function isRemoteMethod(method: unknown): method is RemoteMethod {
  return (remoteMethods as readonly unknown[]).includes(method);
}
