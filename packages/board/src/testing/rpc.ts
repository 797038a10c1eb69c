import type { BoardErrorPayload } from "@bridgeworks/protocol";
import type { Board } from "../board.js";

/** The board methods a test can call in another process (waits stay local: a signal does not travel). */
export const remoteMethods = [
  "post",
  "get",
  "list",
  "claim",
  "claimNext",
  "complete",
  "cancel",
  "requestApproval",
  "decide",
  "register",
  "renew",
  "expireLeases",
  "retire",
  "depart",
  "agents",
  "settings",
  "configure",
] as const satisfies readonly (keyof Board)[];
export type RemoteMethod = (typeof remoteMethods)[number];

export interface RpcRequest {
  id: number;
  method: RemoteMethod;
  args: unknown[];
}

export type RpcResponse =
  | { id: number; result: unknown }
  | { id: number; refusal: BoardErrorPayload }
  | { id: number; failure: { name: string; message: string } };

/** The first line a board process writes once its board is open. */
export interface RpcReady {
  ready: true;
  pid: number;
}
