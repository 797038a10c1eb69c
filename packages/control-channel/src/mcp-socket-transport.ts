import type { Socket } from "node:net";
import { toError } from "@bridgeworks/runtime";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

export interface SocketTransportOptions {
  /** Bytes already read from the socket (after the token line) that belong to the protocol. */
  initialData?: Buffer;
  /** Largest unterminated line accepted before the connection is dropped; the SDK's stdio default. */
  maxBufferSize?: number;
}

/**
 * An MCP SDK `Transport` over a connected `net.Socket`: newline-delimited JSON-RPC, the same framing
 * as stdio, so the stdio shim can relay bytes unchanged. Works for either side (server or client).
 * `onclose` fires exactly once, whether the peer went away, the socket failed or `close()` was called.
 */
export class SocketTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;

  readonly #socket: Socket;
  readonly #readBuffer: ReadBuffer;
  #pending: Buffer | undefined;
  #started = false;
  #closed = false;

  constructor(socket: Socket, options: SocketTransportOptions = {}) {
    this.#socket = socket;
    this.#readBuffer = new ReadBuffer({ maxBufferSize: options.maxBufferSize });
    this.#pending = options.initialData?.length ? options.initialData : undefined;
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error("SocketTransport already started");
    this.#started = true;
    const socket = this.#socket;
    socket.on("data", this.#onData);
    socket.on("error", this.#onError);
    socket.on("close", this.#onClose);
    if (socket.destroyed) {
      // Closed before anyone listened: report it once the caller has finished connecting.
      queueMicrotask(this.#onClose);
      return;
    }
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined) this.#onData(pending);
    socket.resume();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.#closed || this.#socket.destroyed || !this.#socket.writable) {
        reject(new Error("MCP socket is closed"));
        return;
      }
      this.#socket.write(serializeMessage(message), (error) => {
        if (error) reject(error);
        else resolve();
      });
    });
  }

  async close(): Promise<void> {
    this.#socket.destroy();
    this.#onClose();
  }

  readonly #onData = (chunk: Buffer): void => {
    try {
      this.#readBuffer.append(chunk);
    } catch (error) {
      // An unterminated line past the limit: the stream can no longer be framed.
      this.onerror?.(toError(error));
      void this.close();
      return;
    }
    while (!this.#closed) {
      let message: JSONRPCMessage | null;
      try {
        message = this.#readBuffer.readMessage();
      } catch (error) {
        // One bad line; the framing still holds, so carry on with the next.
        this.onerror?.(toError(error));
        continue;
      }
      if (message === null) break;
      this.onmessage?.(message);
    }
  };

  readonly #onError = (error: Error): void => {
    this.onerror?.(error);
  };

  readonly #onClose = (): void => {
    if (this.#closed) return;
    this.#closed = true;
    this.#readBuffer.clear();
    this.#socket.off("data", this.#onData);
    this.onclose?.();
  };
}
